"""warp-probe measure on real Warp (CPU): what the engine records for real programs."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import OLD_WARP_PYTHON, PROBE, TARGETS, alive_with, loads_of, none_alive_with, process_ends


def line_of(target, text):
    for n, line in enumerate((TARGETS / target).read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {target}")


def hashes(run, module):
    seen = []
    for l in loads_of(run, module):
        if l["hash"] not in seen:
            seen.append(l["hash"])
    return seen


@pytest.mark.quick
def test_kernel_defined_after_launch_gives_one_module_two_hashes(probe, venv_python):
    r = probe([venv_python, "late_kernel.py"], samples=2)
    assert r.returncode == 0, r.stderr
    rep = r.report
    assert rep["status"] == "ok"
    for s in rep["samples"]:
        assert len(hashes(s["cold"], "__main__")) == 2
        assert {l["status"] for l in loads_of(s["cold"], "__main__")} == {"compiled"}
    cold = r.cold
    first, second = loads_of(cold, "__main__")
    assert first["source"] == "hook" and len(first["hash"]) == 64
    assert [k["key"] for k in first["snapshot"]["kernels"]] == ["first"]
    assert sorted(k["key"] for k in second["snapshot"]["kernels"]) == ["first", "second"]
    assert first["native_ms"] > 0 and first["warp_ms"] > 0 and first["total_ms"] >= first["warp_ms"]
    assert first["source_bytes"] > 0 and first["block_dim"] == 1 and first["device"] == "cpu"
    # the dirtying event names the kernel and the user's line
    dirty = cold["processes"][0]["dirty_events"]
    assert [(d["trigger"], d["detail"].get("kernel")) for d in dirty] == [("kernel", "second")]
    assert dirty[0]["file"].endswith("late_kernel.py")
    assert dirty[0]["line"] == line_of("late_kernel.py", "def second") - 1  # its @wp.kernel line
    # launches in order
    assert [l["kernel"] for l in cold["launches"]] == ["first", "second"]
    assert cold["launches"][0]["dtypes"] == ["array[float32,1]"]
    # summary: two identities, one hash-churn group, consistent across both samples
    summ = rep["summary"]
    assert summ["valid"] and summ["samples_ok"] == 2
    assert summ["identities_consistent"]
    assert [i["samples_seen"] for i in summ["identities"]] == [2, 2]
    assert [(g["kind"], g["module"], g["builds"]) for g in summ["rebuilt"]] == [("hash-churn", "__main__", 2)]
    assert summ["compile_elapsed_ms"]["median"] > 0
    assert "hash churn" in r.stdout and "__main__" in r.stdout


def test_clean_program_has_one_identity_and_a_cached_warm_run(probe, venv_python):
    r = probe([venv_python, "clean.py"], samples=2)
    assert r.returncode == 0, r.stderr
    summ = r.report["summary"]
    assert len(summ["identities"]) == 1
    assert summ["rebuilt"] == []
    for s in r.report["samples"]:
        assert [l["status"] for l in s["cold"]["module_loads"]] == ["compiled"]
        assert [l["status"] for l in s["warm"]["module_loads"]] == ["cached"]
        assert s["warm"]["module_loads"][0]["hash"] == s["cold"]["module_loads"][0]["hash"]
        assert s["cold"]["launch_total"] == 5
    assert "CACHE_NOT_REUSED" not in [f["id"] for f in summ["flags"]]
    # the launch run of five identical launches is stored once with its count
    launches = r.cold["launches"]
    assert len(launches) == 1 and launches[0]["count"] == 5


def test_nvrtc_trace_turns_the_option_on_and_says_why_a_cpu_run_has_no_trace(probe, venv_python):
    # The traces themselves need NVRTC (tests/gpu/device_session.sh STEP=nvrtc checks them on a
    # GPU); here: the option reaches the module before it is created, and the report says why
    # there is nothing to merge.
    r = probe([venv_python, "clean.py"], extra_args=["--nvrtc-trace"])
    assert r.returncode == 0, r.stderr
    assert r.report["settings"]["nvrtc_trace"] is True
    assert r.cold["processes"][0]["hooks"]["nvrtc_trace"] is True
    (load,) = r.cold["module_loads"]
    assert load["snapshot"]["options"]["compile_time_trace"] is True
    assert r.cold["nvrtc_traces"] == []
    assert any("no CUDA module was built" in n for n in r.cold["notes"]), r.cold["notes"]
    assert any("compile_time_trace was on" in w for w in r.report["warnings"]), r.report["warnings"]


def test_generic_kernel_meeting_a_new_dtype_after_load(probe, venv_python):
    r = probe([venv_python, "generic_late.py"])
    assert r.returncode == 0, r.stderr
    loads = loads_of(r.cold, "__main__")
    assert len(loads) == 2 and loads[0]["hash"] != loads[1]["hash"]
    sigs_after = sorted(k["sig"] for k in loads[1]["snapshot"]["kernels"])
    assert len(sigs_after) == 2 and all(k["generic"] for k in loads[1]["snapshot"]["kernels"])
    assert len(loads[0]["snapshot"]["kernels"]) == 1
    dirty = r.cold["processes"][0]["dirty_events"]
    assert [d["trigger"] for d in dirty] == ["overload"]
    assert dirty[0]["detail"]["kernel"] == "add_one"
    assert dirty[0]["line"] == line_of("generic_late.py", "inputs=[a64]")  # the launch that met float64
    assert [l["dtypes"] for l in r.cold["launches"]] == [["array[float32,1]"], ["array[float64,1]"]]


def test_app_with_its_own_sitecustomize_and_pythonpath(probe, venv_python):
    app = TARGETS / "app_site"
    path = f"{app / 'site'}:{app / 'lib'}"
    # inherited PYTHONPATH
    r = probe([venv_python, "main.py"], cwd=app, env={"PYTHONPATH": path})
    assert r.returncode == 0, r.stdout + r.stderr
    assert [l["module"] for l in r.cold["module_loads"]] == ["app_helpers"]
    # a PYTHONPATH= token of the command (`env PYTHONPATH=... python main.py`)
    r2 = probe(["env", f"PYTHONPATH={path}", venv_python, "main.py"], cwd=app, env={"PYTHONPATH": ""})
    assert r2.returncode == 0, r2.stdout + r2.stderr
    assert [l["module"] for l in r2.cold["module_loads"]] == ["app_helpers"]
    assert r2.cold["launch_total"] == 1


def test_shell_script_starting_two_python_processes(probe, venv_python):
    r = probe(["sh", "two_procs.sh"], env={"PYTHON": str(venv_python)})
    assert r.returncode == 0, r.stderr
    procs = r.cold["processes"]
    assert len(procs) == 2 and procs[0]["pid"] != procs[1]["pid"]
    by_pid = {}
    for l in r.cold["module_loads"]:
        by_pid.setdefault(l["pid"], []).append(l["module"])
    assert len(by_pid) == 2 and all(v == ["__main__"] for v in by_pid.values())
    # one identity per process's module: two different hashes of __main__, not churn of one process
    assert r.cold["launch_total"] == 5 + 2
    assert {l["pid"] for l in r.cold["launches"]} == {p["pid"] for p in procs}


def test_python_dash_m_and_pytest_commands(probe, venv_python):
    r = probe([venv_python, "-m", "pkg_app"])
    assert r.returncode == 0, r.stderr
    assert [l["module"] for l in r.cold["module_loads"]] == ["__main__"]  # -m runs the package as __main__
    assert [l["kernel"] for l in r.cold["launches"]] == ["fill"]
    t = probe(
        [venv_python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_kernels.py"],
        cwd=TARGETS / "pytest_target",
    )
    assert t.returncode == 0, t.stdout + t.stderr
    assert [l["module"] for l in t.cold["module_loads"]] == ["test_kernels"]
    assert t.cold["launch_total"] == 1


def test_failing_program_fails_every_sample(probe, venv_python):
    r = probe([venv_python, "failing.py"], samples=2)
    assert r.returncode == 1
    rep = r.report
    assert rep["status"] == "failed"
    assert not rep["summary"]["valid"]
    assert rep["summary"]["cold_wall_ms"]["median"] is None
    assert all(s["warm"] is None and s["cold"]["exit_code"] == 1 for s in rep["samples"])
    assert "target failed on purpose" in rep["samples"][0]["cold"]["stderr_tail"]
    assert "No statistics" in r.stdout and "exited with code 1" in r.stdout
    # what the program built before failing is still recorded
    assert loads_of(rep["samples"][0]["cold"], "__main__", "compiled")
    assert r.leftover_temp() == []


def test_hanging_program_is_killed_at_the_timeout(probe, venv_python, tmp_path):
    pid_file = tmp_path / "pids"
    t0 = time.monotonic()
    r = probe([venv_python, "hanging.py", pid_file], timeout=3)
    assert time.monotonic() - t0 < 30
    assert r.returncode == 1
    cold = r.report["samples"][0]["cold"]
    assert cold["timed_out"] and cold["exit_code"] is None
    assert "timed out after 3.0 s" in r.stdout
    assert pid_file.exists(), "the target never started"
    assert none_alive_with(pid_file), "the target or its child survived the timeout"
    assert r.leftover_temp() == []


def test_interrupt_kills_the_target_and_removes_temp(tmp_path, venv_python):
    pid_file = tmp_path / "pids"
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    proc = subprocess.Popen(
        [str(PROBE), "measure", "--quiet", "--", str(venv_python), "hanging.py", str(pid_file)],
        cwd=TARGETS,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert pid_file.exists(), "the target never started"
    # the probe (and, in a PID namespace, the two forks of it around the target), the target and its child
    assert len(alive_with(pid_file)) >= 3, "the target and its child, found by their command lines"
    assert any(p.name.startswith("xwarp-") for p in tmpdir.iterdir())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert none_alive_with(pid_file), "the target or its child survived the interrupt"
    assert list(tmpdir.iterdir()) == []


@pytest.mark.quick
def test_command_not_found_is_one_clear_line(tmp_path):
    proc = subprocess.run(
        [str(PROBE), "measure", "--", "no-such-command-xwarp"], capture_output=True, text=True, cwd=tmp_path
    )
    assert proc.returncode == 127
    assert proc.stderr.strip() == "warp-probe: command not found: no-such-command-xwarp"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.quick
def test_missing_cwd_and_bad_options(tmp_path):
    proc = subprocess.run([str(PROBE), "measure", "--cwd", str(tmp_path / "nope"), "--", "true"], capture_output=True, text=True)
    assert proc.returncode == 66 and "does not exist" in proc.stderr
    proc = subprocess.run([str(PROBE), "measure", "--samples", "0", "--", "true"], capture_output=True, text=True)
    assert proc.returncode == 64


def test_log_fallback_when_hooks_are_missing(probe, venv_python):
    # The test-only switch leaves Warp's load functions unwrapped, as on a version whose
    # internals the shim cannot find: figures must then come from Warp's own log lines.
    r = probe([venv_python, "late_kernel.py"], env={"XWARP_FORCE_LOG_FALLBACK": "1"})
    assert r.returncode == 0, r.stderr
    cold = r.cold
    assert cold["load_source"] == "log"
    loads = loads_of(cold, "__main__")
    assert len(loads) == 2 and all(l["source"] == "log" and len(l["hash"]) == 7 for l in loads)
    assert all(l["block_dim"] == 1 for l in loads)  # DEBUG lines carry block_dim
    assert all(l["native_ms"] and l["native_ms"] > 0 for l in loads)  # "Compile x86" lines
    summ = r.report["summary"]
    assert summ["load_source"] == "log" and summ["module_ms_source"] == "log"
    assert [g["kind"] for g in summ["rebuilt"]] == ["hash-churn"]
    assert "Warp's own log lines" in r.stdout
    assert cold["launch_total"] == 2  # launches are recorded independently of the load hooks


@pytest.mark.skipif(
    not OLD_WARP_PYTHON.exists() and os.environ.get("XWARP_REQUIRE_OLD_WARP") != "1",
    reason="no older Warp venv (scripts/test.sh creates .venv-warp-old with warp-lang 1.10.x)",
)
def test_older_warp_minor(probe):
    assert OLD_WARP_PYTHON.exists(), "scripts/test.sh should have created the older-Warp venv"
    r = probe([OLD_WARP_PYTHON, "late_kernel.py"])
    assert r.returncode == 0, r.stderr
    proc = r.cold["processes"][0]
    assert proc["warp_version"].startswith("1.10.")
    assert proc["hooks"]["status"] == "compile-call"  # 1.9-1.11 call compile() only when building
    loads = loads_of(r.cold, "__main__")
    assert [l["status"] for l in loads] == ["compiled", "compiled"]
    assert loads[0]["hash"] != loads[1]["hash"]
    assert loads[0]["snapshot"]["options_source"] == "module"
    assert [l["status"] for l in r.warm["module_loads"]] == ["cached", "cached"]
    assert [d["trigger"] for d in proc["dirty_events"]] == ["kernel"]
