"""fix and warmup on a program shaped like real Warp code (CPU, real Warp): a package in a src
layout run as `python -m particle_prep`, whose `__init__.py` re-exports it, whose stage kernels
come from a factory wrapped by a caching decorator with a hidden module="unique" default, each
made just before its own launch, every launch going through a `self._launch` helper.

What the run recorded locates the edits: the launch through the helper counts as a launch in
the caller's block (CS-9's hoist), the entry the interpreter ran is the package's
`__main__.py` (entry-point edits), and the warm-up re-creates every factory-made kernel by
calling the factory with the recorded arguments, so the primed program builds nothing."""

import json
import os
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
        frames = [(f, n, fn) for f, n, fn in launch["args"]["stack"]]
        assert frames[0][0] == pipeline and frames[0][2] == "_launch", frames
        assert frames[1][2] == "run" and "self._launch(" in lines[frames[1][1] - 1], frames
    # every stage kernel carries the factory call that made it, with plain arguments
    loads = [l for l in measured.data["samples"][0]["cold"]["module_loads"] if l["status"] == "compiled"]
    made = [[a[2] for a in k["factory"]["args"]] for l in loads for k in l["snapshot"]["kernels"]]
    assert len(loads) == 3 and all(l["snapshot"]["kernels"][0]["factory"]["qualname"] == "make_stage" for l in loads)
    assert made == [[{"float": "1.0"}, {"float": "0.99"}, {"lit": 8}, {"lit": "unique"}],
                    [{"float": "2.0"}, {"float": "0.5"}, {"lit": 8}, {"lit": "unique"}],
                    [{"float": "0.5"}, {"float": "0.9"}, {"lit": 4}, {"lit": "unique"}]]


def test_fix_hoists_the_factory_calls_past_the_helper_launch_and_writes_the_entry_edit_in_main(measured):
    out = measured.tmp_path / "fix.json"
    proc = measured.probe("fix", str(measured.report), "-q", "--json", str(out), "--verify", "--samples", "2",
                          "--finding", "CS-9", "--out", str(measured.tmp_path / "patches"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (f,) = [f for f in json.loads(out.read_text())["fixes"] if f["mechanism"] == "CS-9"]
    assert f["verdict"] == "verified", f
    assert f["files"] == ["src/particle_prep/pipeline.py", "src/particle_prep/stages.py"], f
    assert 'module="make_stage_kernels"' in f["patch"]
    moved = [line for line in f["patch"].splitlines() if line.startswith("+") and " = make_stage(" in line]
    assert len(moved) == 2, f["patch"]  # spread and relax, before the helper's first launch
    assert "util.py" not in f["patch"]  # the caching wrapper's own call is not what moves

    # CS-10's lever sets enable_backward at the entry the interpreter ran: -m's __main__.py
    out = measured.tmp_path / "fix-entry.json"
    proc = measured.probe("fix", str(measured.report), "-q", "--json", str(out), "--lever", "backward-off")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (f,) = json.loads(out.read_text())["fixes"]
    assert f["verdict"] == "not-verified" and f["files"] == [MAIN], f
    assert "+wp.config.enable_backward = False" in f["patch"] and "+import warp as wp" in f["patch"], f["patch"]
    assert not list(measured.temp.iterdir()), "the probe left temporary files behind"


def test_the_warmup_recreates_every_factory_made_kernel_and_the_primed_run_builds_nothing(measured):
    out = measured.tmp_path / "warmup.json"
    script = measured.tmp_path / "warp_warmup.py"
    proc = measured.probe("warmup", str(measured.report), "-q", "-o", str(script), "--json", str(out), "--verify",
                          "--samples", "1", "--workers", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads(out.read_text())
    assert plan["covered"] == 3 and plan["uncovered"] == 0, proc.stdout
    assert plan["entry_script"] == "particle_prep/__main__.py" and plan["import_root"] == str(measured.path / "src")
    for t in plan["targets"]:
        assert t["kernel"] == "" and [c["qualname"] for c in t["factories"]] == ["make_stage"], t
    check = plan["check"]
    assert check["verdict"] == "verified", proc.stdout
    assert check["covered_built"] == [] and check["uncovered_built"] == [] and check["new_built"] == []
    assert "builds left at run time: 0" in proc.stdout
    # the factory is reached by the name its package exports (the caching decorator included),
    # and its arguments travel as data
    text = script.read_text()
    assert '"args": [["gain", "pos", {"float": "2.0"}], ["damping", "pos", {"float": "0.5"}], ["steps", "pos", {"lit": 8}], ' \
        '["module", "pos", {"lit": "unique"}]], "module": "particle_prep.stages", "qualname": "make_stage"}' in text
