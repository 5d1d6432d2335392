"""The shape the code keeps: no product function over 150 lines (lizard counts them), no front
reaching past the use-case layer, a README a newcomer can hold (at most 15 KB), and every
mechanism the guide describes in the registry."""

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, VENV_PYTHON

PRODUCT = ["src", "runtime", "include", "notebooks"]
LONGEST = 150


def lizard():
    tools = ROOT / ".tools-venv" / "bin" / "lizard"
    found = str(tools) if tools.exists() else shutil.which("lizard")
    if not found:
        if os.environ.get("XWARP_REQUIRE_BROWSER") == "1":  # the full suite installs it
            pytest.fail("lizard is not installed (scripts/test.sh installs it into .tools-venv)")
        pytest.skip("lizard is not installed here (scripts/test.sh installs it into .tools-venv)")
    return found


def test_no_product_function_is_over_150_lines():
    proc = subprocess.run([lizard(), "-l", "cpp", "-l", "python", "--csv", *PRODUCT], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.reader(proc.stdout.splitlines()))
    assert len(rows) > 500, f"lizard saw only {len(rows)} functions"
    # columns: NLOC, CCN, token, PARAM, length, location, file, function, long name, start, end
    long = [f"{r[6]}:{r[9]} {r[7]} ({r[4]} lines)" for r in rows if int(r[4]) > LONGEST]
    assert not long, "functions over 150 lines:\n" + "\n".join(long)


FRONT_DIRS = ("src/fronts/cli", "src/fronts/magics", "src/fronts/kernel", "src/fronts/ipython", "include/xwarp/fronts/magics",
              "include/xwarp/jobs/usecases", "include/xwarp/fronts/ipython", "include/xwarp/fronts/kernel")


def test_no_front_includes_the_engine_the_analysis_or_the_store():
    """The CLI, the magics, the kernel and the IPython bridge go through the use-case layer
    (jobs/usecases: use_cases.hpp, judging.hpp, history_jobs.hpp): none includes a runner, replay, fix,
    warm-up, analysis or run-store header, and the use-case headers themselves name the model's
    types only (the layers' include roots refuse it at compile time too; this names the file)."""
    fronts = [p for d in FRONT_DIRS for p in (ROOT / d).glob("*.[ch]pp")]
    assert len(fronts) > 30
    reaching = [f"{p.relative_to(ROOT)}: {m}" for p in fronts
                for m in re.findall(r'#include "(xwarp/(?:engine/runner|jobs/whatif|jobs/fix|jobs/warmup|analysis|store)/[^"]+)"',
                                    p.read_text())]
    assert not reaching, "\n".join(reaching)


def test_every_front_shows_a_result_through_its_view():
    """A result's text, page and data come from one view (render/view.hpp): the CLI writes its parts
    (--json, --html, -o, the terminal) and the magics show view_bundle(). A front that pairs a MIME
    type with a rendering, or calls a part's renderer itself, is wiring the formats by hand again."""
    by_hand = re.compile(r'"(?:text/(?:html|plain)|application/[^"]*)"|\b(?:html_page|write_html_page|render_(?:html|text|'
                         r'compare_html|compare_text|fix_text|whatif_text|budget_text|budget_html|warmup_text|trace|'
                         r'history_list|history_list_html|session_runs|session_runs_html|preformatted_html|'
                         r'provisional_html|doctor_text))\s*\(')
    fronts = [p for d in ("src/fronts/cli", "src/fronts/magics") for p in (ROOT / d).glob("*.[ch]pp")]
    assert len(fronts) > 20
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in fronts
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if by_hand.search(line) and not line.lstrip().startswith("//")]
    assert not found, "\n".join(found)


def test_the_use_cases_know_no_option_parser():
    """CLI11 is the fronts' (their option declarations live in fronts/options/): the use-case
    layer takes requests, whatever parsed them."""
    layer = list((ROOT / "include" / "xwarp" / "jobs" / "usecases").glob("*.hpp")) + list(
        (ROOT / "src" / "jobs" / "usecases").glob("*.[ch]pp"))
    assert layer
    parsing = [str(p.relative_to(ROOT)) for p in layer if re.search(r"#include [<\"](CLI/|xwarp/fronts/options/)", p.read_text())]
    assert not parsing, parsing


def test_one_place_maps_a_verdict_to_an_exit_code():
    """A comparison's exit code is set by the job that made it (jobs/usecases), never by a front."""
    users = sorted(str(p.relative_to(ROOT)) for d in ("src/fronts", "src/jobs/usecases")
                   for p in (ROOT / d).rglob("*.cpp") if "exit_code_for(" in p.read_text())
    assert users and all(u.startswith("src/jobs/usecases/") for u in users), users


# What a front may decide itself: its own usage and outputs, and what went wrong in its process.
FRONTS_OWN_EXIT_CODES = {"ok", "usage", "cannot_write", "io_error", "out_of_memory", "software", "interrupted"}


def test_every_exit_code_about_a_job_comes_from_the_jobs_one_map():
    """A job's verdict, failure or refusal (all samples failed, a warm-up not verified, a budget
    over, a report not permitted, bad input) is mapped to its exit code by the use-case layer's
    exit_codes.hpp and judging.cpp; a front names only its own (usage, an output it could not
    write, its process's errors)."""
    used = {}
    for p in (ROOT / "src" / "fronts").rglob("*.[ch]pp"):
        for name in re.findall(r"exit_code::(\w+)", re.sub(r"//[^\n]*", "", p.read_text())):
            used.setdefault(name, set()).add(str(p.relative_to(ROOT)))
    assert used, "no front returns an exit code"
    decided = {name: sorted(files) for name, files in used.items() if name not in FRONTS_OWN_EXIT_CODES}
    assert not decided, decided


SHIM = ROOT / "runtime" / "shim"
# What a process of the command that never imports Warp loads of the shim: the recorder and the
# import watchers. The hooks' modules come with `import warp`.
SHIM_AT_START = {"xwarp_shim", "xwarp_shim.state", "xwarp_shim.values", "xwarp_shim.places", "xwarp_shim.recorder",
                 "xwarp_shim.watcher", "xwarp_shim.attribution", "xwarp_shim.environ"}


def test_the_shim_is_a_package_of_one_module_per_job():
    """The recorder that runs inside the user's processes is a package (recorder, hooks, snapshot,
    test attribution, levers...), each module saying its job, none a file of several rooms."""
    assert sorted(p.name for p in SHIM.glob("*.py")) == ["sitecustomize.py"], "a shim module outside the package"
    modules = sorted((SHIM / "xwarp_shim").glob("*.py"))
    assert len(modules) >= 10
    for module in modules:
        text = module.read_text()
        assert len(text.splitlines()) <= 450, f"{module.name}: {len(text.splitlines())} lines"
        assert text.startswith('"""'), f"{module.name} does not say its job in a docstring"


def test_a_process_that_never_imports_warp_loads_no_hook_module(tmp_path):
    probe = "import sys; print(' '.join(sorted(m for m in sys.modules if m.startswith('xwarp_shim'))))"
    env = dict(os.environ, PYTHONPATH=str(SHIM), XWARP_RECORD_DIR=str(tmp_path))
    env.pop("XWARP_WHATIF", None)
    loaded = subprocess.run([str(VENV_PYTHON), "-c", probe], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert set(loaded.stdout.split()) == SHIM_AT_START, loaded.stdout
    assert not list(tmp_path.iterdir()), "a process without Warp left a record"
    # with Warp, the hooks are installed (the record says which held)
    with_warp = subprocess.run([str(VENV_PYTHON), "-c", "import warp; " + probe], env=env, capture_output=True,
                               text=True, timeout=300, check=True)
    assert {"xwarp_shim.install", "xwarp_shim.loads", "xwarp_shim.launches"} <= set(with_warp.stdout.split()), with_warp.stdout
    records = [json.loads(line) for f in tmp_path.glob("proc-*.jsonl") for line in f.read_text().splitlines()]
    hooks = next(r["hooks"] for r in records if r["type"] == "warp")
    assert hooks.get("module_load") and hooks.get("launch"), hooks


def test_history_is_the_users_word_and_the_store_and_the_series_have_names_of_their_own():
    """"history" names what the user asks for (the history subcommand, %warp_history, --history
    and what they list); the SQLite store is the run store and what a report shows of its series
    is a run_series. The old names, each of which meant one more thing, are gone from the code."""
    code = [p for d in PRODUCT + ["tests/unit"] for p in (ROOT / d).rglob("*.[ch]pp")]
    assert len(code) > 100
    old = re.compile(r"\b(history_store|history_view|history_error|history_location|locate_history|history_for)\b")
    reused = [f"{p.relative_to(ROOT)}: {m}" for p in code for m in old.findall(p.read_text())]
    assert not reused, "\n".join(reused)
    assert not (ROOT / "src" / "history").exists() and not (ROOT / "include" / "xwarp" / "history").exists()
    assert (ROOT / "include" / "xwarp" / "store" / "run_store.hpp").is_file()


# Words compared as words, each at the edge where a record's data is read: the tags of a factory's
# arguments as the shim wrote them (warm-up plan), the native compiler a load's record names, and
# the Warp function a cache-destroying call record names.
WORDS_AT_THE_DATA_EDGE = {
    "src/analysis/warmup_plan.cpp": {"kind"},
    "src/analysis/mechanisms/cs12_precompiled_header.cpp": {"native_kind"},
    "src/analysis/levers/pch_off.cpp": {"native_kind"},
    "src/analysis/mechanisms/same_hash_rebuilt.cpp": {"kind"},
}


def test_closed_sets_are_types_and_no_kind_or_metric_is_compared_as_a_word():
    """Finding, rebuild, hash-change, span, limit and stored-run kinds and budget metrics are
    enums or registries: a comparison of a kind or a metric with a string literal is a closed set
    kept as text again (only the data edges above read words)."""
    code = [p for d in PRODUCT for p in (ROOT / d).rglob("*.[ch]pp")]
    found = {}
    for p in code:
        for name in re.findall(r"\b(\w*(?:kind|metric))\s*[!=]=\s*\"", p.read_text()):
            found.setdefault(str(p.relative_to(ROOT)), set()).add(name)
    assert found == WORDS_AT_THE_DATA_EDGE, found


# The files that read input data: the shim's records, a report or a store's JSON, the tags of a
# factory's arguments. Only there is a word of the product's own sets read as a word.
READERS_OF_INPUT = {
    "src/engine/runner/records.cpp", "src/model/record_events.cpp", "src/model/json_io.cpp",
    "src/model/report_schema.cpp", "src/analysis/warmup_plan.cpp",
    "src/engine/os/run_containment.cpp",  # the kernel's mount table (a "cgroup" line is the kernel's word)
}


def product_words():
    """Every word of a closed set the product defines: the enums' words (enum_words<...> in the
    model), the report contract's enums, the mechanisms' ids and the levers' names."""
    words = set()
    for header in (ROOT / "include" / "xwarp").rglob("*.hpp"):
        for listed in re.findall(r"\bwords\s*\{([^}]*)\}", header.read_text()):
            words |= set(re.findall(r'"([^"]+)"', listed))
    def enums(node):
        if isinstance(node, dict):
            yield from node.get("enum", [])
            for v in node.values():
                yield from enums(v)
        elif isinstance(node, list):
            for v in node:
                yield from enums(v)
    words |= {w for w in enums(json.loads((ROOT / "contracts" / "report.schema.json").read_text())) if isinstance(w, str)}
    shim_inputs = json.loads((ROOT / "contracts" / "shim_inputs.schema.json").read_text())
    words |= {d["properties"]["lever"]["const"] for name, d in shim_inputs["$defs"].items() if name.startswith("lever_")}
    registry = json.loads(subprocess.run([str(PROBE), "mechanisms", "--json"], capture_output=True, text=True,
                                         check=True).stdout)["mechanisms"]
    words |= {m["id"] for m in registry}
    return words - {""}


def test_no_product_value_is_compared_with_a_word_outside_the_readers_of_input():
    """A verdict, a clock, a load's status or source, a containment, a phase, a series, a format,
    a mechanism or a lever is a type in the code: a comparison with one of their words (`x ==
    "cold"`, `source != "hook"`, `lever == "xdist-workers"`) is that set kept as text again. Words
    are read only where input data is read (READERS_OF_INPUT) and written by the renderers."""
    words = product_words()
    for expected in ("cold_module_cpu_ms", "compiled", "hook", "pid-namespace", "CS-3", "xdist-workers", "compile"):
        assert expected in words, expected
    code = [p for d in ("src", "include") for p in (ROOT / d).rglob("*.[ch]pp")]
    compared = re.compile(r'(?:[!=]=\s*"([^"\\]*)")|(?:"([^"\\]*)"\s*[!=]=)')
    found = []
    for p in code:
        rel = p.relative_to(ROOT).as_posix()
        if rel in READERS_OF_INPUT:
            continue
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if line.lstrip().startswith("//"):
                continue
            for a, b in compared.findall(line):
                if (a or b) in words:
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_the_readme_is_at_most_15_kb():
    size = (ROOT / "README.md").stat().st_size
    assert size <= 15 * 1024, f"README.md is {size} bytes"


def test_every_mechanism_the_guide_describes_is_in_the_registry():
    registry = json.loads(subprocess.run([str(PROBE), "mechanisms", "--json"], capture_output=True, text=True,
                                         check=True).stdout)["mechanisms"]
    guide = (ROOT / "references" / "mechanisms.md").read_text()
    sections = set(re.findall(r"^## (\S+)$", guide, re.M))
    assert sections == {m["guide"] for m in registry}, sections ^ {m["guide"] for m in registry}


def test_the_cheat_sheet_has_one_row_per_mechanism_and_its_lever():
    registry = json.loads(subprocess.run([str(PROBE), "mechanisms", "--json"], capture_output=True, text=True,
                                         check=True).stdout)["mechanisms"]
    rows = {}
    for line in (ROOT / "references" / "cheatsheet.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and cells[0] not in ("mechanism", "---"):
            rows[cells[0]] = cells
    assert set(rows) == {m["id"] for m in registry}, set(rows) ^ {m["id"] for m in registry}
    for m in registry:
        lever = rows[m["id"]][3]
        assert lever == (f"`{m['lever']}`" if m.get("lever") else "—"), (m["id"], lever, m.get("lever"))


def test_the_glossary_defines_each_term_the_lessons_rely_on_and_every_lesson_links_it():
    import json

    glossary = (ROOT / "notebooks" / "glossary.md").read_text()
    defined = {m.lower() for m in re.findall(r"^\*\*([^*]+)\*\* —", glossary, re.M)}
    for term in ("lever", "shim", "noise band", "rank test", "adjoint", "precompiled header", "nvrtc", "lto", "mathdx",
                 "block_dim", "generic instance", "identity", "module", "kernel cache", "warm-up"):
        assert term in defined, f"the glossary does not define {term}"
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        assert "(glossary.md)" in "".join(cells[0]["source"]), f"{nb.name} does not link the glossary at its top"


def test_every_budget_metric_is_one_file_listed_once_and_named_in_the_cli_guide():
    folder = ROOT / "src" / "analysis" / "budget_metrics"
    defined = {}
    for f in folder.glob("*.cpp"):
        for name in re.findall(r'extern const budget_metric (\w+)\{\s*"([^"]+)"', f.read_text()):
            defined[name[0]] = name[1]
    registry = (folder / "metric.cpp").read_text()
    listed = re.findall(r"&(\w+_metric)", registry)
    assert sorted(listed) == sorted(defined), (listed, defined)
    checked = subprocess.run([str(PROBE), "check", "--help"], capture_output=True, text=True).stdout
    guide = (ROOT / "references" / "cli.md").read_text()
    for metric in defined.values():
        assert metric in checked, f"check --help does not name {metric}"
        assert f"`{metric}`" in guide, f"references/cli.md does not name {metric}"


def test_each_source_opens_with_its_own_header_and_each_header_has_its_source_of_the_same_name():
    """A reader (or farm-studio) finds a header's source by its name: a source that opens with a
    public header is named as it is (`levers.hpp` <- `levers.cpp`, `html.hpp` <-
    `html_report.cpp`), and a registry sits beside its folder under the header's name. (A
    plugin file of a folder opens with the folder's own internal header, and an entry point,
    main.cpp or module.cpp, with what it starts.)"""
    sources = [p for p in (ROOT / "src").rglob("*.cpp") if "fuzz" not in p.parts and p.name not in ("main.cpp", "module.cpp")]
    wrong = []
    implemented = set()
    for src in sources:
        first = re.search(r'^#include "([^"]+)"', src.read_text(), re.M)
        if not first or not first.group(1).startswith("xwarp/"):
            continue  # opens with a folder's internal header, or a library's
        opening = first.group(1)
        stem = Path(opening).stem
        implemented.add(opening)
        if src.stem != stem and not src.stem.startswith(stem + "_"):
            wrong.append(f"{src.relative_to(ROOT)} opens with {opening}")
    assert not wrong, "\n".join(wrong)
    for header in ("xwarp/analysis/mechanisms.hpp", "xwarp/analysis/levers.hpp", "xwarp/fronts/magics/magics.hpp",
                   "xwarp/jobs/usecases/judging.hpp", "xwarp/jobs/usecases/history_jobs.hpp", "xwarp/render/history_text.hpp",
                   "xwarp/analysis/analyze.hpp", "xwarp/model/json_io.hpp", "xwarp/store/run_store.hpp"):
        assert header in implemented, f"no source opens with {header}"


def test_the_folders_are_the_layers_and_the_guide_draws_them_from_the_build():
    """Each layer the build declares is one folder, at the same path under src/ and include/xwarp/
    (a newcomer finds a lever's folder from the layer's name); no source lies outside a layer;
    the Python that runs in the user's process is under runtime/, the contracts under contracts/;
    and architecture.md's layer diagram is the one scripts/layers.py draws from CMakeLists.txt."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("xwarp_layers", ROOT / "scripts" / "layers.py")
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    declared = layers.layers()
    folders = [folder for folder, _, _ in declared if folder != "base"]
    assert len(folders) >= 18 and len(set(folders)) == len(folders), folders
    for folder in folders:
        assert (ROOT / "src" / folder).is_dir(), f"src/{folder} is not a folder"
        headers = ROOT / "include" / "xwarp" / folder
        if folder not in ("fronts/cli",):  # the CLI is an executable: nothing includes it
            assert headers.is_dir() and list(headers.glob("*.hpp")), f"include/xwarp/{folder} holds no header"
    # every header folder is a layer's, and every source file lies in a layer's folder
    header_folders = {str(p.parent.relative_to(ROOT / "include" / "xwarp")) for p in (ROOT / "include" / "xwarp").rglob("*.hpp")}
    assert header_folders - {"."} <= set(folders), header_folders - set(folders)
    outside = [str(p.relative_to(ROOT)) for p in (ROOT / "src").rglob("*.[ch]pp")
               if p.parent != ROOT / "src" and not any(p.relative_to(ROOT / "src").as_posix().startswith(f + "/")
                                                         for f in folders)]
    assert not outside, outside
    assert not any((ROOT / old).exists() for old in ("probe", "fronts", "front_options", "cli", "magics", "kernel",
                                                     "ipython", "doctor", "python"))
    assert (ROOT / "runtime" / "shim" / "xwarp_shim" / "recorder.py").is_file()
    assert (ROOT / "runtime" / "warmup" / "warmup_body.py").is_file()
    assert (ROOT / "runtime" / "fixer" / "xwarp_fix.py").is_file()
    assert sorted(p.name for p in (ROOT / "contracts").glob("*.json")) == [
        "fixer_protocol.schema.json", "recorded_run.schema.json", "report.schema.json", "shim_inputs.schema.json",
        "shim_records.schema.json", "warmup_targets.schema.json"]
    guide = (ROOT / "references" / "architecture.md").read_text()
    drawn = guide.split(layers.BEGIN, 1)[1].split(layers.END, 1)[0].strip().strip("`").strip()
    assert drawn == layers.diagram(declared), "architecture.md's layer diagram is not the build's: run scripts/layers.py --write"
    # a layer below never links one above it: the diagram is drawn bottom up
    order = [folder for folder, _, _ in declared]
    by_target = {target: folder for folder, target, _ in declared}
    upward = [f"{folder} links {by_target[l]}" for folder, _, links in declared for l in links
              if l in by_target and order.index(by_target[l]) > order.index(folder)]
    assert not upward, upward
