"""pytest --warp-builds[=N]: Warp's builds in your own test run, where pytest users already look.

Registered by ``pip install xwarp`` (entry point ``pytest11``), off unless asked. In the run you
already make (your cache, your flags, ``-n`` workers included) it records every Warp module load
with the probe's own shim, in each process that runs tests, and at the end prints, like
``--durations``, the N costliest builds with the test that paid each, its module, device and
build time, and how many later tests reused that build. Each test gets JUnit XML properties
(``warp_builds``, ``warp_build_ms``: what it compiled). The whole run is analysed by
``warp-probe report`` (the same analysis as ``warp-probe measure``), and the report is kept at
``--warp-builds-report PATH`` (default: pytest's cache folder, ``.pytest_cache/xwarp/report.json``):
``warp-probe report`` renders it, ``warp-probe history import`` stores it.

The count comes after ``=`` only (``--warp-builds=20``): ``pytest --warp-builds tests/x.py`` runs
tests/x.py.

It is one pass on whatever cache the suite had: builds show what this run compiled, not what a
cold run would. ``warp-probe measure -- pytest ...`` measures cold and warm passes on private
caches, and replays levers; this plugin costs one shim per test process and nothing else.

The plugin is an observer. Whatever happens inside it, pytest's exit code, its summary and its
JUnit XML are what they would be without it: a failure of the plugin is one line in its own
section ("xwarp: ... the run itself is unchanged"). It never applies a what-if lever or any other
XWARP_ setting the environment holds (the shim starts as an observer), prints test ids escaped,
and removes its record folder whatever way the run ends.
"""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pytest

_DEFAULT_TOP = 10
_WORKER_KEY = "xwarp_record_dir"
_SHIM_NAME = "_xwarp_pytest_shim"  # its own module name: a conftest's module called xwarp_shim is not it
_ID_LIMIT = 300  # characters of a test id shown in a line


def pytest_addoption(parser):
    group = parser.getgroup("xwarp", "Warp's module builds (xwarp)")
    group.addoption("--warp-builds", action="store", nargs="?", const=str(_DEFAULT_TOP), default=None, metavar="N",
                    help="record Warp's module builds in this run and list the N costliest (default %d; the count after "
                         "'=' only: --warp-builds=20) with the test that paid each and the tests that reused it" % _DEFAULT_TOP)
    group.addoption("--warp-builds-report", action="store", default=None, metavar="PATH",
                    help="write the run's report there (JSON: warp-probe report renders it, history import stores it); "
                         "default: pytest's cache folder")


# -- what a line may show -------------------------------------------------------------------------

_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def printable(text, limit=_ID_LIMIT):
    """A test id or a message as one line a terminal shows as it is: control characters, bidi
    controls, invisible characters and lone surrogates (a non-UTF-8 id) escaped as the CLI escapes
    them, and a text longer than `limit` cut with how much was left out."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append("\\x%02x" % code)
        elif 0xD800 <= code < 0xE000:
            out.append("\\u%04x" % code)
        elif code in _BIDI or unicodedata.category(ch) in ("Cf", "Zl", "Zp"):
            out.append("\\u%04x" % code if code <= 0xFFFF else "\\U%08x" % code)
        else:
            out.append(ch)
    line = "".join(out)
    return line if len(line) <= limit else line[:limit] + f"... ({len(line) - limit} more characters)"


# -- the shim -------------------------------------------------------------------------------------


def _shim_dir():
    """The probe's shim, installed beside this package (share/xwarp/shim), or $XWARP_SHIM_DIR."""
    explicit = os.environ.get("XWARP_SHIM_DIR")
    if explicit and (Path(explicit) / "xwarp_shim" / "__init__.py").is_file():
        return Path(explicit)
    from xwarp import data_dir

    share = data_dir()
    return share / "shim" if share is not None and (share / "shim" / "xwarp_shim" / "__init__.py").is_file() else None


def _measured_already():
    """True when warp-probe runs this process with its own shim (its report has the builds): the
    probe's package, started from its sitecustomize, recording."""
    running = sys.modules.get("xwarp_shim")
    try:
        return running is not None and callable(getattr(running, "active_recorder", None)) \
            and running.active_recorder() is not None and os.environ.get("XWARP_RECORD_DIR") is not None
    except Exception:
        return False


def _start_shim(record_dir):
    """The shim's recorder in this process, recording into record_dir as an observer (no lever,
    nothing the environment's XWARP_ variables ask for), under a module name of its own. None when
    there is no shim, or when warp-probe measures this process already."""
    if _measured_already():
        return None
    shim = _shim_dir()
    if shim is None:
        return None
    module = sys.modules.get(_SHIM_NAME)
    if module is None:
        spec = importlib.util.spec_from_file_location(_SHIM_NAME, shim / "xwarp_shim" / "__init__.py",
                                                      submodule_search_locations=[str(shim / "xwarp_shim")])
        module = importlib.util.module_from_spec(spec)
        sys.modules[_SHIM_NAME] = module
        spec.loader.exec_module(module)
    before = os.environ.get("XWARP_RECORD_DIR")
    os.environ["XWARP_RECORD_DIR"] = str(record_dir)
    try:
        module.start(observer=True)
    finally:
        # the tests' own subprocesses are not this run's processes: they see the environment as it was
        if before is None:
            os.environ.pop("XWARP_RECORD_DIR", None)
        else:
            os.environ["XWARP_RECORD_DIR"] = before
    return module.active_recorder()  # held: a test that replaces the module's functions changes nothing here


# -- the plugin -----------------------------------------------------------------------------------


class _Recording:
    """The plugin's state in one process: the recorder, and in the controlling process the folder.
    Every hook catches its own failures: they end up as lines of the plugin's section, never in
    pytest's outcome."""

    def __init__(self, config, record_dir, owner, top):
        self.config = config
        self.record_dir = Path(record_dir)
        self.owner = owner  # this process made the folder (the controller, or a run without workers)
        self.top = top
        self.started = time.time()
        self.load_at_start = _cpu_times() if owner else None  # the machine's load, as warp-probe measure takes it
        self.failed = []  # node ids, as pytest's own summary names them
        self.problems = list(_EARLY_PROBLEMS)  # what went wrong inside the plugin, said once at the end
        self.recorder = None
        self.kept = None
        try:
            self.recorder = _start_shim(self.record_dir)
        except Exception as e:
            self.problem("the shim did not start", e)

    def problem(self, what, error=None):
        line = what + (f" ({type(error).__name__}: {error})" if error is not None else "")
        if line not in self.problems:
            self.problems.append(line)

    # -- every process that runs tests ---------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        if call.when == "teardown" and self.recorder is not None:
            try:
                self._add_properties(item)
            except Exception as e:
                self.problem("a test's warp_builds properties were not added", e)
        yield

    def _add_properties(self, item):
        properties = getattr(item, "user_properties", None)
        if not isinstance(properties, list):
            self.problem(f"{printable(item.nodeid)} keeps user_properties as {type(properties).__name__}, not a list: "
                         "its warp_builds properties were left out")
            return
        names = {p[0] for p in properties if isinstance(p, tuple) and len(p) == 2}
        if "warp_builds" in names:
            return  # the test's own: never a second one
        builds, ms = self.recorder.builds_by_test.get(item.nodeid, (0, 0.0))
        properties.append(("warp_builds", builds))
        properties.append(("warp_build_ms", round(ms, 1)))

    def pytest_runtest_logreport(self, report):
        if self.owner and report.failed:  # xdist hands its workers' reports to the controller
            self.failed.append(report.nodeid)

    def pytest_sessionfinish(self, session):
        try:
            if self.recorder is not None:
                self.recorder.finish()  # the exit record, before the controller reads the folder
        except Exception as e:
            self.problem("the shim's exit record was not written", e)

    # -- the controlling process ---------------------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        if not self.owner:
            return
        write = lambda line: terminalreporter.write_line(printable(line, 2000))
        terminalreporter.section("warp builds")
        try:
            report = self._analyse(int(exitstatus))
            if report is not None:
                self._summary(report, write)
        except Exception as e:
            self.problem("no report", e)
        finally:
            self._clean_up()
        for line in self.problems:
            write(f"xwarp: {line}; the run itself is unchanged")

    def pytest_unconfigure(self, config):
        if self.owner:
            self._clean_up()  # a run that ended before its summary leaves no record folder either

    def _clean_up(self):
        shutil.rmtree(self.record_dir, ignore_errors=True)

    def _analyse(self, exit_code):
        probe = shutil.which("warp-probe", path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        if probe is None:
            self.problem("warp-probe is not on PATH: no report (pip install xwarp puts it beside this Python)")
            return None
        records = sorted(self.record_dir.glob("proc-*.jsonl"))
        if not records:
            self.problem("no process of this run imported Warp: nothing was built")
            return None
        # The record folder is one pass in the recorded-run contract's one-pass form
        # (contracts/recorded_run.schema.json): the shim's records, the pass's output as the probe
        # would have captured pytest's (the failing tests' lines; an id that is not UTF-8 keeps its
        # bytes escaped), and pass.json with the run's facts. warp-probe report --records reads it.
        (self.record_dir / "stdout").write_text("".join(f"FAILED {nodeid}\n" for nodeid in dict.fromkeys(self.failed)),
                                                encoding="utf-8", errors="backslashreplace")
        (self.record_dir / "stderr").write_text("")
        # under pytest-xdist this process never imports Warp: its version and the kernel cache
        # each process used come from the workers' records
        version, folders = _warp_from_records(records)
        run = {"label": "pytest", "command": ["pytest", *map(str, self.config.invocation_params.args)],
               "cwd": str(self.config.invocation_params.dir),
               "sampling": "one pass: the suite's own run on its own cache (pytest --warp-builds)",
               "environment": _environment(version)}
        one_pass = {"wall_ms": (time.time() - self.started) * 1000.0, "exit_code": exit_code, "one_pass": True,
                    "warp_cache": "", "cache": _cache_written(self.started, folders),
                    "load": _load_since(self.load_at_start), "run": run}
        (self.record_dir / "pass.json").write_text(json.dumps(one_pass, ensure_ascii=True))
        written = self.record_dir / "report.json"  # the probe writes into the plugin's own folder first
        done = subprocess.run([probe, "report", "--records", str(self.record_dir), "--format", "json", "-o", str(written),
                               "--history", "off"], capture_output=True, text=True, errors="replace")
        if done.returncode != 0:
            self.problem(f"warp-probe report could not read the run (exit {done.returncode}): {done.stderr.strip()[-400:]}")
            return None
        text = written.read_text()
        report = json.loads(text)
        self.kept = self._keep(text)
        return report

    def _keep(self, text):
        """The report where the user asked (or pytest's cache folder): written beside it and renamed
        over it, never through a link or into something that is not a file. None when not kept."""
        explicit = self.config.getoption("warp_builds_report")
        try:
            if explicit:
                target = Path(explicit).absolute()
            else:
                cache = getattr(self.config, "cache", None)
                if cache is None:
                    self.problem("pytest's cache is off (-p no:cacheprovider) and no --warp-builds-report was given: the "
                                 "report was not kept")
                    return None
                target = Path(cache.mkdir("xwarp")) / "report.json"
            if target.is_symlink() or (target.exists() and not target.is_file()):
                self.problem(f"{printable(target)} is a link or not a file: the report was not written there")
                return None
            if target.exists() and target.stat().st_uid != os.geteuid():
                self.problem(f"{printable(target)} is another user's file: the report was not written over it")
                return None
            fd, temp = tempfile.mkstemp(prefix=".report-", suffix=".json", dir=target.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(text)
                os.replace(temp, target)
            except BaseException:
                os.unlink(temp)
                raise
            return target
        except Exception as e:
            self.problem("the report was not kept", e)
            return None

    def _summary(self, report, write):
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
        for ms, test, identity, t in builds[:self.top]:
            block = f" block_dim {identity['block_dim']}" if identity.get("block_dim") else ""
            reused = identity.get("reused_by", 0)
            failed = " [failed]" if t.get("failed") else ""
            write(f"{ms / 1000:8.2f}s build  {printable(test)}{failed}")
            write(f"{'':15}{printable(identity['module'])} {identity['hash'][:7]} on {identity['device']}{block}"
                  + (f"; reused by {reused} later test(s)" if reused else ""))
        if len(builds) > self.top:
            write(f"({len(builds) - self.top} more build(s): --warp-builds={len(builds)} lists them)")
        where = f"report: {self.kept} (warp-probe report renders it)" if self.kept else "no report kept"
        write(f"{len(builds)} build(s), {total_ms / 1000:.2f} s of build time in {processes} process(es); {where}")
        for f in (report.get("findings") or [])[:3]:
            write(f"[{f['mechanism']}] {f['title']} - {printable(f['module'], 80)}")


def _warp_from_records(records, limit=1 << 30):
    """Warp's version and the kernel cache folders, from the records of the processes that
    imported Warp: the shim's "warp" record and each process's "exit" record (its runtime facts).
    Only those lines are parsed; at most `limit` bytes are read in all."""
    version, folders, left = None, set(), limit
    for path in records:
        try:
            with open(path, "rb") as stream:
                for line in stream:
                    left -= len(line)
                    if left < 0:
                        return version, folders
                    head = line[:40].replace(b" ", b"")  # the shim writes its type first
                    if b'"type":"warp"' not in head and b'"type":"exit"' not in head:
                        continue
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if record.get("type") == "warp" and isinstance(record.get("version"), str):
                        version = version or record["version"]
                    runtime = record.get("runtime") if record.get("type") == "exit" else None
                    folder = runtime.get("kernel_cache_dir") if isinstance(runtime, dict) else None
                    if isinstance(folder, str) and folder:
                        folders.add(folder)
        except OSError:
            continue
    return version, folders


def _cpu_times():
    """(busy CPU ms of the whole machine from /proc/stat, this process's and its reaped children's
    CPU ms, the CPUs); None where /proc/stat cannot be read."""
    import resource

    try:
        with open("/proc/stat", "rb") as stat:
            fields = stat.readline().split()[1:]
        ticks = os.sysconf("SC_CLK_TCK")
        busy = sum(int(v) for i, v in enumerate(fields[:8]) if i not in (3, 4))  # all but idle and iowait
        own = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for f in ("ru_utime", "ru_stime"))
        return busy * 1000.0 / ticks, own * 1000.0, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    except (OSError, ValueError, IndexError):
        return None


def _load_since(start):
    """The machine's load while the suite ran, in the report's terms: other processes' CPU time
    (the machine's busy time less this process's and its workers' once they were reaped)."""
    end = _cpu_times()
    if start is None or end is None:
        return None
    own = max(0.0, end[1] - start[1])
    return {"cpus": end[2], "others_cpu_ms": max(0.0, end[0] - start[0] - own), "own_cpu_ms": own}


def _environment(version=None):
    """The facts warp-probe measure would have put in the report: this Python, the machine, Warp."""
    import platform

    env = {"python_version": platform.python_version(), "python_executable": sys.executable,
           "cpu_count": os.cpu_count() or 0, "host": platform.node(), "machine": platform.machine(),
           "os": f"{platform.system()} {platform.release()}", "sources": {"python_version": "pytest --warp-builds"}}
    warp = sys.modules.get("warp")
    imported = getattr(warp, "__version__", None) if warp is not None else None
    if isinstance(imported, str):
        env["warp_version"] = imported
        env["sources"]["warp_version"] = "the warp module pytest imported"
    elif version:
        env["warp_version"] = version
        env["sources"]["warp_version"] = "the shim's record of the processes that imported Warp"
    return env


_CACHE_ENTRIES = 500000  # as warp-probe bounds its walk of a private cache


def _cache_written(since, folders=()):
    """What this run wrote into Warp's kernel cache (files changed since the session started, by
    kind), in each folder Warp says its cache is (this process's, and those the records name);
    {} when no process imported Warp."""
    warp = sys.modules.get("warp")
    own = getattr(getattr(warp, "config", None), "kernel_cache_dir", None) if warp is not None else None
    counts = {"source_files": 0, "source_bytes": 0, "binary_files": 0, "binary_bytes": 0, "lto_files": 0, "lto_bytes": 0}
    found = {os.path.realpath(f) for f in [own, *folders] if isinstance(f, str) and os.path.isdir(f)}
    if not found:
        return {}
    kinds = {".cpp": "source", ".cu": "source", ".o": "binary", ".ptx": "binary", ".cubin": "binary", ".lto": "lto",
             ".ltoir": "lto"}
    left = _CACHE_ENTRIES  # a folder a record names is walked, not the disk it may be the root of
    for root, _, files in (walked for folder in sorted(found) for walked in os.walk(folder)):
        left -= 1 + len(files)
        if left < 0:
            return {}  # not a kernel cache this run could have filled: not known
        for name in files:
            kind = kinds.get(os.path.splitext(name)[1])
            if kind is None:
                continue
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if st.st_mtime >= since:
                counts[kind + "_files"] += 1
                counts[kind + "_bytes"] += st.st_size
    return counts


class _Silent:
    """The plugin's section when it could not record: what went wrong, and that the run is unchanged."""

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config):
        terminalreporter.section("warp builds")
        for line in _EARLY_PROBLEMS:
            terminalreporter.write_line(printable(f"xwarp: {line}; the run itself is unchanged", 2000))


class _XdistHooks:
    """pytest-xdist's hook, on an object of its own: registered only where xdist is loaded."""

    def __init__(self, record_dir):
        self.record_dir = record_dir

    def pytest_configure_node(self, node):  # each worker records into the same folder
        node.workerinput[_WORKER_KEY] = str(self.record_dir)


def _top_and_path(config):
    """The count --warp-builds was given, and a path argparse took for it when the option came
    before a test path with no '=' (`pytest --warp-builds tests/x.py`): put back among the paths
    pytest collects. After '=' the value is always a count (`--warp-builds=0` lists none); a word
    that is no whole number there is a usage error, never a test path."""
    value = str(config.getoption("warp_builds"))
    with_equals = any(str(a).startswith("--warp-builds=") for a in config.invocation_params.args)
    if re.fullmatch(r"\d{1,9}", value):
        return int(value), None
    if with_equals:
        raise pytest.UsageError(f"--warp-builds={printable(value, 60)}: the count after '=' is a whole number "
                                "(0 lists no build; the report is still kept)")
    return _DEFAULT_TOP, value


_EARLY_PROBLEMS = []  # what the plugin could not do before its recording started, said at the end


def _separate_word(args, option):
    return any(str(a) == option for a in args[:-1])


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """pytest decides its rootdir before it knows any plugin's option, so `--warp-builds-report
    PATH` written as two words, PATH an existing file, is taken for a test path and moves the
    rootdir to a folder above both (JUnit class names change). Decided again here, with this
    plugin's options known and before anything reads it (the cache folder, the node ids); where the
    ini file would be another too, it is left as it is and said in the plugin's section."""
    if not _separate_word(args, "--warp-builds-report"):
        return
    try:
        import copy
        import inspect

        from _pytest.config import findpaths

        ns, unknown = parser.parse_known_and_unknown_args(list(args), namespace=copy.copy(early_config.option))
        known = dict(inifile=ns.inifilename, args=[str(a) for a in ns.file_or_dir + unknown],
                     rootdir_cmd_arg=ns.rootdir or None, invocation_dir=early_config.invocation_params.dir,
                     config=early_config, override_ini=getattr(ns, "override_ini", None))
        accepted = inspect.signature(findpaths.determine_setup).parameters  # it moved between pytest versions
        rootpath, inipath = findpaths.determine_setup(**{k: v for k, v in known.items() if k in accepted})[:2]
        if rootpath == early_config.rootpath:
            return
        if inipath != early_config.inipath:
            _EARLY_PROBLEMS.append(f"--warp-builds-report written as two words moved pytest's rootdir to "
                                   f"{printable(early_config.rootpath)}; write --warp-builds-report=PATH")
            return
        early_config._rootpath = rootpath
        parser.extra_info["rootdir"] = str(rootpath)
    except Exception as e:
        _EARLY_PROBLEMS.append(f"pytest's rootdir could not be decided again ({type(e).__name__}: {printable(e, 200)}); "
                               "write --warp-builds-report=PATH")


def _record_folder():
    """A private folder for the run's records, in $TMPDIR (never in tempfile.tempdir, which a
    conftest may point at a folder it makes later), and a watcher that removes it when pytest ends
    however it ends (os._exit in a test, SIGTERM, SIGKILL): a shell reading a pipe that only this
    process holds open, which reaches its end of file when the process is gone."""
    base = os.environ.get("TMPDIR") or "/tmp"
    folder = tempfile.mkdtemp(prefix="xwarp-pytest-", dir=base if os.path.isdir(base) else "/tmp")
    try:
        read_end, write_end = os.pipe()
        subprocess.Popen(["/bin/sh", "-c", 'read _ignored; rm -rf -- "$1"', "xwarp-pytest-cleanup", folder],
                         stdin=read_end, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         close_fds=True)
        os.close(read_end)
        os.set_inheritable(write_end, False)
        _WATCHED.append(write_end)  # held open until this process ends
    except OSError:
        pass  # no shell: the folder is still removed by the plugin at a normal end
    return folder


_WATCHED = []


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if config.getoption("warp_builds", default=None) is None:
        return
    top, taken = _top_and_path(config)
    worker = getattr(config, "workerinput", None)
    if taken is not None:
        # argparse gave the next word to the optional count: it is the test path the user wrote
        # (an xdist worker parses the same command line, so it puts it back the same way)
        if getattr(config, "args_source", None) is not None and config.args_source != config.ArgsSource.ARGS:
            config.args[:] = [taken]
        else:
            config.args.insert(0, taken)
    if worker is not None:
        record_dir, owner = worker.get(_WORKER_KEY), False
        if not record_dir:
            return
    else:
        if _measured_already():
            return  # under warp-probe measure already: the probe's report holds this run's builds
        try:
            record_dir, owner = _record_folder(), True
        except OSError as e:
            _EARLY_PROBLEMS.append(f"no folder for the records ({printable(e, 200)}): nothing was recorded")
            config.pluginmanager.register(_Silent(), "xwarp-recording")
            return
    recording = _Recording(config, record_dir, owner, top)
    config.pluginmanager.register(recording, "xwarp-recording")
    if owner and config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(record_dir), "xwarp-xdist")
