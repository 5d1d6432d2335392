"""Shared helpers for the Python test suite: real warp-probe runs on real Warp (CPU)."""

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGETS = Path(__file__).resolve().parent / "targets"
BUILD = Path(os.environ.get("XWARP_BUILD_DIR", ROOT / "build"))
PROBE = Path(os.environ.get("XWARP_PROBE_BIN", BUILD / "warp-probe"))
VENV_PYTHON = Path(os.environ.get("XWARP_TEST_PYTHON", ROOT / ".venv" / "bin" / "python3"))
OLD_WARP_PYTHON = Path(os.environ.get("XWARP_OLD_WARP_PYTHON", ROOT / ".venv-warp-old" / "bin" / "python3"))
# The built schema: its what-if lever enum is generated from the shim-inputs contract when built.
SCHEMA = json.loads((BUILD / "share" / "xwarp" / "report.schema.json").read_text())

# The measured programs live in targets/; they are commands to probe, not tests to collect.
collect_ignore_glob = ["targets/*"]


# Under pytest-xdist (scripts/test.sh: --dist loadgroup) each test goes to whichever worker is free,
# except the files whose module-scoped fixtures are costly to make twice (the wheel and its venv, a
# measured run several tests read), each kept on one worker. The longest units start first, so
# that none of them is left to run alone at the end.
ONE_WORKER = ("test_pip", "test_cli_report", "test_hardening", "test_notebook", "test_real_shapes", "test_warmup_hostile")
FIRST = ("test_pip", "test_lesson_cheats", "test_lessons")


def pytest_collection_modifyitems(config, items):
    # ONE_WORKER files carry pytestmark = pytest.mark.xdist_group(...) themselves: a marker added
    # here can come after pytest-xdist has read the groups
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__.rsplit(".", 1)[-1], len(FIRST)))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "quick: part of `scripts/test.sh --quick` (one real-Warp run per behaviour family, the rest on recorded streams)",
    )


@pytest.fixture(autouse=True, scope="session")
def private_history(tmp_path_factory):
    """Every run the suite makes (CLI, kernels, notebooks) is stored in a history of its own, and
    every warm-up plan it writes noted in a ledger of its own, never in the user's (or root's)
    $XDG_DATA_HOME."""
    path = tmp_path_factory.mktemp("history") / "history.sqlite3"
    os.environ["XWARP_HISTORY"] = str(path)
    # the warm-up plans the suite writes are noted in a ledger of its own too
    os.environ["XWARP_PLAN_LEDGER"] = str(path.parent / "warmup-plans")
    yield path


def run_ok(cmd, **kw):
    """Run a command (paths allowed), fail the test with its output unless it exits 0."""
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    proc = subprocess.run([str(c) for c in cmd], **kw)
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def execute_notebook(nb, kernel_name, folder, timeout, allow_errors=False):
    """Runs every cell of `nb` in a real kernel over the real protocol (nbclient), in `folder`.
    A kernel that dies fails the test with how it ended (the signal) and the end of its stderr
    (where the xwarp kernel writes its stack): nbclient says only "Kernel died"."""
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    km = KernelManager(kernel_name=kernel_name)  # ours, so that it is still there after a death
    with tempfile.TemporaryFile() as stderr:  # never in the notebook's folder
        try:
            NotebookClient(nb, km=km, timeout=timeout, allow_errors=allow_errors,
                           resources={"metadata": {"path": str(folder)}}).execute(stderr=stderr)
        except DeadKernelError:
            process = km.provisioner.process if km.provisioner else None
            code = process.poll() if process else None
            how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0
                   else f"exit status {code}")
            stderr.seek(0)
            tail = stderr.read()[-6000:].decode(errors="replace")
            raise AssertionError(f"{kernel_name} kernel died: {how}\nits stderr ends:\n{tail}") from None
        finally:
            if km.has_kernel:
                km.shutdown_kernel(now=True)
            stderr.seek(0)
            sys.stderr.write(stderr.read().decode(errors="replace"))  # pytest shows it with a failure


def validate_report(report):
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


class ProbeRun:
    def __init__(self, proc, report, tmpdir, json_path=None):
        self.json_path = json_path  # where the report was written
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.report = report
        self.tmpdir = tmpdir

    @property
    def cold(self):
        return self.report["samples"][0]["cold"]

    @property
    def warm(self):
        return self.report["samples"][0]["warm"]

    def leftover_temp(self):
        return sorted(p.name for p in Path(self.tmpdir).iterdir())


@pytest.fixture
def probe(tmp_path):
    """Run `warp-probe measure` with a private TMPDIR so leftovers can be checked."""

    def run(command, *, samples=1, cwd=TARGETS, timeout=None, extra_args=(), env=None, check_schema=True):
        out = tmp_path / f"report-{len(list(tmp_path.glob('report-*.json')))}.json"
        tmpdir = tmp_path / "probe-tmp"
        tmpdir.mkdir(exist_ok=True)
        args = [str(PROBE), "measure", "--quiet", "--json", str(out), "--cwd", str(cwd)]
        if "--samples" not in [str(a) for a in extra_args]:
            args += ["--samples", str(samples)]
        if timeout is not None:
            args += ["--timeout", str(timeout)]
        args += list(extra_args) + ["--"] + [str(c) for c in command]
        full_env = dict(os.environ, TMPDIR=str(tmpdir))
        full_env.update(env or {})
        proc = subprocess.run(args, capture_output=True, text=True, env=full_env, timeout=600)
        report = json.loads(out.read_text()) if out.exists() else None
        if report is not None and check_schema:
            validate_report(report)
        return ProbeRun(proc, report, tmpdir, out)

    return run


@pytest.fixture
def busy_loops():
    """Starts N CPU-bound processes beside the test (as a shared machine's other jobs); killed
    when the test ends, whatever it did."""
    started = []

    def start(n):
        started.extend(subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n))

    yield start
    for p in started:
        p.kill()
    for p in started:
        p.wait()


@pytest.fixture
def venv_python():
    if not VENV_PYTHON.exists():
        pytest.fail(f"{VENV_PYTHON} missing: run scripts/setup.sh first")
    return VENV_PYTHON


def loads_of(run_result, module=None, status=None):
    return [
        l
        for l in run_result["module_loads"]
        if (module is None or l["module"] == module) and (status is None or l["status"] == status)
    ]


def copy_target(name, dest):
    src = TARGETS / name
    if src.is_dir():
        shutil.copytree(src, dest / name)
    else:
        shutil.copy2(src, dest / name)
    return dest / name


def alive_with(marker):
    """The live processes (pids as this test sees them) whose command line holds `marker`, a path
    unique to the test: found from outside whatever PID namespace the run gave them, where the
    pids they would write down are the namespace's own."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
        if str(marker) in cmdline and state not in ("Z", "X"):
            found.append(int(proc.name))
    return found


def none_alive_with(marker, timeout=10.0):
    """True when no live process's command line holds `marker`, waiting up to `timeout` s."""
    import time
    deadline = time.monotonic() + timeout
    while alive_with(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def process_ends(pid, timeout=10.0):
    """Waits for process `pid` to end, woken by its exit (a pidfd, not a poll of /proc), at most
    `timeout` seconds. True when it ended (a zombie has ended); an unknown pid has too."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        waiter = select.poll()
        waiter.register(fd, select.POLLIN)
        return bool(waiter.poll(timeout * 1000))
    finally:
        os.close(fd)
