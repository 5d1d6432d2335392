"""warp-probe compare on real Warp (CPU). Each side is the same command (`python app.py`) run
on a different version of app.py, as a user comparing before and after an edit would."""

import json
import os
import shutil
import subprocess

import pytest

from conftest import PROBE, TARGETS

COMPARE = TARGETS / "compare"


@pytest.fixture
def measure_version(probe, venv_python, tmp_path):
    """Measure `python app.py` where app.py is the given file (plus lib_solver.py beside it)."""

    def run(source, samples):
        project = tmp_path / f"project-{source.replace('.py', '')}-{len(list(tmp_path.glob('project-*')))}"
        project.mkdir()
        shutil.copy2(COMPARE / source, project / "app.py")
        shutil.copy2(COMPARE / "lib_solver.py", project / "lib_solver.py")
        r = probe([venv_python, "app.py"], cwd=project, samples=samples)
        assert r.returncode == 0, r.stdout + r.stderr
        out = tmp_path / f"{project.name}.json"
        shutil.copy2(r.json_path, out)  # the bytes the probe wrote: its own run, by content
        return out

    return run


def compare(before, after, tmp_path):
    out = tmp_path / "cmp.json"
    proc = subprocess.run([str(PROBE), "compare", str(before), str(after), "--json", str(out)], capture_output=True, text=True)
    assert "Traceback" not in proc.stderr
    return proc, json.loads(out.read_text()) if out.exists() else None


def test_late_kernel_against_hoisted_fix_is_improved_once_settled(measure_version, tmp_path):
    # Two samples a side credit a change on the band alone; --until-settled re-runs each side's
    # own command, interleaved, until the rank test can decide (5 a side), and says so.
    before = measure_version("late_many.py", samples=2)
    after = measure_version("late_many_fixed.py", samples=2)
    given = (before.read_bytes(), after.read_bytes())
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    out = tmp_path / "settled.json"
    proc = subprocess.run([str(PROBE), "compare", str(before), str(after), "--until-settled", "--max-samples", "5",
                           "--json", str(out)], capture_output=True, text=True,
                          env=dict(os.environ, TMPDIR=str(scratch)), timeout=600)
    assert "Traceback" not in proc.stderr
    c = json.loads(out.read_text())
    settled = c["until_settled"]
    # the rank test needs five a side: three more each, interleaved, whatever the noise says
    assert (settled["added_before"], settled["added_after"], settled["max_samples"]) == (3, 3, 5), settled
    assert c["before"]["samples_total"] == 5 and c["after"]["samples_total"] == 5
    assert "until settled: added 3 sample(s) before and 3 after (now 5 and 5" in proc.stdout
    # Build work is judged on the loading threads' CPU time, which a busy machine does not move (one
    # build of __main__ instead of two is far beyond the band, quiet or beside busy jobs); what is
    # said must match whatever it was.
    (module_clock,) = [k for k in c["clocks"] if k["clock"] == c["decided_by"]]
    assert c["decided_by"] == "cold_module_cpu_ms" and c["judged_on"].startswith("cold module CPU"), c["judged_on"]
    assert module_clock["test"] == "mann-whitney-exact"
    # the wall of Warp's timers is reported beside it
    assert [k["clock"] for k in c["clocks"]][:2] == ["cold_module_cpu_ms", "cold_module_ms"]
    assert settled["stopped_because"], settled  # it always says why it stopped
    if c["verdict"] == "improved":
        assert settled["settled"] and settled["stopped_because"].startswith("the rank test decided"), settled
        assert proc.returncode == 0 and module_clock["outcome"] == "improved" and module_clock["p_value"] < 0.05
        assert module_clock["delta_ms"] < -module_clock["band_ms"]
    else:
        # a busy machine's band swallowed the change: inconclusive, exit 4, never a regression
        assert c["verdict"] == "inconclusive" and proc.returncode == 4, proc.stdout + proc.stderr
    assert (before.read_bytes(), after.read_bytes()) == given, "the reports given were rewritten"
    assert list(scratch.iterdir()) == [], "the added samples left temporary files"
    assert c["workload"]["status"] == "same"
    assert c["workload"]["renames"] == [{"before": "run__locals__finish", "after": "finish"}]
    (receipt,) = [r for r in c["receipts"] if r["module"] == "__main__"]
    assert receipt["changed"] and len(receipt["before"]) == 2 and len(receipt["after"]) == 1
    structure = {s["name"]: (s["before"], s["after"]) for s in c["structure"]}
    assert structure["identities"] == (2, 1)
    assert f"VERDICT: {c['verdict']}" in proc.stdout

    # a notebook cell's report is re-run from its cell's code, like any run: one this user did
    # not measure here shows the cell it would run and runs nothing without --run
    cell = json.loads(before.read_text())
    cell["cell_code"] = "wp.launch(k, dim=1)"
    cell_path = tmp_path / "cell.json"
    cell_path.write_text(json.dumps(cell))
    refused = subprocess.run([str(PROBE), "compare", str(cell_path), str(after), "--until-settled"],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 77, refused.stderr
    assert "notebook cell (1 lines)" in refused.stderr and "wp.launch(k, dim=1)" in refused.stderr


def test_kernel_factory_against_merged_launches_is_invalid(measure_version, tmp_path):
    before = measure_version("factory.py", samples=1)
    after = measure_version("factory_merged.py", samples=1)
    proc, c = compare(before, after, tmp_path)
    assert proc.returncode == 2
    assert c["verdict"] == "invalid"
    w = c["workload"]
    assert w["status"] == "changed" and w["before_launches"] == 3 and w["after_launches"] == 1
    assert w["first_divergence"]["index"] == 1  # the second launch has no counterpart
    assert {m["kernel"]: (m["before"], m["after"]) for m in w["moved_counts"]} == {"scale_all": (3, 1)}
    assert "first divergence at launch #2" in proc.stdout


def test_same_program_twice_is_inconclusive(measure_version, tmp_path):
    # An identical program must not be credited with a gain. The rule (beyond the band AND
    # p < 0.05 with 5 samples a side) has a false-positive rate near 3%; one fresh pair of
    # measurements is allowed before the test concludes the rule is broken.
    for attempt in range(2):
        # a small program (one module of one kernel): the rule, not the program, is under test
        before = measure_version("app_library.py", samples=5)
        after = measure_version("app_library.py", samples=5)
        proc, c = compare(before, after, tmp_path)
        assert c["workload"]["status"] == "same"
        assert c["same_structure"] and "compile elapsed" in c["judged_on"]
        assert all(not r["changed"] for r in c["receipts"])
        if c["verdict"] == "inconclusive":
            break
    assert c["verdict"] == "inconclusive", proc.stdout
    assert proc.returncode == 4


def test_backward_set_after_import_never_reaches_the_library_module(measure_version, tmp_path):
    baseline = measure_version("app_library.py", samples=1)
    too_late = measure_version("app_backward_too_late.py", samples=1)
    proc, c = compare(baseline, too_late, tmp_path)
    (lib,) = [r for r in c["receipts"] if r["module"] == "lib_solver"]
    assert not lib["changed"], "the library module's hash moved although the option came too late"
    (check,) = c["option_checks"]
    assert check["option"] == "enable_backward" and check["module"] == "lib_solver"
    assert check["intended"] is False and check["module_value"] is True
    assert check["set_at"]["file"].endswith("app.py") and check["set_at"]["line"] == 6
    assert "never reached module lib_solver" in proc.stdout

    # the working fix: the hash moves and nothing is called out
    in_time = measure_version("app_backward_in_time.py", samples=1)
    proc2, c2 = compare(baseline, in_time, tmp_path)
    (lib2,) = [r for r in c2["receipts"] if r["module"] == "lib_solver"]
    assert lib2["changed"]
    assert c2["option_checks"] == []


def test_bad_inputs_are_one_line_with_their_code(tmp_path, measure_version):
    good = measure_version("factory.py", samples=1)
    missing = subprocess.run([str(PROBE), "compare", str(tmp_path / "nope.json"), str(good)], capture_output=True, text=True)
    assert missing.returncode == 66 and len(missing.stderr.strip().splitlines()) == 1
    not_json = tmp_path / "x.json"
    not_json.write_text("<html>")
    bad = subprocess.run([str(PROBE), "compare", str(good), str(not_json)], capture_output=True, text=True)
    assert bad.returncode == 65 and "not JSON" in bad.stderr
    failed = json.loads(good.read_text())
    for s in failed["samples"]:
        s["cold"]["exit_code"] = 1
        s["warm"] = None
    failed_path = tmp_path / "failed.json"
    failed_path.write_text(json.dumps(failed))
    f = subprocess.run([str(PROBE), "compare", str(good), str(failed_path)], capture_output=True, text=True)
    assert f.returncode == 65
    assert f.stderr.strip() == f"warp-probe: {failed_path} at /samples: the measured run failed (expected a sample that succeeded, got none): nothing to compare"
