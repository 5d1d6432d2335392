"""A warm-up file is code its user runs, made from a report that may come from anyone: a property
test. A corpus of hostile notebook cells (every way a top-level statement of a cell can run code:
annotated assignments, decorators, defaults and annotations of a def, class bodies, calls reached
through wp., wp.init(...), an operator a metaclass defines, launches and allocations) and of
hostile reports (factories, references and struct types naming the standard library, a module of
the interpreter's own, names that are not names) goes through warp-probe warmup with the user's
consent (--run), and each file it writes runs under a Python audit hook in every one of its
processes (tests/python/audit_hook/sitecustomize.py) that blocks and logs any process, socket,
file write or exec other than the file's own workers and Warp's cache. Nothing may be logged,
no marker file may appear, the benign kernel beside the hostile lines still builds, and the
file exits 0. The magics write the same file as the CLI, and none writes one without consent."""

import json
import os
import shutil
import subprocess
import time
import sys
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, VENV_PYTHON

# one pytest-xdist worker for this file: its module fixture is made once (conftest.ONE_WORKER)
pytestmark = pytest.mark.xdist_group("test_warmup_hostile")

HOOK = Path(__file__).resolve().parent / "audit_hook"

APP = '''import warp as wp

from helpers import make_scale


@wp.kernel
def k(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


a = wp.zeros(4, dtype=float)
wp.launch(k, dim=4, inputs=[a])
wp.launch(make_scale(2.0), dim=4, inputs=[a])
print("ok", float(a.numpy()[0]))
'''

HELPERS = '''import warp as wp


def make_scale(s: float):
    @wp.kernel(module="unique")
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * s

    return scale
'''


def hostile_cell(marker):
    """Every form that ran code through the old definitions filter, and more, each touching its own
    marker file if it runs."""
    m = lambda n: f'"touch {marker}-{n}"'  # noqa: E731
    return "\n".join([
        "import warp as wp",
        "import subprocess",
        "from os import system as _sys",
        f"subprocess.run({m('subprocess')}, shell=True)",
        f"_sys({m('from-import')})",
        f"x: __import__('os').system({m('annassign')}) = 1",
        f"y: int = __import__('os').system({m('annassign-value')})",
        f"@(lambda f: (__import__('os').system({m('decorator')}), f)[1])",
        "@wp.func",
        "def f1(a: float):",
        "    return a",
        f"def helper(a=__import__('os').system({m('default')})):",
        "    return a",
        f"def helper2(a: __import__('os').system({m('annotation')})):",
        "    return a",
        f"def helper3(a=(b := __import__('os').system({m('walrus')}))):",
        "    return a",
        "@wp.struct",
        "class S:",
        "    x: float",
        f"    __import__('os').system({m('struct-body')})",
        "class C:",
        f"    __import__('os').system({m('class-body')})",
        f"wp._src.context.os.system({m('through-wp')})",
        f"Y = wp._src.context.os.system({m('through-wp-assign')})",
        f"wp.init(__import__('os').system({m('init-arg')}))",
        "class M(type):",
        "    def __add__(c, o):",
        f"        return __import__('os').system({m('metaclass')})",
        "class C2(metaclass=M):",
        "    pass",
        "Z = C2 + 1",
        f"exec(\"__import__('os').system('touch {marker}-exec')\")",
        f"N = int(__import__('os').system({m('int-call')}))",
        f"@wp.kernel(module=__import__('os').system({m('decorator-kwarg')}))",
        "def k2(a: wp.array(dtype=float)):",
        "    a[0] = 1.0",
        f"if True:\n    __import__('os').system({m('if-block')})",
        f"W = wp.constant(__import__('os').system({m('constant-arg')}))",
        "big = wp.zeros(50_000_000)",
        "_ = wp.launch(k, dim=1, inputs=[wp.zeros(1)])",
        "",
        "@wp.kernel",
        "def k(a: wp.array(dtype=float)):",
        "    a[wp.tid()] = a[wp.tid()] + 1.0",
        "",
    ])


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("hostile")
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(APP)
    (project / "helpers.py").write_text(HELPERS)
    temp = tmp_path / "probe-tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp), XWARP_HISTORY=str(tmp_path / "history.sqlite3"))
    report = tmp_path / "app.json"
    done = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(report), "--cwd", str(project),
                           "--", str(VENV_PYTHON), "app.py"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    class Measured:
        path = project
        root = tmp_path
        data = json.loads(report.read_text())

        def probe(self, *args):
            return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, env=env, cwd=tmp_path,
                                  timeout=600)

    Measured.temp = temp
    return Measured()


def run_audited(script, measured, venv_python, tag, trust=False, extra=()):
    """Runs the file as a user's build step would on this machine (the suite's ledger of the plans
    warp-probe wrote is where the file looks), every process of it under the audit hook; `trust`:
    with --trust-plan (an edited plan, to reach the file's own checks behind the ledger's)."""
    log = measured.root / f"audit-{tag}.log"
    cache = measured.root / f"cache-{tag}"
    work = measured.root / f"tmp-{tag}"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XWARP_") or k == "XWARP_PLAN_LEDGER"}
    env.update(PYTHONPATH=str(HOOK), WARP_CACHE_PATH=str(cache), TMPDIR=str(work), PYTHONDONTWRITEBYTECODE="1",
               XWARP_AUDIT_LOG=str(log), XWARP_AUDIT_FILE=str(script),
               XWARP_AUDIT_WRITABLE=os.pathsep.join([str(cache), str(work), str(measured.root / f"results-{tag}.json")]))
    done = subprocess.run([str(venv_python), str(script), *(["--trust-plan"] if trust else []), *extra,
                           "--results", str(measured.root / f"results-{tag}.json")],
                          cwd=measured.root, env=env, capture_output=True, text=True, timeout=600)
    logged = log.read_text() if log.exists() else ""
    return done, logged


def refused_as_edited(script, measured, venv_python, tag, shown):
    """An edited plan is not one warp-probe wrote here: the file shows what it would do (`shown`
    among it), imports and builds nothing, writes nothing, and exits 3."""
    ran, logged = run_audited(script, measured, venv_python, tag)
    assert ran.returncode == 3 and logged == "", ran.stdout + ran.stderr + logged
    assert "was not written by warp-probe on this machine" in ran.stdout and shown in ran.stdout, ran.stdout
    assert "--trust-plan=" in ran.stderr and "Traceback" not in ran.stderr, ran.stderr
    assert not (measured.root / f"results-{tag}.json").exists() and not (measured.root / f"cache-{tag}").exists()
    assert markers(measured) == []


def markers(measured):
    return sorted(p.name for p in measured.root.rglob("PWNED*"))


def test_a_hostile_cells_warmup_file_runs_no_statement_but_its_warp_definitions(measured, venv_python):
    report = json.loads(json.dumps(measured.data))
    marker = measured.root / "PWNED"
    report["cell_code"] = hostile_cell(marker)
    report["command"] = ["python", "<cell>"]
    hostile = measured.root / "cell.json"
    hostile.write_text(json.dumps(report))
    script = measured.root / "cell_warmup.py"
    done = measured.probe("warmup", hostile, "--run", "-q", "-o", script)
    assert done.returncode == 0, done.stdout + done.stderr
    ran, logged = run_audited(script, measured, venv_python, "cell")
    assert logged == "", logged
    assert markers(measured) == []
    assert ran.returncode == 0, ran.stdout + ran.stderr
    # the cell's kernel k, beside the hostile lines, is still built from its definition
    results = json.loads((measured.root / "results-cell.json").read_text())
    main = [o for o in results["outcomes"] if o["warp_module"] == "__main__"]
    assert main and all(o["built"] for o in main), results
    # and the filter names what it left out (the first few lines), not silently
    assert "left out line" in ran.stderr


def test_the_filter_refuses_each_hostile_statement_on_its_own():
    """Each form, alone, through the file's own filter: none of them is a definition it runs."""
    import ast

    import types

    body = (ROOT / "runtime" / "warmup" / "warmup_body.py").read_text()
    space = {"__name__": "warmup_under_test", "__builtins__": __builtins__}
    no_warp = "warp" not in sys.modules  # the runtime imports Warp; its filter does not use it
    sys.modules.setdefault("warp", types.ModuleType("warp"))
    try:
        exec(compile(body, "warmup_body.py", "exec"), space)
    finally:
        if no_warp:
            del sys.modules["warp"]
    why_not = space["_why_not_definition"]
    statements = ast.parse(hostile_cell("/nonexistent/PWNED")).body
    refused = [why_not(s, {}, "/nonexistent") for s in statements]
    kept = [ast.unparse(s).splitlines()[0] for s, why in zip(statements, refused) if not why]
    # only Warp's import and the kernel's definition remain (the @wp.func under a lambda decorator,
    # the helpers with a calling default or annotation and the struct with a statement in its body
    # are refused whole)
    assert kept == ["import warp as wp", "@wp.kernel"], kept


def hostile_targets(measured):
    """A report whose factory, references and types name what is not the program's: the
    standard library, the interpreter's own modules, and names that are not names."""
    report = json.loads(json.dumps(measured.data))
    loads = report["samples"][0]["cold"]["module_loads"]
    scale = next(l for l in loads if l["module"].startswith("make_scale"))
    kernel = scale["snapshot"]["kernels"][0]
    variants = []
    for n, (factory, args) in enumerate([
        ({"module": "os", "qualname": "system"}, [["command", "pos", {"lit": f"touch {measured.root}/PWNED-factory"}]]),
        ({"module": "helpers", "qualname": "make_scale"}, [["s", "pos", {"ref": "os:system"}]]),
        ({"module": "helpers", "qualname": "make_scale"}, [["s", "pos", {"enum": "os:system", "value": 1}]]),
        ({"module": "helpers", "qualname": "make_scale"}, [["s); __import__('os').system('x'", "pos", {"lit": 1}]]),
        ({"module": "helpers", "qualname": "make_scale"}, [["s", "pos", {"object": "Evil"}]]),
        ({"module": "antigravity", "qualname": "geohash"}, [["latitude", "pos", {"lit": 1}]]),
    ]):
        load = json.loads(json.dumps(scale))
        load["hash"] = f"{n + 1:x}" * 64
        load["module"] = f"hostile_{n}"
        k = load["snapshot"]["kernels"][0]
        k["defined_in"] = factory["module"]
        k["qualname"] = factory["qualname"] + ".<locals>.scale"
        k["factory"] = {**factory, "file": kernel["factory"]["file"], "line": 1, "args": args}
        variants.append(load)
    # a struct type of the standard library as a generic instance's argument
    typed = json.loads(json.dumps(scale))
    typed["hash"] = "9" * 64
    typed["module"] = "hostile_struct"
    typed["snapshot"]["kernels"][0].update(generic=True, types=[{"type": "system", "struct": "os:system"}])
    variants.append(typed)
    loads.extend(variants)
    return report


def test_a_hostile_reports_warmup_file_calls_nothing_outside_the_program(measured, venv_python):
    hostile = measured.root / "targets.json"
    hostile.write_text(json.dumps(hostile_targets(measured)))
    script = measured.root / "targets_warmup.py"
    plan_json = measured.root / "targets-plan.json"
    done = measured.probe("warmup", hostile, "--run", "-q", "-o", script, "--json", plan_json)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(plan_json.read_text())
    # none of them reaches the file: each is named with why
    for t in plan["targets"]:
        if t["module"].startswith("hostile_"):
            assert not t["covered"] and t["why_not"], t
    data = json.loads(script.with_suffix(".json").read_text())
    # named with why in the plan's measured.not_built, never as data the runtime reads
    readable = json.dumps({k: v for k, v in data.items() if k != "measured"})
    assert "os:system" not in readable and "antigravity" not in readable
    assert "antigravity" not in script.read_text()
    ran, logged = run_audited(script, measured, venv_python, "targets")
    assert logged == "", logged
    assert markers(measured) == []
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_the_file_checks_again_when_it_runs(measured, venv_python):
    """A file edited after it was written (or written by another tool) still calls nothing outside
    the program: its own checks refuse the standard library's modules and Warp's functions."""
    script = measured.root / "plain_warmup.py"
    done = measured.probe("warmup", measured.root / "app.json", "-q", "-o", script)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(script.with_suffix(".json").read_text())
    evil = dict(plan["targets"][0], module="os", kernel="", warp_module="evil", hash="e" * 64,
                factories=[{"module": "os", "qualname": "system", "args": [["c", "pos", {"lit": "touch " + str(measured.root / "PWNED-edited")}]]}],
                instances=[{"kernel": "", "module": "", "key": "k", "types": [{"type": "launch"}]}])
    assert plan["packages"] == ["helpers"], plan["packages"]
    plan.update(targets=[evil, *plan["targets"]], packages=["helpers", "os"])
    edited = measured.root / "edited_warmup.py"
    shutil.copy2(script, edited)  # the runtime as written; only its plan is edited
    edited.with_suffix(".json").write_text(json.dumps(plan))
    refused_as_edited(edited, measured, venv_python, "edited-untrusted", "calls os.system(")
    ran, logged = run_audited(edited, measured, venv_python, "edited", trust=True)
    assert logged == "", logged
    assert markers(measured) == []
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads((measured.root / "results-edited.json").read_text())
    (refused,) = [o for o in results["outcomes"] if o["warp_module"] == "evil"]
    assert not refused["built"] and "part of the Python installation" in refused["error"], refused


def test_no_front_writes_a_file_for_a_run_not_measured_here_without_consent(measured):
    report = measured.root / "foreign.json"
    report.write_text(json.dumps(dict(measured.data, cwd=str(measured.root / "elsewhere"))))  # not a run of this history
    script = measured.root / "foreign_warmup.py"
    done = measured.probe("warmup", report, "-q", "-o", script)
    assert done.returncode == 77 and not script.exists(), done.stdout + done.stderr
    assert "--run" in done.stderr


def test_an_edited_copy_of_the_users_own_report_is_someone_elses(measured):
    """Trust goes by content, never by resemblance: a byte-identical copy of a report this probe
    wrote is its own wherever it lies, and any edit (the attack: a hostile cell put into a copy of
    the user's own report, one byte of whitespace, one digit) makes it a report from elsewhere,
    which writes no file without --run and shows what the file would run, calls and sets."""
    own = measured.root / "app.json"
    text = own.read_text()
    copy = measured.root / "elsewhere" / "copy.json"
    copy.parent.mkdir(exist_ok=True)
    copy.write_text(text)
    script = measured.root / "copy_warmup.py"
    done = measured.probe("warmup", copy, "-q", "-o", script)
    assert done.returncode == 0 and script.exists(), done.stdout + done.stderr

    attack = json.loads(text)
    attack["cell_code"] = f"import os\nos.system('touch {measured.root}/PWNED-copy')\n"
    attack["command"] = ["python", "<cell>"]
    digit = next(i for i, c in enumerate(text) if c.isdigit())
    edits = {
        "cell": json.dumps(attack),
        "newline": text + "\n",
        "digit": text[:digit] + str((int(text[digit]) + 1) % 10) + text[digit + 1:],
    }
    for name, edited_text in edits.items():
        edited = measured.root / f"edited-{name}.json"
        edited.write_text(edited_text)
        script = measured.root / f"edited_{name}_warmup.py"
        done = measured.probe("warmup", edited, "-q", "-o", script)
        assert done.returncode == 77 and not script.exists(), (name, done.returncode, done.stderr)
        assert "not a report this probe wrote" in done.stderr and "--run" in done.stderr, done.stderr
        # what a replay would run, call and set, as Python reads it, before anything runs
        assert "calls    helpers.make_scale(2.0)" in done.stderr, done.stderr
    assert "os.system('touch" in measured.probe("warmup", measured.root / "edited-cell.json", "-q").stderr
    assert markers(measured) == []


def _with_factory(measured, module, qualname, tag):
    report = json.loads(json.dumps(measured.data))
    loads = report["samples"][0]["cold"]["module_loads"]
    load = json.loads(json.dumps(next(l for l in loads if l["module"].startswith("make_scale"))))
    load["hash"] = "a" * 63 + tag
    load["module"] = f"factory_{tag}"
    k = load["snapshot"]["kernels"][0]
    k["defined_in"] = module
    k["qualname"] = qualname + ".<locals>.scale"
    k["factory"] = dict(k["factory"], module=module, qualname=qualname, args=[["s", "pos", {"float": "2.0"}]])
    loads.append(load)
    return report


def test_a_factory_of_a_package_that_runs_programs_of_warp_or_of_a_file_without_warp_is_not_planned(measured):
    (measured.path / "notwarp.py").write_text("import os\n\ndef run(s):\n    return os.getcwd()\n")
    cases = {"1": ("IPython.core.interactiveshell", "InteractiveShell", "never the program's code"),
             "2": ("warp._src.context", "Module", "a factory of Warp's own code"),
             "3": ("notwarp", "run", "does not use Warp")}
    for tag, (module, qualname, words) in cases.items():
        report = measured.root / f"factory-{tag}.json"
        report.write_text(json.dumps(_with_factory(measured, module, qualname, tag)))
        plan_json = measured.root / f"factory-{tag}-plan.json"
        done = measured.probe("warmup", report, "--run", "-q", "-o", measured.root / f"factory_{tag}_warmup.py", "--json", plan_json)
        assert done.returncode == 0, done.stdout + done.stderr
        (target,) = [t for t in json.loads(plan_json.read_text())["targets"] if t["module"] == f"factory_{tag}"]
        assert not target["covered"] and words in target["why_not"], target


def test_the_file_refuses_at_run_time_what_the_plan_refuses(measured, venv_python):
    """An edited file: a factory of a package that runs programs, of a file without Warp, and
    wp.config values that are not the program's to set (a flag that writes a file, the cache's
    location) are refused by the file itself, each said on stderr; the rest still builds."""
    (measured.path / "notwarp.py").write_text("import os\n\ndef run(s):\n    return os.getcwd()\n")
    script = measured.root / "plain2_warmup.py"
    done = measured.probe("warmup", measured.root / "app.json", "-q", "-o", script)
    assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(script.with_suffix(".json").read_text())
    added = []
    for n, (module, qualname) in enumerate([("IPython.core", "embed"), ("notwarp", "run")]):
        added.append(dict(plan["targets"][0], module=module, kernel="", warp_module=f"refused{n}", hash=f"{n}" * 64,
                          factories=[{"module": module, "qualname": qualname, "args": [["s", "pos", {"lit": 1}]]}],
                          instances=[{"kernel": "", "module": "", "key": "k", "types": [{"type": "launch"}]}]))
    assert plan["config"] == {} and plan["packages"] == ["helpers"], plan
    plan.update(targets=[*added, *plan["targets"]], packages=["helpers", "IPython", "notwarp"],
                config={"cpu_compiler_flags": "-O2 -dependency-file=" + str(measured.root / "PWNED-dep"),
                        "kernel_cache_dir": str(measured.root / "PWNED-cache")})
    edited = measured.root / "edited2_warmup.py"
    shutil.copy2(script, edited)  # the runtime as written; only its plan is edited
    edited.with_suffix(".json").write_text(json.dumps(plan))
    refused_as_edited(edited, measured, venv_python, "edited2-untrusted", "calls IPython.core.embed(")
    ran, logged = run_audited(edited, measured, venv_python, "edited2", trust=True)
    assert logged == "", logged
    assert markers(measured) == []
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "wp.config.cpu_compiler_flags not set: '-dependency-file=" in ran.stderr, ran.stderr
    assert "wp.config.kernel_cache_dir not set" in ran.stderr, ran.stderr
    outcomes = {o["warp_module"]: o for o in json.loads((measured.root / "results-edited2.json").read_text())["outcomes"]}
    assert "a package that runs programs" in outcomes["refused0"]["error"], outcomes["refused0"]
    assert "does not use Warp" in outcomes["refused1"]["error"], outcomes["refused1"]
    assert all(o["built"] for m, o in outcomes.items() if not m.startswith("refused")), outcomes


def test_a_foreign_cell_never_imports_from_the_folder_its_report_names(measured):
    """A notebook report from elsewhere names its folder; its cell, replayed with --run, runs in a
    folder of its own, so `import evil` never finds the evil.py the report's folder holds."""
    planted = measured.root / "planted"
    planted.mkdir(exist_ok=True)
    (planted / "evil.py").write_text(f"open({str(measured.root / 'PWNED-import')!r}, 'w').close()\n")
    report = json.loads(json.dumps(measured.data))
    report.update(cell_code="import evil\n", command=["python", "<cell>"], cwd=str(planted))
    path = measured.root / "foreign-cell.json"
    path.write_text(json.dumps(report))
    done = measured.probe("whatif", path, "backward-off", "--run", "-q")
    assert "Traceback" not in done.stderr, done.stderr
    # it ran (and failed: no evil module where it ran), and created nothing
    assert "the command failed" in done.stderr, done.stdout + done.stderr
    assert markers(measured) == [], done.stdout + done.stderr


def edited_plan(measured, name, change):
    """The plain warm-up of the measured run, its plan edited by `change(plan)`; the runtime as written."""
    script = measured.root / f"{name}_warmup.py"
    if not script.exists():
        done = measured.probe("warmup", measured.root / "app.json", "-q", "-o", script)
        assert done.returncode == 0, done.stdout + done.stderr
    plan = json.loads(script.with_suffix(".json").read_text())
    change(plan)
    script.with_suffix(".json").write_text(json.dumps(plan))
    return script


def factory_target(plan, n, module, qualname, args):
    return dict(plan["targets"][0], module=module, kernel="", warp_module=f"gadget{n}", hash=f"{n:x}" * 64,
                factories=[{"module": module, "qualname": qualname, "args": args}],
                instances=[{"kernel": "", "module": "", "key": "k", "types": [{"type": "float32"}]}])


def test_warps_own_helpers_a_project_function_and_a_file_outside_the_project_are_never_run(measured, venv_python):
    """The plan as an attacker edits it (trust 6): Warp's test helper that runs Python in a
    subprocess, Warp's example that opens a file with xdg-open, a function of the project's own
    that removes a folder, and a script outside the project whose kernel runs code through
    wp.static. Not written here, it builds nothing; trusted, each is refused by the file itself,
    under --dry-run and in a build; nothing runs, nothing is written or removed."""
    victim = measured.root / "victim-folder"
    victim.mkdir(exist_ok=True)
    (measured.path / "tidy.py").write_text("import shutil\nimport warp as wp\n\n\ndef cleanup(path):\n    shutil.rmtree(path)\n")
    outside = measured.root / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "evil.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
        f"    a[0] = wp.static(float(len(open({str(measured.root / 'PWNED-static')!r}, 'w').name)))\n")
    (measured.path / "linked.py").symlink_to(outside / "evil.py")
    code = f"open({str(measured.root / 'PWNED-subprocess')!r}, 'w').close()"

    def change(plan):
        plan["targets"] = [
            factory_target(plan, 1, "warp.tests.unittest_utils", "run_python_subprocess", [["code", "pos", {"lit": code}]]),
            factory_target(plan, 2, "warp.examples.browse", "open_file",
                           [["filename", "pos", {"lit": str(measured.root / "PWNED-open")}]]),
            factory_target(plan, 3, "tidy", "cleanup", [["path", "pos", {"lit": str(victim)}]]),
            *plan["targets"]]
        plan["packages"] = sorted({*plan["packages"], "tidy", "warp"})

    for mode in ([], ["--dry-run"]):
        script = edited_plan(measured, "gadgets" + "".join(mode).replace("-", "_"), change)
        refused_as_edited(script, measured, venv_python, "gadgets-untrusted" + "".join(mode), "calls tidy.cleanup(")
        ran, logged = run_audited(script, measured, venv_python, "gadgets" + "".join(mode), trust=True, extra=mode)
        assert logged == "" and markers(measured) == [] and victim.is_dir(), ran.stdout + ran.stderr + logged
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stdout + ran.stderr
        outcomes = {o["warp_module"]: o for o in
                    json.loads((measured.root / f"results-gadgets{''.join(mode)}.json").read_text())["outcomes"]}
        if mode:  # a dry run calls no factory at all (a library's may launch what it makes): each is unknown
            assert all("a dry run calls none" in outcomes[g]["unknown"] for g in ("gadget1", "gadget2", "gadget3"))
            continue
        assert "Warp's own code" in outcomes["gadget1"]["error"] and "Warp's own code" in outcomes["gadget2"]["error"]
        assert "defines no function: not a kernel factory" in outcomes["gadget3"]["error"], outcomes["gadget3"]
    # the script whose definitions run is the project's own file: named outside it, or a link out of it, it is refused
    for entry, said in (("../outside/evil.py", "not a file name in the program's folder"),
                        (str(outside / "evil.py"), "not a file name in the program's folder"),
                        ("linked.py", "is not the project's own file")):
        script = edited_plan(measured, "entry" + str(abs(hash(entry)) % 1000),
                             lambda plan: plan.update(entry_script=entry))
        ran, logged = run_audited(script, measured, venv_python, "entry" + str(abs(hash(entry)) % 1000), trust=True)
        assert logged == "" and markers(measured) == [], ran.stdout + ran.stderr + logged
        assert said in ran.stdout + ran.stderr, (entry, ran.stdout + ran.stderr)


def test_a_cell_file_changed_after_its_plan_was_written_is_not_read(measured, venv_python):
    report = json.loads(json.dumps(measured.data))
    report["cell_code"] = APP
    report["command"] = ["python", "<cell>"]
    cell_report = measured.root / "plain-cell.json"
    cell_report.write_text(json.dumps(report))
    script = measured.root / "plaincell_warmup.py"
    done = measured.probe("warmup", cell_report, "--run", "-q", "-o", script)
    assert done.returncode == 0, done.stdout + done.stderr
    cell = measured.root / "plaincell_warmup_cell.py"
    assert cell.read_text() == APP and "import warp" not in script.with_suffix(".json").read_text()
    # the plan is untouched (its digest is in the ledger); the cell's file is not what it names
    cell.write_text(APP + "\n@wp.kernel\ndef k3(a: wp.array(dtype=float)):\n"
                    f"    a[0] = wp.static(float(len(open({str(measured.root / 'PWNED-cell')!r}, 'w').name)))\n")
    ran, logged = run_audited(script, measured, venv_python, "plaincell")
    assert logged == "" and markers(measured) == [], ran.stdout + ran.stderr + logged
    assert "is not the code the plan was written with" in ran.stdout + ran.stderr, ran.stdout + ran.stderr


HOSTILE_VALUES = {
    # what a tampered plan may hold in each field; every value is data the file must not turn into a call, a
    # write, a process or a removal outside Warp's cache
    "module": ["os", "subprocess", "antigravity", "this", "builtins", "helpers.__main__", "warp.tests.unittest_utils",
               "warp.examples.browse", "tidy", "helpers;os", "__import__('os')", ""],
    "qualname": ["system", "run", "run_python_subprocess", "open_file", "cleanup", "exec", "eval", "rmtree",
                 "make_scale.__globals__", "make_scale", "__class__.__subclasses__", "__builtins__"],
    "arg": [{"lit": "touch {marker}"}, {"ref": "os:system"}, {"ref": "builtins:exec"}, {"ref": "helpers:os"},
            {"enum": "os:system", "value": 1}, {"enum": "enum:Flag", "value": 3}, {"object": "Evil"},
            {"list": [{"ref": "subprocess:Popen"}]}, {"tuple": [{"lit": "{marker}"}]}, {"float": "nan"},
            {"lit": "__import__('os').system('touch {marker}')"}],
    "type": [{"struct": "os:system"}, {"type": "exec"}, {"array": "array", "dtype": {"struct": "builtins:eval"}},
             {"shape": [3], "scalar": {"struct": "subprocess:Popen"}}, {"type": "float32"}],
    "entry_script": ["app.py", "../outside/evil.py", "/etc/passwd", "linked.py", "helpers.py"],
    "config": [{"kernel_cache_dir": "{marker}"}, {"cpu_compiler_flags": "-fplugin={marker}"},
               {"cpu_compiler_flags": "-O2 -MT {marker}"}, {"mode": "release"}, {"verify_cuda": True},
               {"__class__": 1}],
}


def generated_plan(plan, rng, marker):
    def pick(kind):
        value = rng.choice(HOSTILE_VALUES[kind])
        return json.loads(json.dumps(value).replace("{marker}", str(marker).replace("\\", "/")))

    targets = []
    for n in range(rng.randint(1, 4)):
        t = factory_target(plan, n + 10, pick("module"), pick("qualname"),
                           [[rng.choice(["a", "s", "path", "code"]), rng.choice(["pos", "kw", "star"]), pick("arg")]
                            for _ in range(rng.randint(0, 3))])
        t["kernel"] = rng.choice(["", "k", "scale", pick("qualname")])
        t["instances"] = [{"kernel": rng.choice(["", "k"]), "module": rng.choice(["", pick("module")]), "key": "k",
                           "types": [pick("type") for _ in range(rng.randint(1, 2))]}]
        targets.append(t)
    config = {}
    for _ in range(rng.randint(0, 2)):
        config.update(pick("config"))
    return dict(plan, targets=[*targets, *plan["targets"]], entry_script=pick("entry_script"), config=config,
                packages=sorted({*plan["packages"], *(t["module"].split(".")[0] for t in targets if t["module"])}))


def test_generated_hostile_plans_build_kernels_and_do_nothing_else(measured, venv_python):
    """A property of the file, not of a list of cases: plans made from hostile values in every field
    (factories, references, types, the script, wp.config) and trusted with --trust-plan, run as a
    build and as a dry run under the audit hook, call, write, start and remove nothing outside
    Warp's cache and the results file, and never end in a traceback. The seed is printed."""
    import random

    (measured.path / "tidy.py").write_text("import shutil\nimport warp as wp\n\n\ndef cleanup(path):\n    shutil.rmtree(path)\n")
    seed = int(os.environ.get("XWARP_PLAN_SEED", random.SystemRandom().randrange(1 << 30)))
    print("plan seed", seed)
    rng = random.Random(seed)
    for n in range(6):
        marker = measured.root / f"PWNED-generated-{n}"
        mode = ["--dry-run"] if n % 2 else []
        script = edited_plan(measured, f"generated{n}", lambda plan: plan.update(generated_plan(plan, rng, marker)))
        ran, logged = run_audited(script, measured, venv_python, f"generated{n}", trust=True, extra=mode)
        assert logged == "" and markers(measured) == [], (seed, n, ran.stdout[-2000:] + ran.stderr[-2000:] + logged)
        assert "Traceback" not in ran.stderr and ran.returncode in (0, 2), (seed, n, ran.returncode, ran.stderr[-3000:])


def test_the_files_inputs_and_outputs_are_bounded_and_what_it_prints_is_escaped(measured, venv_python):
    """Trust 6: --plan on a FIFO or /dev/zero, a plan nested 100,000 deep, an option set index of
    -1 end at once with one line each (no hang, no MemoryError, no RecursionError); --results
    through a link or into a FIFO writes nothing; test names and module names from the plan
    (OSC, ESC, RLO, a newline that would forge a line of the file's own) are printed escaped."""
    script = measured.root / "bounded_warmup.py"
    done = measured.probe("warmup", measured.root / "app.json", "-q", "-o", script)
    assert done.returncode == 0, done.stdout + done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("XWARP_") or k == "XWARP_PLAN_LEDGER"}
    env.update(WARP_CACHE_PATH=str(measured.root / "cache-bounded"), TMPDIR=str(measured.temp))

    def run(*args, timeout=120):
        return subprocess.run([str(venv_python), str(script), *map(str, args)], cwd=measured.root, env=env,
                              capture_output=True, text=True, timeout=timeout)

    fifo = measured.root / "plan-fifo.json"
    os.mkfifo(fifo)
    deep = measured.root / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    plan = json.loads(script.with_suffix(".json").read_text())
    minus = measured.root / "minus.json"
    minus.write_text(json.dumps(dict(plan, targets=[dict(plan["targets"][0], options=-1)])))
    for path, said in ((fifo, "a FIFO, not a file"), ("/dev/zero", "a device, not a file"),
                       (deep, "is not JSON this file reads"), (minus, "options is -1")):
        started = time.monotonic()
        ran = run("--plan", path, "--trust-plan")
        assert time.monotonic() - started < 60 and ran.returncode == 1, (path, ran.returncode, ran.stderr[-2000:])
        assert said in ran.stderr and "Traceback" not in ran.stderr and len(ran.stderr) < 2000, (path, ran.stderr[-2000:])
    victim = measured.root / "victim.txt"
    victim.write_text("precious\n")
    link = measured.root / "results-link.json"
    link.symlink_to(victim)
    out_fifo = measured.root / "results-fifo.json"
    os.mkfifo(out_fifo)
    for target, said in ((link, "a symbolic link"), (out_fifo, "a device, a FIFO or a folder")):
        ran = run("--dry-run", "--results", target)
        assert ran.returncode == 2 and said in ran.stderr and "nothing was built" in ran.stderr, ran.stderr[-2000:]
    assert victim.read_text() == "precious\n" and link.is_symlink()
    # text from the plan, printed
    forged = "t\x1b]0;title\x07\u202e\nwarp warm-up: built 99 of 99 module identities as measured"
    for t in plan["targets"]:
        t["tests"] = [forged]
        t["hash"] = "0" * len(t["hash"])  # changed since measured: --dry-run names each with the tests that paid
    edited = measured.root / "escaped_warmup.py"
    shutil.copy2(script, edited)
    edited.with_suffix(".json").write_text(json.dumps(plan))
    ran = subprocess.run([str(venv_python), str(edited), "--dry-run", "--trust-plan"], cwd=measured.root, env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    assert "\x1b" not in ran.stdout + ran.stderr and "\u202e" not in ran.stdout + ran.stderr, ran.stdout
    assert not any(line.startswith("warp warm-up: built 99") for line in ran.stdout.splitlines()), ran.stdout
    assert "\\x1b]0;title\\x07\\u202e\\x0awarp warm-up: built 99" in ran.stdout, ran.stdout
