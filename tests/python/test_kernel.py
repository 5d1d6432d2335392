"""The xwarp kernel over the real Jupyter protocol (jupyter_client, jupyter_kernel_test)."""

import json
import re
import shutil
import signal
import os

REPORT_MIME = "application/vnd.xwarp.report+json"
COMPARISON_MIME = "application/vnd.xwarp.comparison+json"
import subprocess
import time
import unittest
from pathlib import Path

import jupyter_kernel_test
import nbformat
import pytest
from jupyter_client.manager import KernelManager

from conftest import BUILD, PROBE, TARGETS, execute_notebook, none_alive_with, process_ends, validate_report

# The build tree's kernelspec (build/share/jupyter/kernels/xwarp) comes first.
os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")


class XwarpKernelTests(jupyter_kernel_test.KernelTests):
    """The protocol conformance suite: normal cells behave as in xpython."""

    kernel_name = "xwarp"
    language_name = "python"
    file_extension = ".py"
    code_hello_world = 'print("hello, world")'
    code_stderr = "import sys; print('oops', file=sys.stderr)"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples = ["1", "print('hello, world')", "x = [1, 2]"]
    incomplete_code_samples = ["print('hello", "def f(x):"]
    invalid_code_samples = ["import = 7q"]
    code_page_something = "?print"
    code_generate_error = "raise ValueError('boom')"
    code_execute_result = [{"code": "6*7", "result": "42"}, {"code": "'x' * 3", "result": "'xxx'"}]
    code_display_data = [
        {"code": "from IPython.display import HTML, display; display(HTML('<b>x</b>'))", "mime": "text/html"},
        {"code": "%warp_history", "mime": "text/html"},
    ]
    code_inspect_sample = "open"
    code_clear_output = "from IPython.display import clear_output; clear_output()"
    # history is left out: xeus 2.4's in-memory history answers in a shape the schema rejects


# -- helpers for the custom tests -------------------------------------------------------------


# Starts the command after it with SIGINT ignored, as `nohup` or a shell's `&` would (exec keeps
# both the ignore and the pid).
IGNORING_SIGINT = ["/usr/bin/python3", "-c",
                   "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execvp(sys.argv[1], sys.argv[1:])"]


class Session:
    def __init__(self, tmpdir, cwd, launcher=(), env=None, binary=None):
        env = dict(os.environ, TMPDIR=str(tmpdir), **(env or {}))
        self.km = KernelManager(kernel_name="xwarp")
        if binary:  # the kernel as installed elsewhere (a copy of the binary in another prefix)
            self.km.kernel_spec.argv = [str(binary)] + self.km.kernel_spec.argv[1:]
        if launcher:
            self.km.kernel_spec.argv = list(launcher) + self.km.kernel_spec.argv
        self.km.start_kernel(env=env, cwd=str(cwd))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def execute(self, code, timeout=600, on_busy=None):
        msg_id = self.kc.execute(code)
        outputs = []
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind = msg["msg_type"]
            if kind == "status" and msg["content"]["execution_state"] == "idle":
                break
            if kind != "status":
                outputs.append(msg)
                if on_busy:
                    on_busy(msg)
        reply = self.kc.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.kc.get_shell_msg(timeout=timeout)
        return reply["content"], outputs

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)


def bundles(outputs, kind="display_data"):
    return [m["content"]["data"] for m in outputs if m["msg_type"] == kind]


def stdout(outputs):
    return "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")


@pytest.fixture
def session(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    s = Session(tmp, TARGETS)
    s.tmp = tmp
    yield s
    s.close()


@pytest.mark.quick
def test_kernel_info_names_xwarp_without_a_debugger(session):
    session.kc.kernel_info()
    reply = session.kc.get_shell_msg(timeout=10)
    info = reply["content"]
    assert info["implementation"] == "xwarp"
    assert info["debugger"] is False
    assert info["language_info"]["name"] == "python"


def test_ipython_magics_and_execution_counts_survive_a_probe(session):
    reply, out = session.execute("%%timeit -n1 -r1\nsum(range(10))")
    assert reply["status"] == "ok" and "per loop" in stdout(out)
    reply, out = session.execute(
        "%%warp_probe --samples 1 --name first\n"
        "import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
        "a = wp.zeros(4, dtype=float)\nwp.launch(k, dim=4, inputs=[a])\n"
    )
    assert reply["status"] == "ok"
    progress = [m for m in out if m["msg_type"] == "update_display_data"]
    assert progress, "no live progress was shown"
    assert "warp-probe: first done" in progress[-1]["content"]["data"]["text/plain"]
    (report_bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    validate_report(report_bundle[REPORT_MIME])
    assert report_bundle[REPORT_MIME]["command"] == ["python", "<cell>"]
    assert 'data-xwarp="identities"' in report_bundle["text/html"]
    assert "Module identities" in report_bundle["text/plain"]
    count = reply["execution_count"]
    reply, out = session.execute("6*7")
    (result,) = [m for m in out if m["msg_type"] == "execute_result"]
    assert result["content"]["execution_count"] == reply["execution_count"] == count + 1


def test_output_variable_is_a_dict_with_html(session):
    reply, _ = session.execute(
        "%%warp_probe --samples 1 -o rep --quiet\nimport warp as wp\n\n@wp.kernel\n"
        "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\nwp.launch(k, dim=2, inputs=[wp.zeros(2, dtype=float)])\n"
    )
    assert reply["status"] == "ok"
    reply, out = session.execute("print(type(rep).__name__, rep['summary']['valid'], rep['schema_version'], "
                                 "'data-xwarp' in rep._repr_html_())")
    assert stdout(out).strip() == "WarpProbeReport True 4 True"


def stderr(outputs):
    return "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream" and m["content"]["name"] == "stderr")


def errors(outputs):
    return [m["content"] for m in outputs if m["msg_type"] == "error"]


@pytest.mark.quick
def test_usage_errors_are_error_replies_with_the_usage(session):
    # A magic with bad options fails the cell (so Run All stops there), showing the usage
    # text alone, without a traceback.
    reply, out = session.execute("%%warp_probe --samples nope\nx = 1\n")
    assert reply["status"] == "error" and "WarpProbeUsageError" in reply["ename"]
    (err,) = errors(out)
    assert "--samples: expected a whole number from 1 to 1000 or auto, got 'nope'" in err["evalue"]
    assert "Usage" in err["evalue"] or "Options" in err["evalue"]
    assert "Traceback" not in "\n".join(err["traceback"])
    assert not bundles(out)  # nothing ran
    reply, out = session.execute("%warp_compare missing-a missing-b")
    assert reply["status"] == "error" and "not a run of this notebook" in errors(out)[0]["evalue"]
    reply, out = session.execute("1 + 1")
    assert reply["status"] == "ok"


def test_a_failing_quiet_probe_still_shows_its_failure(session):
    reply, out = session.execute("%%warp_probe --samples 1 --quiet --allow-fail\nraise RuntimeError('boom in the cell')\n")
    assert reply["status"] == "ok"  # --allow-fail: a lesson that fails on purpose goes on
    (bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    assert bundle[REPORT_MIME]["status"] == "failed"
    assert "RuntimeError: boom in the cell" in bundle["text/plain"]


@pytest.mark.parametrize("cell,why", [
    ("raise RuntimeError('boom in the cell')", "exited with code 1"),
    ("import sys\nsys.exit(3)", "exited with code 3"),
    ("import ctypes\nctypes.string_at(0)", "killed by signal 11"),
    ("import time\ntime.sleep(60)", "timed out"),
], ids=["raises", "exits-3", "segfaults", "times-out"])
def test_a_program_that_fails_in_every_sample_fails_the_cell_after_its_report(session, cell, why):
    # As the CLI exits 1: Run All and nbclient stop at the cell, which still shows the report.
    reply, out = session.execute(f"%%warp_probe --samples 1 --timeout 3\n{cell}\n")
    assert reply["status"] == "error" and "WarpProbeProgramFailed" in reply["ename"], reply
    assert why in errors(out)[0]["evalue"]
    (bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    assert bundle[REPORT_MIME]["status"] == "failed"


def test_a_report_that_crashed_the_kernel_is_now_an_error_reply(session, tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema_version": 2, "samples": [], "x": ' + "[" * 100000 + "]" * 100000 + "}")
    reply, out = session.execute(f"%warp_compare {deep} {deep}")
    assert reply["status"] == "error" and "nested deeper than 128 levels" in errors(out)[0]["evalue"]
    reply, out = session.execute("print(40 + 2)")  # the kernel is alive
    assert reply["status"] == "ok" and stdout(out).strip() == "42"


def test_a_report_file_from_elsewhere_is_not_re_run_by_a_magic_without_run(session, tmp_path):
    """%warp_compare --until-settled re-runs both sides: a file's command that this user did not
    run here is shown and refused; --run lets it through."""
    made = tmp_path / "made.json"
    stream = Path(__file__).resolve().parents[1] / "fixtures" / "streams" / "clean-warp1.19.0"
    assert subprocess.run([str(PROBE), "report", str(stream), "--format", "json", "-o", str(made)]).returncode == 0
    doc = json.loads(made.read_text())
    marker = tmp_path / "ran.txt"
    doc["command"], doc["cwd"] = ["sh", "-c", f"echo ran >> {marker}"], str(tmp_path)
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps(doc))
    reply, out = session.execute(f"%warp_compare {theirs} {theirs} --until-settled --max-samples 2")
    assert reply["status"] == "error", reply
    said = errors(out)[0]["evalue"]
    assert "asks to run what you have not run here" in said and f"echo ran >> {marker}" in said and "--run" in said
    assert not marker.exists()
    reply, out = session.execute(f"%warp_compare {theirs} {theirs} --until-settled --max-samples 2 --run")
    assert reply["status"] == "ok", errors(out)  # asked no more (the verdict, unverified, settled at once)


def kernel_stacks(session):
    """Every thread's stack of a kernel that did not answer (gdb, where installed): what it waits on."""
    pid = session.km.provisioner.process.pid
    if not shutil.which("gdb"):
        return "(no gdb here to show the kernel's threads)"
    out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 25"],
                         capture_output=True, text=True, timeout=120)
    sig = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}/status").exists() else ""
    return "\n".join(l for l in sig.splitlines() if l.startswith("Sig")) + "\n" + out.stdout[-12000:]


@pytest.fixture
def session_started_ignoring_sigint(tmp_path):
    """A kernel started by a Jupyter that ignores SIGINT (nohup, `jupyter lab &` in a script): the
    ignore is inherited, and the kernel must still take interrupts."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # not by ignoring SIGINT here: a pytest-xdist worker may run tests off its main thread
    s = Session(tmp, TARGETS, launcher=IGNORING_SIGINT)
    s.tmp = tmp
    yield s
    s.close()


def test_interrupting_a_probe_kills_it_and_leaves_nothing(session_started_ignoring_sigint, tmp_path):
    session = session_started_ignoring_sigint
    pid_file = tmp_path / "pids"
    code = (
        "%%warp_probe --samples 1\n"
        "import os, subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {str(pid_file)!r}])\n"
        f"open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(600)\n"
    )
    started = []

    def interrupt_when_started(msg):
        if not started and pid_file.exists() and pid_file.read_text().strip():
            started.append(True)
            session.km.interrupt_kernel()

    msg_id = session.kc.execute(code)
    deadline = time.monotonic() + 60
    reply = None
    while time.monotonic() < deadline:
        if not started and pid_file.exists() and pid_file.read_text().strip():
            started.append(True)
            time.sleep(0.2)
            session.km.interrupt_kernel()
        try:
            msg = session.kc.get_shell_msg(timeout=0.2)
        except Exception:
            continue
        if msg["parent_header"].get("msg_id") == msg_id:
            reply = msg["content"]
            break
    assert started, "the probed cell never wrote its pid file: no interrupt was sent"
    assert reply is not None, "the probe did not stop after the interrupt\n" + kernel_stacks(session)
    assert reply["status"] == "error" and "KeyboardInterrupt" in reply["ename"]
    # the cell's process and its child (found by the path in their command lines: their pids are
    # the run's PID namespace's)
    assert none_alive_with(pid_file), "the cell's process or its child survived the interrupt"
    assert list(session.tmp.iterdir()) == [], "temporary files were left behind"
    # the kernel survives, and an interrupt while idle does nothing
    session.km.interrupt_kernel()
    time.sleep(0.5)
    reply, out = session.execute("print('still here')")
    assert reply["status"] == "ok" and stdout(out).strip() == "still here"


def test_processes_escaping_a_probe_are_killed_without_zombies_in_the_kernel(session):
    from conftest import TARGETS, VENV_PYTHON

    escape = TARGETS / "hostile" / "escape.py"
    reply, out = session.execute(f"%warp_probe --samples 1 -- {VENV_PYTHON} {escape}")
    assert reply["status"] == "ok"
    (bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    assert bundle[REPORT_MIME]["samples"][0]["cold"]["stray_processes_killed"] == 2
    kernel_pid = session.km.provisioner.process.pid
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        assert cmdline not in (b"sleep\x001007\x00", b"sleep\x001008\x00") or fields[0] in ("Z", "X"), "a sleeper escaped"
        assert not (fields[0] == "Z" and int(fields[1]) == kernel_pid), f"zombie {proc.name} left in the kernel"


def test_provisional_findings_then_the_report_in_the_same_display(session):
    reply, out = session.execute(
        "%%warp_probe --samples 2\nimport warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n"
        "    a[wp.tid()] = 1.0\n\nwp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n"
        "@wp.kernel\ndef k2(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\n"
        "wp.launch(k2, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    assert reply["status"] == "ok"
    provisional = [m for m in out if m["msg_type"] == "display_data"
                   and "provisional: 1 of 2 samples" in m["content"]["data"].get("text/plain", "")]
    assert len(provisional) == 1
    display_id = provisional[0]["content"]["transient"]["display_id"]
    (final,) = [m for m in out if m["msg_type"] == "update_display_data"
                and m["content"]["transient"]["display_id"] == display_id and REPORT_MIME in m["content"]["data"]]
    assert len(final["content"]["data"][REPORT_MIME]["samples"]) == 2
    assert out.index(provisional[0]) < out.index(final)


def test_shutdown_is_clean(tmp_path):
    s = Session(tmp_path, TARGETS)
    pid = s.km.provisioner.process.pid if hasattr(s.km, "provisioner") else s.km.kernel.pid
    reply, _ = s.execute("x = 1")
    assert reply["status"] == "ok"
    s.close()
    assert process_ends(pid)
    assert not s.km.is_alive()


def test_kernelspec_is_installed_where_jupyter_looks():
    out = subprocess.run(["jupyter", "kernelspec", "list", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    specs = json.loads(out.stdout)["kernelspecs"]
    assert "xwarp" in specs
    spec = specs["xwarp"]["spec"]
    assert spec["language"] == "python" and spec["metadata"]["debugger"] is False
    assert Path(spec["argv"][0]).exists()


def test_hostile_module_name_stays_inert(session):
    reply, out = session.execute(
        "%%warp_probe --samples 1\nimport warp as wp\n\n"
        "@wp.kernel(module=\"<img src=x onerror=alert(1)>\")\n"
        "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
        "wp.launch(k, dim=2, inputs=[wp.zeros(2, dtype=float)])\n"
    )
    assert reply["status"] == "ok"
    (bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    assert bundle[REPORT_MIME]["summary"]["identities"][0]["module"] == "<img src=x onerror=alert(1)>"
    assert "<img" not in bundle["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in bundle["text/html"]


def test_history_survives_a_kernel_restart(session):
    reply, out = session.execute(
        "%%warp_probe --samples 1 --name before-restart\n"
        "import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 3.0\n\n"
        "wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    assert reply["status"] == "ok"
    done = [m for m in out if m["msg_type"] == "update_display_data"
            and "before-restart done" in m["content"]["data"].get("text/plain", "")]
    stored = re.search(r"stored as @(\d+)", done[-1]["content"]["data"]["text/plain"])
    assert stored, done[-1]["content"]["data"]["text/plain"]

    session.km.restart_kernel(now=True)
    session.kc.wait_for_ready(timeout=60)
    reply, out = session.execute("%warp_history --label before-restart")
    assert reply["status"] == "ok"
    (listed,) = bundles(out)
    assert f"@{stored.group(1)}" in listed["text/html"] and "before-restart" in listed["text/plain"]
    assert "notebook cell before-restart" in listed["text/plain"]
    # the new kernel never ran it, yet compares it by its name and by its id
    reply, out = session.execute(f"%warp_compare before-restart @{stored.group(1)}")
    assert reply["status"] == "ok", reply
    (compared,) = [b for b in bundles(out) if COMPARISON_MIME in b]
    assert compared[COMPARISON_MIME]["verdict"]


def test_expect_shows_met_or_not_met_and_strict_fails_the_cell(session):
    late = ("import warp as wp\n\n@wp.kernel\ndef k1(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
            "a = wp.zeros(4, dtype=float)\nwp.launch(k1, dim=4, inputs=[a])\n\n"
            "@wp.kernel\ndef k2(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\nwp.launch(k2, dim=4, inputs=[a])\n")
    reply, out = session.execute("%%warp_probe --samples 1 --expect 'builds-per-module<=1' --strict\n" + late)
    assert reply["status"] == "error" and "WarpProbeExpectationNotMet" in reply["ename"], reply
    assert "builds-per-module 2 > 1: __main__ on cpu built 2 time" in reply["evalue"]
    (block,) = [b for b in bundles(out) if "application/vnd.xwarp.expectation+json" in b]
    assert block["application/vnd.xwarp.expectation+json"]["met"] is False
    assert 'data-met="false"' in block["text/html"] and "Expectation: not met" in block["text/plain"]
    assert any(REPORT_MIME in b for b in bundles(out) + bundles(out, "update_display_data")), "the report is still shown"

    fixed = ("import warp as wp\n\n@wp.kernel\ndef k1(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
             "@wp.kernel\ndef k2(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\n"
             "a = wp.zeros(4, dtype=float)\nwp.launch(k1, dim=4, inputs=[a])\nwp.launch(k2, dim=4, inputs=[a])\n")
    reply, out = session.execute("%%warp_probe --samples 1 --expect 'identities<=1,builds-per-module<=1' --strict\n" + fixed)
    assert reply["status"] == "ok", reply
    (block,) = [b for b in bundles(out) if "application/vnd.xwarp.expectation+json" in b]
    assert block["application/vnd.xwarp.expectation+json"]["met"] is True

    reply, _ = session.execute("%%warp_probe --expect 'identities=<1'\npass\n")
    assert reply["status"] == "error" and "--expect" in reply["evalue"]


def test_a_kernel_that_crashes_says_which_signal_killed_it_and_where(tmp_path):
    # Jupyter sees only "the kernel died"; the kernel writes the signal and its stack to stderr
    # first, and the suite's notebook runner puts both in the failure (CI shows nothing else).
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")]
    with pytest.raises(AssertionError) as died:
        execute_notebook(nb, "xwarp", tmp_path, timeout=120)
    said = str(died.value)
    assert said.startswith("xwarp kernel died: killed by SIGSEGV\n"), said
    stack = said.split("xwarp: the kernel dies of SIGSEGV; its stack:\n", 1)
    assert len(stack) == 2, said
    frames = stack[1].splitlines()
    assert any("/xwarp(" in f for f in frames) and any("libpython" in f for f in frames), said


def test_warp_fix_writes_the_cells_patch_and_verifies_it(session):
    # A cell that sets a module option after its module loaded (CS-3): %warp_fix writes the
    # patch against the cell's script (setup, then the cell) and proves it on a copy.
    reply, _ = session.execute(
        "%%warp_probe --samples 1 --name late_opt\nimport warp as wp\nwp.config.use_precompiled_headers = False\n\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = wp.sin(a[wp.tid()]) * 2.0\n\n"
        "a = wp.zeros(8, dtype=float)\nwp.launch(k, dim=8, inputs=[a])\n"
        "wp.set_module_options({'fast_math': True})\nwp.launch(k, dim=8, inputs=[a])\n"
    )
    assert reply["status"] == "ok"
    reply, out = session.execute("%warp_fix late_opt --finding CS-3 --verify --samples 2")
    assert reply["status"] == "ok", errors(out)
    (bundle,) = [b for b in bundles(out) if REPORT_MIME in b]
    (fix,) = bundle[REPORT_MIME]["fixes"]
    assert fix["verdict"] == "verified", json.dumps(fix)
    assert "+wp.set_module_options({'fast_math': True})" in fix["patch"] and "cell.py" in fix["patch"]
    assert 'data-xwarp="fixes"' in bundle["text/html"] and "verified" in bundle["text/plain"]
    assert list(session.tmp.iterdir()) == [], "temporary files were left behind"


def test_warp_warmup_builds_a_cells_kernels_and_verifies_it(session):
    # A lesson-shaped cell (its kernel defined in the cell, launched at top level): the warm-up
    # carries the cell's definitions, the notebook shows its coverage and its verification.
    reply, _ = session.execute(
        "%%warp_probe --samples 1 --name cell_run\nimport warp as wp\n\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = wp.cos(a[wp.tid()]) + 1.0\n\n"
        "a = wp.zeros(8, dtype=float)\nwp.launch(k, dim=8, inputs=[a])\n"
    )
    assert reply["status"] == "ok"
    reply, out = session.execute("%warp_warmup cell_run --verify --samples 1")
    assert reply["status"] == "ok", [b.get("text/plain") for b in bundles(out)]
    (bundle,) = [b for b in bundles(out) if "text/plain" in b and "Warm-up for" in b["text/plain"]]
    text = bundle["text/plain"]
    assert "covers 1 of 1 identities" in text and "VERIFIED" in text and "builds left at run time: 0" in text, text
    # the plan holds no code: the cell's definitions travel in NAME_cell.py beside it
    assert re.search(r"\"cell\": \"[0-9a-f]{64}\"", text) and "\"entry_source\"" not in text and "<details>" in bundle["text/html"]
    assert list(session.tmp.iterdir()) == [], "temporary files were left behind"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "30,000 names"])
def test_an_exercises_file_that_is_no_file_or_too_large_never_hangs_or_floods_the_kernel(tmp_path, kind):
    """share/xwarp/exercises.json is read once at the kernel's start, bounded: a FIFO does not hang
    it, /dev/zero does not fill its memory, and an answer naming no exercise gets one escaped line
    naming the first few, not megabytes of names with their control characters. The file is the
    install's (never one XWARP_SHIM_DIR names): the kernel is installed here, a copy of its binary
    in PREFIX/bin with the shim and that file in PREFIX/share/xwarp."""
    share = tmp_path / "share" / "xwarp"
    shutil.copytree(BUILD / "share" / "xwarp" / "shim", share / "shim")
    (tmp_path / "bin").mkdir()
    shutil.copy2(BUILD / "xwarp", tmp_path / "bin" / "xwarp")
    exercises = share / "exercises.json"
    if kind == "fifo":
        os.mkfifo(exercises)
    elif kind == "dev-zero":
        exercises.symlink_to("/dev/zero")
    else:
        exercises.write_text(json.dumps({f"name\x1b]0;{n}\x07\u202e": {"expect": "identities<=1", "broken": "pass"}
                                         for n in range(30_000)}))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    started = time.monotonic()
    s = Session(tmp, TARGETS, binary=tmp_path / "bin" / "xwarp")
    try:
        assert time.monotonic() - started < 60
        reply, out = s.execute("%%warp_probe --exercise no_such_lesson\nimport warp as wp\n", timeout=120)
        said = "".join(m["content"].get("evalue", "") + m["content"].get("text", "") for m in out
                       if m["msg_type"] in ("error", "stream")) + json.dumps(reply)
        assert len(said) < 20_000 and "\x1b" not in said and "\u202e" not in said, said[:2000]
        assert ("not installed" if kind != "30,000 names" else "and 29980 more") in said, said[:2000]
    finally:
        s.close()
