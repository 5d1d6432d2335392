"""fix and warmup on a program shaped like real Warp code (CPU, real Warp): a package in a src
layout run as `python -m particle_prep`, whose `__init__.py` re-exports it, whose stage kernels
come from a factory wrapped by a caching decorator with a hidden module="unique" default, each
made just before its own launch, every launch going through a `self._launch` helper; a
plugin's module="unique" kernel made in a loop (it must stay unique); a factory of a generic
kernel (its instance made at the launch, as Newton's narrow phase is); and a factory defined
inside another function, which no file can call.

What the run recorded locates the edits: the launch through the helper counts as a launch in
the caller's block (CS-9's hoist), the entry the interpreter ran is the package's
`__main__.py` (entry-point edits); CS-9's fix moves the stage kernels and says why the
plugin's stays. The warm-up re-creates every factory-made kernel it can reach by calling the
factory with the recorded arguments, registers the factory-made generic kernel's instance by
its key, names the rest, and the file finds the package from any folder: the primed program
builds only what the file named."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, TARGETS, VENV_PYTHON

# one pytest-xdist worker for this file: its module fixtures are made once (conftest.ONE_WORKER)
pytestmark = pytest.mark.xdist_group("test_real_shapes")

PACKAGE = TARGETS / "particle_pkg"
MAIN = "src/particle_prep/__main__.py"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One measured run of the package from a copy of it (the program's own folder is never
    written), shared by the tests below: what the run recorded, and how to fix and warm it up."""
    tmp_path = tmp_path_factory.mktemp("real-shapes")
    folder = tmp_path / "project"
    shutil.copytree(PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    tmp = tmp_path / "probe-tmp"
    tmp.mkdir()
    # a src layout as a developer runs it: the package imports from src/ (relative: the copy
    # fix --verify measures imports its own patched src/, not this one)
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH="src")
    report = tmp_path / "particle_prep.json"
    proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(report), "--cwd", str(folder),
                           "--", str(VENV_PYTHON), "-m", "particle_prep"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]

    class Measured:
        path = folder
        temp = tmp
        data = json.loads(report.read_text())

        def probe(self, *args, timeout=900):
            return subprocess.run([str(PROBE), *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                                  timeout=timeout)

    Measured.report = report
    Measured.tmp_path = tmp_path
    return Measured()


def calls(data, function):
    return [c for p in data["samples"][0]["cold"]["processes"] for c in p["calls"] if c["function"] == function]


def test_the_run_records_the_entry_the_launch_stacks_and_the_factory_calls(measured):
    entry = calls(measured.data, "entry")
    assert entry and entry[-1]["args"]["file"] == str(measured.path / MAIN), entry
    assert entry[-1]["args"]["module"] == "particle_prep.__main__"
    assert entry[-1]["args"]["root"] == str(measured.path / "src")
    # each first launch's stack runs through the helper to the statement in run() that called it
    pipeline = str(measured.path / "src/particle_prep/pipeline.py")
    lines = (measured.path / "src/particle_prep/pipeline.py").read_text().splitlines()
    for launch in calls(measured.data, "launch"):
        if launch["args"]["module"].startswith("particle_prep.measures"):
            continue  # measure() launches directly
        frames = [(f, n, fn) for f, n, fn in launch["args"]["stack"]]
        assert frames[0][0] == pipeline and frames[0][2] == "_launch", frames
        assert frames[1][2] == "run" and "self._launch(" in lines[frames[1][1] - 1], frames
    # every stage kernel carries the factory call that made it, with plain arguments
    loads = [l for l in measured.data["samples"][0]["cold"]["module_loads"] if l["status"] == "compiled"]
    stages = [l for l in loads if l["module"].startswith("make_stage")]
    made = [[a[2] for a in k["factory"]["args"]] for l in stages for k in l["snapshot"]["kernels"]]
    assert len(stages) == 3 and all(l["snapshot"]["kernels"][0]["factory"]["qualname"] == "make_stage" for l in stages)
    assert made == [[{"float": "1.0"}, {"float": "0.99"}, {"lit": 8}, {"lit": "unique"}],
                    [{"float": "2.0"}, {"float": "0.5"}, {"lit": 8}, {"lit": "unique"}],
                    [{"float": "0.5"}, {"float": "0.9"}, {"lit": 4}, {"lit": "unique"}]]
    # the plugin's kernel, and the measures module in two forms (the generic kernel's instance,
    # then the family's kernel joined it)
    assert [l["module"].split("_")[0] for l in loads[3:]] == ["Plugin", "particle", "particle"], [l["module"] for l in loads]


def test_fix_hoists_the_factory_calls_past_the_helper_launch_and_writes_the_entry_edit_in_main(measured):
    out = measured.tmp_path / "fix.json"
    proc = measured.probe("fix", str(measured.report), "-q", "--json", str(out), "--verify", "--samples", "2",
                          "--finding", "CS-9", "--out", str(measured.tmp_path / "patches"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (f,) = [f for f in json.loads(out.read_text())["fixes"] if f["mechanism"] == "CS-9"]
    # the stage kernels move into one module and the patch verifies; the plugin's kernel, made in
    # a loop, cannot move before the first launch: it stays unique, and the note says why
    # fewer modules for the same launches: counted, so the verdict stands whatever the clock's noise
    assert f["verdict"] == "verified" and f["cold_builds_after"] < f["cold_builds_before"], f
    assert f["files"] == ["src/particle_prep/pipeline.py", "src/particle_prep/stages.py"], f
    assert 'module="stages_kernels"' in f["patch"] and "plugins.py" not in f["patch"]
    moved = [line for line in f["patch"].splitlines() if line.startswith("+") and " = make_stage(" in line]
    assert len(moved) == 2, f["patch"]  # spread and relax, before the helper's first launch
    assert "util.py" not in f["patch"]  # the caching wrapper's own call is not what moves
    stays = [n for n in f["notes"] if "stay(s) module=\"unique\"" in n]
    assert stays and "Plugin__make_kernel__locals__bias" in stays[0] and "cannot move before the first launch" in stays[0], f
    # the patch keeps the file's style: a moved statement sits among the others, no blank line lost
    assert "\n-\n" not in f["patch"], f["patch"]

    # CS-10's lever sets enable_backward at the entry the interpreter ran: -m's __main__.py
    out = measured.tmp_path / "fix-entry.json"
    proc = measured.probe("fix", str(measured.report), "-q", "--json", str(out), "--lever", "backward-off")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (f,) = json.loads(out.read_text())["fixes"]
    assert f["verdict"] == "not-verified" and f["files"] == [MAIN], f
    assert "+wp.config.enable_backward = False" in f["patch"] and "+import warp as wp" in f["patch"], f["patch"]
    # before the first import of the program's own package, as a block of its own
    added = [l for l in f["patch"].splitlines() if l.startswith("+") and not l.startswith("+++")]
    assert added[0] == "+" and added[1] == "+import warp as wp" and added[-1] == "+", f["patch"]
    assert f["patch"].index("+wp.config.enable_backward") < f["patch"].index(" from particle_prep import Pipeline"), f["patch"]
    assert not list(measured.temp.iterdir()), "the probe left temporary files behind"


def test_the_warmup_recreates_what_it_can_names_the_rest_and_finds_the_package_from_anywhere(measured, venv_python):
    out = measured.tmp_path / "warmup.json"
    script = measured.tmp_path / "warp_warmup.py"
    proc = measured.probe("warmup", str(measured.report), "-q", "-o", str(script), "--json", str(out), "--verify",
                          "--samples", "1", "--workers", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads(out.read_text())
    by_module = {}
    for t in plan["targets"]:
        by_module.setdefault(t["module"].split("_")[0], []).append(t)
    # three stages and the generic kernel's first form, from their factories; the plugin's kernel
    # (a method of an object) and the measures module's second form (the family's factory lives
    # inside another function) are named, with their cost
    assert plan["covered"] == 4 and plan["uncovered"] == 2, proc.stdout
    assert all(t["covered"] and [c["qualname"] for c in t["factories"]] == ["make_stage"] for t in by_module["make"])
    first, second = by_module["particle"]
    assert first["covered"] and [c["qualname"] for c in first["factories"]] == ["make_norm"], first
    assert first["overloads"] and first["overloads"][0]["kernel"] == "" and first["overloads"][0]["key"], first
    assert not second["covered"] and "cannot call by name" in second["why_not"], second
    (plugin,) = by_module["Plugin"]
    assert not plugin["covered"] and "Plugin object" in plugin["why_not"], plugin
    assert plan["entry_script"] == "particle_prep/__main__.py" and plan["import_root"] == str(measured.path / "src")
    assert plan["left_estimate_ms"] >= second["build_ms"] + plugin["build_ms"] - 1
    # coverage is what the file did and what the program then built: the file built its four as
    # measured, and the program built exactly the two it named
    check = plan["check"]
    assert check["verdict"] == "verified" and check["results_read"] and check["file_built"] == 4, proc.stdout
    assert check["file_failed"] == [] and check["covered_built"] == [] and check["new_built"] == []
    assert sorted(b.split(" ")[0] for b in check["uncovered_built"]) == sorted([plugin["module"], second["module"]])
    assert check["covered_measured"] == 4 and "covers 4 of 6 identities, measured" in proc.stdout, proc.stdout
    # the factory is reached by the name its package exports (the caching decorator included),
    # and its arguments travel as data
    text = script.with_suffix(".json").read_text()  # the plan beside the runtime
    assert '"args":[["gain","pos",{"float":"2.0"}],["damping","pos",{"float":"0.5"}],["steps","pos",{"lit":8}],' \
        '["module","pos",{"lit":"unique"}]],"module":"particle_prep.stages","qualname":"make_stage"}' in text

    # the file as printed, from another folder with nothing on PYTHONPATH: it finds src/ from the
    # project it sits in, builds what it covers, exits 0 (what it cannot build is named, not an error)
    shutil.copy2(script, measured.path / "warp_warmup.py")
    shutil.copy2(script.with_suffix(".json"), measured.path / "warp_warmup.json")  # the runtime's plan travels with it
    cache = measured.tmp_path / "bare-cache"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XWARP_RECORD_DIR")}
    env.update(WARP_CACHE_PATH=str(cache), PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(measured.temp))
    bare = subprocess.run([str(venv_python), str(measured.path / "warp_warmup.py"), "--results", str(measured.tmp_path / "r.json")],
                          cwd=measured.tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert bare.returncode == 0, bare.stdout + bare.stderr
    assert "built 4 of 4 module identities as measured" in bare.stdout, bare.stdout
    results = json.loads((measured.tmp_path / "r.json").read_text())
    assert results["root"] == str(measured.path / "src") and results["failed"] == []
    program = subprocess.run([str(venv_python), "-m", "particle_prep"], cwd=measured.path, env=dict(env, PYTHONPATH="src"),
                             capture_output=True, text=True, timeout=600)
    assert program.returncode == 0, program.stderr[-2000:]
    built = re.findall(r"^Module (\S+) \w+ load on device .* \(compiled\)", program.stdout, re.M)
    assert sorted(built) == sorted([plugin["module"], second["module"]]), program.stdout
    (measured.path / "warp_warmup.py").unlink()
    (measured.path / "warp_warmup.json").unlink()
    shutil.rmtree(cache)
    shutil.rmtree(measured.temp)
    measured.temp.mkdir()
