"""Test suites on real Warp (CPU): a small suite of our own (tests/python/targets/suite: two test
files, a shared kernel module, a module per parametrisation with the same code), run by pytest,
by pytest-xdist with two workers and by python -m unittest. Every build is attributed to the test
that was running, exactly as Warp's own log places it between that test's start and end; the
report's Tests section ranks the tests by build time paid and gives each process's compile share;
the parametrised modules with one hash are a finding; a repeat across workers is one whenever it
happens; the suite's warm-up leaves no build to the suite."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, TARGETS, VENV_PYTHON, validate_report

SUITE = TARGETS / "suite"
WARP_LINE = re.compile(r"^Module (\S+) ([0-9a-f]{7}) load on device '([^']+)' took [0-9.]+ ms\s+\(compiled\)")


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    shutil.copytree(SUITE, folder, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    tmp = tmp_path / "probe-tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))

    class Suite:
        path = folder
        temp = tmp

        def measure(self, *command, name="suite"):
            out = tmp_path / f"{name}.json"
            proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(out), "--cwd", str(folder),
                                   "--", *map(str, command)], capture_output=True, text=True, env=env, timeout=900)
            assert proc.returncode == 0, proc.stderr[-3000:]
            report = json.loads(out.read_text())
            validate_report(report)
            return out, report

        def probe(self, *args):
            return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, env=env, timeout=900,
                                  cwd=tmp_path)

    return Suite()


def warp_log_builds(log_text):
    """Per test, the identities Warp's own log says were compiled between the test's start and end
    marks, in the first session of the log (the cold pass)."""
    sessions = log_text.split("SUITE-SESSION")
    assert len(sessions) >= 2, log_text[-2000:]
    builds, current = {}, ""
    for line in sessions[1].splitlines():
        if line.startswith("SUITE-START "):
            current = line.split(" ", 1)[1]
        elif line.startswith("SUITE-END "):
            current = ""
        elif m := WARP_LINE.match(line):
            builds.setdefault(current, set()).add(f"{m.group(1)} {m.group(2)}")
    return builds


def report_builds(report):
    return {t["test"]: {f"{i['module']} {i['hash'][:7]}" for i in t["identities"]}
            for t in report["summary"]["tests"] if t["builds"] > 0}


@pytest.mark.quick
def test_every_build_is_attributed_to_the_test_warps_log_places_it_in(suite):
    out, report = suite.measure("sh", "-c", f"'{VENV_PYTHON}' -m pytest -s -q -p no:cacheprovider test_alpha.py test_beta.py "
                                            ">> pytest.log 2>&1")
    expected = warp_log_builds((suite.path / "pytest.log").read_text())
    assert report_builds(report) == expected, (report["summary"]["tests"], expected)
    assert expected["test_alpha.py::test_scale_builds_the_shared_module"] == {next(iter(
        expected["test_alpha.py::test_scale_builds_the_shared_module"]))}
    assert any(k.startswith("shared_kernels ") for k in expected["test_alpha.py::test_scale_builds_the_shared_module"])
    # the costliest test first; a test that reused a module paid nothing and lists no identity
    tests = report["summary"]["tests"]
    paid = [t["build_ms"] for t in tests if t["builds"]]
    assert paid == sorted(paid, reverse=True)
    reused = {t["test"]: t for t in tests}["test_alpha.py::test_shift_reuses_it"] if any(
        t["test"] == "test_alpha.py::test_shift_reuses_it" for t in tests) else None
    assert reused is None or reused["builds"] == 0
    # paid by the first: the shared module's build is reused by the later tests that launch it
    payer = {t["test"]: t for t in tests}["test_alpha.py::test_scale_builds_the_shared_module"]
    assert payer["reusers"] == ["test_alpha.py::test_shift_reuses_it", "test_beta.py::test_scale_again"], payer
    assert payer["reused_by"] == 2
    # the process's compile share: its builds over its wall
    (worker,) = report["summary"]["workers"]
    assert worker["builds"] == sum(t["builds"] for t in tests) and 0 < worker["build_ms"] < worker["wall_ms"]
    # the two parametrised modules with one hash: a finding with the duplicated build
    (same,) = [f for f in report["findings"] if f["mechanism"] == "same-code-other-name"]
    assert "offset_small" in same["module"] and "offset_large" in same["module"] and same["savings_ms"] > 0
    text = suite.probe("report", out).stdout
    assert "Tests, by build time paid" in text and "test_beta.py::test_square_builds_this_files_module" in text
    assert "Processes (compile share of each one's wall)" in text
    assert "paid by the first: reused by 2 later test(s): test_alpha.py::test_shift_reuses_it" in text


def test_xdist_workers_are_each_a_process_and_a_repeat_across_them_is_a_finding(suite):
    out, report = suite.measure(VENV_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "test_alpha.py",
                                "test_beta.py", name="xdist")
    tests = report["summary"]["tests"]
    workers = report["summary"]["workers"]
    assert len(workers) >= 2, workers  # gw0 and gw1 each built something
    assert {t["test"] for t in tests if t["builds"]} >= {"test_beta.py::test_square_builds_this_files_module"}
    # whatever the timing did: an identity compiled by several processes is the finding, and
    # only then
    loads = report["samples"][0]["cold"]["module_loads"]
    by_identity = {}
    for load in loads:
        if load["status"] == "compiled":
            by_identity.setdefault((load["module"], load["hash"]), set()).add(load["pid"])
    repeated = {m for (m, _), pids in by_identity.items() if len(pids) > 1}
    found = {f["module"] for f in report["findings"] if f["mechanism"] == "repeated-across-workers"}
    assert found == repeated, (found, repeated)


def test_unittest_ids_are_taken_from_the_test_case_on_the_stack(suite):
    (suite.path / "test_gamma.py").write_text(
        "import unittest\n\nimport numpy as np\nimport warp as wp\n\n\n@wp.kernel\n"
        "def triple(a: wp.array(dtype=float)):\n    a[wp.tid()] = a[wp.tid()] * 3.0\n\n\n"
        "class Triple(unittest.TestCase):\n    def test_triple(self):\n        a = wp.ones(4, dtype=float)\n"
        "        wp.launch(triple, dim=4, inputs=[a])\n        self.assertTrue(np.allclose(a.numpy(), 3.0))\n\n"
        "    def test_triple_again(self):\n        a = wp.full(4, 2.0, dtype=float)\n"
        "        wp.launch(triple, dim=4, inputs=[a])\n        self.assertTrue(np.allclose(a.numpy(), 6.0))\n")
    _, report = suite.measure(VENV_PYTHON, "-m", "unittest", "test_gamma", name="unittest")
    # the later test reused what the first paid for, its id kept by unittest's own TestCase.run and
    # written whole, as pytest writes it (file::Class::test)
    payer = {t["test"]: t for t in report["summary"]["tests"]}["test_gamma.py::Triple::test_triple"]
    assert payer["reusers"] == ["test_gamma.py::Triple::test_triple_again"] and payer["reused_by"] == 1, payer
    assert report_builds(report) == {"test_gamma.py::Triple::test_triple": {f"test_gamma {h}" for h in [
        next(l["hash"][:7] for l in report["samples"][0]["cold"]["module_loads"] if l["module"] == "test_gamma")]}}


def test_the_suites_warmup_leaves_no_build_to_the_suite(suite):
    out, report = suite.measure(VENV_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_alpha.py", "test_beta.py",
                                name="plain")
    plan_json = suite.path.parent / "warmup.json"
    proc = suite.probe("warmup", out, "-q", "-o", suite.path.parent / "warp_warmup.py", "--json", plan_json, "--verify",
                       "--samples", "1", "--workers", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads(plan_json.read_text())
    assert plan["uncovered"] == 0 and plan["covered"] == len(report["summary"]["identities"]), proc.stdout
    assert plan["check"]["verdict"] == "verified" and "builds left at run time: 0" in proc.stdout
    assert not list(suite.temp.iterdir())


def test_a_warmup_builds_the_forms_each_worker_made_of_a_shared_generic_module(suite):
    """Two xdist workers instantiate one shared generic kernel with other types: each worker's
    copy of the module is its own form, and neither holds the other. One warm-up process cannot
    build both (registering the second instance on the first gives a third form): the file builds
    the second in a fresh worker process, here with a single worker allowed."""
    (suite.path / "generic_kernels.py").write_text(
        "from typing import Any\n\nimport warp as wp\n\n\n@wp.kernel\n"
        "def fill(a: wp.array(dtype=Any), v: Any):\n    a[wp.tid()] = v\n")
    for name, dtype in (("test_f32.py", "wp.float32"), ("test_f64.py", "wp.float64")):
        (suite.path / name).write_text(
            "import numpy as np\nimport warp as wp\n\nimport generic_kernels\n\n\n"
            f"def test_fill():\n    a = wp.zeros(4, dtype={dtype})\n"
            f"    wp.launch(generic_kernels.fill, dim=4, inputs=[a, {dtype}(2.0)])\n"
            "    assert np.allclose(a.numpy(), 2.0)\n")
    out, report = suite.measure(VENV_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile",
                                "test_f32.py", "test_f64.py", name="forms")
    forms = [l for l in report["samples"][0]["cold"]["module_loads"] if l["module"] == "generic_kernels"]
    assert len({l["pid"] for l in forms}) == 2 and len({l["hash"] for l in forms}) == 2, forms
    plan_json = suite.path.parent / "warmup.json"
    proc = suite.probe("warmup", out, "-q", "-o", suite.path.parent / "warp_warmup.py", "--json", plan_json, "--verify",
                       "--samples", "1", "--workers", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plan = json.loads(plan_json.read_text())
    generic = [t for t in plan["targets"] if t["module"] == "generic_kernels"]
    assert [t["covered"] for t in generic] == [True, True] and [t["follows"] for t in generic] == [[], []], generic
    assert plan["check"]["verdict"] == "verified", proc.stdout
    assert "builds left at run time: 0" in proc.stdout, proc.stdout
    assert not list(suite.temp.iterdir())


def test_suite_levers_change_how_pytest_runs_and_are_judged_on_the_suites_wall(suite):
    """--whatif xdist-loadfile,xdist-workers,pch-off on a real pytest -n 3 suite: the shim rewrites the
    pytest process's own arguments (the workers it starts say they saw it), the replay keeps the
    same launches in whatever order the workers ran them, and the verdict is on the cold wall (pch-off
    too: on a suite, its module work summed over workers is CPU time, not the job's wait).
    Which way the wall moved is the machine's to say: not asserted."""
    out = suite.path.parent / "levers.json"
    proc = suite.probe("measure", "-q", "--samples", "2", "--whatif", "xdist-loadfile,xdist-workers,pch-off",
                       "--whatif-budget", "10000", "--json", out,
                       "--cwd", suite.path, "--", VENV_PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3",
                       "test_alpha.py", "test_beta.py")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    validate_report(report)
    by_lever = {w["lever"]: w for w in report["whatif"]}
    loadfile = by_lever["xdist-loadfile"]
    assert loadfile["params"] == {"dist": "loadfile"}, loadfile
    assert loadfile["applied"].get("workers_started", 0) >= 2, loadfile  # each worker of each sample saw it
    assert loadfile["verdict"] in ("improved", "regressed", "inconclusive"), loadfile  # never invalid: same launches
    assert loadfile["judged_on"].startswith("cold wall"), loadfile
    assert loadfile["saving_ms"]["cold_wall"] is not None
    workers = by_lever["xdist-workers"]
    cpus = os.cpu_count()
    if cpus == 3:
        assert workers["verdict"] == "not-applied" or "already runs one worker per CPU" in workers["reason"], workers
    else:
        assert workers["params"] == {"workers": cpus}, workers
        assert workers["applied"].get("workers_started", 0) >= 1 and workers["judged_on"].startswith("cold wall"), workers
    pch = by_lever["pch-off"]
    assert pch["applied"].get("config_set", 0) >= 2 and pch["judged_on"].startswith("cold wall"), json.dumps(pch)
    assert pch["verdict"] in ("improved", "regressed", "inconclusive") and pch["saving_ms"]["cold_wall"] is not None, pch
    finding = next(f for f in report["findings"] if f["mechanism"] == "repeated-across-workers")
    assert finding["lever"] == "xdist-loadfile" and "--whatif xdist-loadfile" in finding["recommendation"]
    assert not list(suite.temp.iterdir())
