"""pytest --warp-builds[=N]: Warp's builds in your own test run, where pytest users already look.

Registered by ``pip install xwarp`` (entry point ``pytest11``), off unless asked. In the run you
already make (your cache, your flags, ``-n`` workers included) it records every Warp module load
with the probe's own shim, in each process that runs tests, and at the end prints, like
``--durations``, the N costliest builds with the test that paid each, its module, device and
build time, and the tests that reused it. Each test gets JUnit XML properties
(``warp_builds``, ``warp_build_ms``: what it compiled). The whole run is analysed by
``warp-probe report`` (the same analysis as ``warp-probe measure``), and the report is kept at
``--warp-builds-report PATH`` (default: pytest's cache folder, ``.pytest_cache/xwarp/report.json``):
``warp-probe report`` renders it, ``warp-probe history import`` stores it.

It is one pass on whatever cache the suite had: builds show what this run compiled, not what a
cold run would. ``warp-probe measure -- pytest ...`` measures cold and warm passes on private
caches, and replays levers; this plugin costs one shim per test process and nothing else.
"""

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

_DEFAULT_TOP = 10
_WORKER_KEY = "xwarp_record_dir"


def pytest_addoption(parser):
    group = parser.getgroup("xwarp", "Warp's module builds (xwarp)")
    group.addoption("--warp-builds", action="store", nargs="?", const=_DEFAULT_TOP, type=int, default=None, metavar="N",
                    help="record Warp's module builds in this run and list the N costliest (default %d) with the test "
                         "that paid each and the tests that reused it" % _DEFAULT_TOP)
    group.addoption("--warp-builds-report", action="store", default=None, metavar="PATH",
                    help="write the run's report there (JSON: warp-probe report renders it, history import stores it); "
                         "default: pytest's cache folder")


def _shim_dir():
    """The probe's shim, installed beside this package (share/xwarp/shim), or $XWARP_SHIM_DIR."""
    explicit = os.environ.get("XWARP_SHIM_DIR")
    if explicit and (Path(explicit) / "xwarp_shim" / "__init__.py").is_file():
        return Path(explicit)
    from xwarp import data_dir

    share = data_dir()
    return share / "shim" if share is not None and (share / "shim" / "xwarp_shim" / "__init__.py").is_file() else None


def _start_shim(record_dir):
    """The shim in this process, recording into record_dir. None when there is none to start, or
    when this process is measured by warp-probe already (the probe's report has its builds)."""
    running = sys.modules.get("xwarp_shim")
    if running is not None and getattr(running, "active_recorder", lambda: None)() is not None:
        return None
    shim = _shim_dir()
    if shim is None:
        return None
    sys.path.insert(0, str(shim))
    try:
        module = importlib.import_module("xwarp_shim")
    finally:
        sys.path.remove(str(shim))
    before = os.environ.get("XWARP_RECORD_DIR")
    os.environ["XWARP_RECORD_DIR"] = str(record_dir)
    try:
        module.start()
    finally:
        # the tests' own subprocesses are not this run's processes: they see the environment as it was
        if before is None:
            os.environ.pop("XWARP_RECORD_DIR", None)
        else:
            os.environ["XWARP_RECORD_DIR"] = before
    return module if module.active_recorder() is not None else None


class _Recording:
    """The plugin's state in one process: the shim, and in the controlling process the folder."""

    def __init__(self, config, record_dir, owner):
        self.config = config
        self.record_dir = Path(record_dir)
        self.owner = owner  # this process made the folder (the controller, or a run without workers)
        self.started = time.time()
        self.shim = _start_shim(self.record_dir)
        self.failed = []  # node ids, as pytest's own summary names them

    # -- every process that runs tests ---------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        if call.when == "teardown" and self.shim is not None:
            builds, ms = self.shim.active_recorder().builds_by_test.get(item.nodeid, (0, 0.0))
            item.user_properties.append(("warp_builds", builds))
            item.user_properties.append(("warp_build_ms", round(ms, 1)))
        yield

    def pytest_runtest_logreport(self, report):
        if self.owner and report.failed:  # xdist hands its workers' reports to the controller
            self.failed.append(report.nodeid)

    def pytest_sessionfinish(self, session):
        if self.shim is not None:
            self.shim.active_recorder().finish()  # the exit record, before the controller reads the folder

    # -- the controlling process ---------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        if not self.owner:
            return
        write = terminalreporter.write_line
        terminalreporter.section("warp builds")
        try:
            report = self._analyse(int(exitstatus))
        except RuntimeError as e:
            write(f"xwarp: {e}")
            return
        finally:
            shutil.rmtree(self.record_dir, ignore_errors=True)
        if report is None:
            return
        self._summary(report, write)

    def _analyse(self, exit_code):
        probe = shutil.which("warp-probe", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        if probe is None:
            raise RuntimeError("warp-probe is not on PATH: no report (pip install xwarp puts it beside this Python)")
        records = sorted(self.record_dir.glob("proc-*.jsonl"))
        if not records:
            raise RuntimeError("no process of this run imported Warp: nothing was built")
        run = self.record_dir / "run"
        cold = run / "sample-1" / "cold"
        cold.mkdir(parents=True)
        for f in records:
            f.rename(cold / f.name)
        # the pass's output, as the probe would have captured pytest's: the failing tests' lines
        (cold / "stdout").write_text("".join(f"FAILED {nodeid}\n" for nodeid in dict.fromkeys(self.failed)))
        (cold / "stderr").write_text("")
        wall_ms = (time.time() - self.started) * 1000.0
        (cold / "pass.json").write_text(json.dumps({"wall_ms": wall_ms, "exit_code": exit_code, "one_pass": True,
                                                    "warp_cache": "", "cache": {}}))
        facts = {
            "schema_version": _schema_version(),
            "tool": "warp-probe",
            "created_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "label": "pytest",
            "command": ["pytest", *self.config.invocation_params.args],
            "cwd": str(self.config.invocation_params.dir),
            "settings": {"samples": 1, "sampling": "one pass: the suite's own run on its own cache (pytest --warp-builds)"},
            "samples": [],
        }
        (run / "run.json").write_text(json.dumps(facts))
        out = self._report_path()
        done = subprocess.run([probe, "report", str(run), "--format", "json", "-o", str(out), "--history", "off"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"warp-probe report could not read the run (exit {done.returncode}): "
                               f"{done.stderr.strip()[-400:]}")
        report = json.loads(out.read_text())
        self.kept = out
        return report

    def _report_path(self):
        explicit = self.config.getoption("warp_builds_report")
        if explicit:
            return Path(explicit).resolve()
        cache = getattr(self.config, "cache", None)
        if cache is not None:
            return Path(cache.mkdir("xwarp")) / "report.json"
        return self.record_dir.parent / (self.record_dir.name + "-report.json")

    def _summary(self, report, write):
        top = self.config.getoption("warp_builds") or _DEFAULT_TOP
        summary = report.get("summary") or {}
        tests = summary.get("tests") or []
        builds = []
        for t in tests:
            for identity in t.get("identities") or []:
                if isinstance(identity, dict):
                    builds.append((identity["ms"], t["test"] or "collection / set-up", identity, t))
        builds.sort(key=lambda b: -b[0])
        total_ms = sum(b[0] for b in builds)
        processes = len(summary.get("workers") or [])
        if not builds:
            write("no Warp module was built in this run (every module came from the cache)")
        for ms, test, identity, t in builds[:top]:
            block = f" block_dim {identity['block_dim']}" if identity.get("block_dim") else ""
            reused = f"; reused by {t['reused_by']} later test(s)" if t.get("reused_by") else ""
            failed = " [failed]" if t.get("failed") else ""
            write(f"{ms / 1000:8.2f}s build  {test}{failed}")
            write(f"{'':15}{identity['module']} {identity['hash'][:7]} on {identity['device']}{block}{reused}")
        if len(builds) > top:
            write(f"({len(builds) - top} more build(s): --warp-builds={len(builds)} lists them)")
        write(f"{len(builds)} build(s), {total_ms / 1000:.2f} s of build time in {processes} process(es); "
              f"report: {self.kept} (warp-probe report renders it)")
        for f in (report.get("findings") or [])[:3]:
            write(f"[{f['mechanism']}] {f['title']} - {f['module'][:80]}")


def _schema_version():
    """The report schema version the installed warp-probe writes (the facts file must carry one):
    the const of the installed report.schema.json."""
    from xwarp import data_dir

    share = data_dir()
    try:
        schema = json.loads((share / "report.schema.json").read_text())
        return int(schema["properties"]["schema_version"]["const"])
    except Exception:
        return 1  # the oldest a warp-probe reads


class _XdistHooks:
    """pytest-xdist's hook, on an object of its own: registered only where xdist is loaded."""

    def __init__(self, record_dir):
        self.record_dir = record_dir

    def pytest_configure_node(self, node):  # each worker records into the same folder
        node.workerinput[_WORKER_KEY] = str(self.record_dir)


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if config.getoption("warp_builds", default=None) is None:
        return
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        record_dir, owner = worker.get(_WORKER_KEY), False
        if not record_dir:
            return
    else:
        record_dir, owner = tempfile.mkdtemp(prefix="xwarp-pytest-"), True
    recording = _Recording(config, record_dir, owner)
    if owner and recording.shim is None and "xwarp_shim" in sys.modules:
        # under warp-probe measure already: the probe's report holds this run's builds
        shutil.rmtree(record_dir, ignore_errors=True)
        return
    config.pluginmanager.register(recording, "xwarp-recording")
    if owner and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(record_dir), "xwarp-xdist")
