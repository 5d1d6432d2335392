"""xwarp recorder: runs inside every Python process of a measured command.

warp-probe starts it through the `sitecustomize.py` beside this file. It waits for
`import warp`, then wraps a handful of Warp's private functions to record:

* every module load that did work (name, full hash, device, block_dim, status, Warp's
  own timer, the wrapper's total, native compile, generated source, LTO artifacts) and a
  snapshot of the module's content and resolved options, to explain later why a new hash
  appeared;
* every event that dirtied an already-loaded module (a kernel defined after load, a new
  generic overload, an option change), with the user's file:line;
* every `wp.config` assignment made by user code, with its file:line;
* every kernel launch, in order, as an interned signature.

Records go to one JSON-lines file per process under $XWARP_RECORD_DIR, created with
O_EXCL so that no process ever overwrites another's record.

Rules this file keeps, because it runs inside someone else's program:
* it never changes whether or how the target runs: every wrapper calls through and
  swallows its own failures;
* the per-launch path stays O(1): no stack walks, no I/O, no strong references to
  kernel objects (holding one would keep closure kernels alive and change module hashes);
* every Warp internal is feature-detected; a missing hook is reported, never guessed.
"""

import os
import sys
import time

# threading is imported when Warp is (which imports it anyway): a Python process of the command
# that never imports Warp pays as little for the shim as can be.
threading = None

_perf = time.perf_counter

# The six options Warp copies from warp.config when a module is created (1.15+; older
# versions copy a subset, and `mode` up to 1.8). A difference at load time between the
# module's value and the global one means the global arrived too late.
_SNAPSHOT_OPTION_KEYS = (
    "max_unroll",
    "enable_backward",
    "lineinfo",
    "compile_time_trace",
    "deterministic",
    "deterministic_max_records",
    "mode",
)

_LAUNCH_CAP = 2_000_000  # ordered launches kept; beyond this only the total grows

# The record contract this shim writes: probe/schema/shim_records.schema.json describes every
# record below, and its x-contract-version is this number (a test holds them equal).
_CONTRACT = 2

_rec = None  # the process's recorder
_tls = None  # threading.local(), from the moment Warp is imported


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.hex()
    name = getattr(value, "name", None)  # enums
    if isinstance(name, str) and hasattr(value, "value"):
        return name
    return repr(value)


def _site_prefixes():
    """Where installed packages live (inside the standard library's folder in a venv or pyenv)."""
    try:
        import sysconfig

        paths = sysconfig.get_paths()
        found = {paths.get("purelib"), paths.get("platlib")}
    except Exception:
        found = set()
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")):
            found.add(entry)
    return tuple(os.path.join(p, "") for p in found if p)


_RUNNER_PACKAGES = ("_pytest", "pytest", "pluggy", "xdist", "execnet")
_runner_dirs = {}


def _runner_prefixes():
    """The folders of the test runners imported so far (looked up as they appear)."""
    if len(_runner_dirs) < len(_RUNNER_PACKAGES):
        for name in _RUNNER_PACKAGES:
            if name not in _runner_dirs:
                file = getattr(sys.modules.get(name), "__file__", None)
                if isinstance(file, str):
                    _runner_dirs[name] = os.path.dirname(os.path.abspath(file)) + os.sep
    return tuple(_runner_dirs.values())


def _without_lone_surrogates(value):
    """The value with every lone surrogate of its texts written out as an escape: a byte that was
    not UTF-8 (U+DC80..U+DCFF, from os.fsdecode) as "\\xNN", any other as "\\uNNNN"."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return "".join(
                c if not 0xD800 <= ord(c) <= 0xDFFF
                else f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}"
                for c in value)
    if isinstance(value, dict):
        return {_without_lone_surrogates(str(k)): _without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_lone_surrogates(v) for v in value]
    return value


def _hex(value, n=None):
    if isinstance(value, (bytes, bytearray)):
        h = bytes(value).hex()
        return h[:n] if n else h
    return None


# -- what-if levers -----------------------------------------------------------------------------
#
# In a what-if replay ($XWARP_WHATIF set) the active lever (xwarp_levers.py, imported only then):
# the hooks below call its methods, and the exit record carries what it changed.

_lever = None


def _load_lever():
    global _lever
    raw = os.environ.get("XWARP_WHATIF")
    if not raw:
        return
    try:
        import json

        import xwarp_levers

        _lever = xwarp_levers.make(json.loads(raw))
        _lever.at_start()
    except Exception:
        _lever = None


class _Recorder:
    def __init__(self, record_dir):
        self.record_dir = record_dir
        self.t0 = _perf()
        self.started_unix = time.time()
        self.lock = None  # a threading.Lock once Warp is imported; before that, one thread
        self.file = None
        self.seq = 0
        self.pid = os.getpid()
        self.internal_prefixes = ()
        self.stdlib_prefix = os.path.dirname(os.__file__) + os.sep
        self.site_prefixes = _site_prefixes()
        self.hooks = {}
        self.warp = None
        self.ctx = None
        self.cfg = None
        # launches: signature -> index, and the ordered index sequence
        self.launch_index = {}
        self.test_uses = set()  # (test, module, device) already written as test_use
        self.launch_seq = None
        self.launch_total = 0
        self.finished = False
        # Events seen before Warp was imported: written once it is (a process that never
        # imports Warp leaves no record).
        self.pending = []
        # Steady-state launch times of the kernels $XWARP_TIME_LAUNCHES names (mathdx-off).
        self.launch_times = {}
        # Python modules that defined a loaded kernel: their files go in the exit's module_files
        self.kernel_modules = set()
        # test -> [builds, ms]: what each test of this process compiled (the pytest plugin puts it
        # on the test's JUnit properties)
        self.builds_by_test = {}

    def emit_or_hold(self, obj):
        if self.pending is not None:
            self.pending.append(obj)
        else:
            self.emit(obj)

    # -- output ---------------------------------------------------------------------------------

    def _open(self):
        import json  # noqa: F401  (imported once, before the first record)

        name = f"proc-{self.pid}-{time.time_ns()}.jsonl"
        path = os.path.join(self.record_dir, name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self.file = os.fdopen(fd, "w", encoding="utf-8")
        self._write(
            {
                "type": "process",
                "contract": _CONTRACT,
                "pid": self.pid,
                "ppid": os.getppid(),
                "argv": list(sys.argv),
                "executable": sys.executable,
                "python": sys.version.split()[0],
                "started_unix": self.started_unix,
            }
        )

    def _write(self, obj):
        import json

        obj["seq"] = self.seq
        obj["t_ms"] = round((_perf() - self.t0) * 1000.0, 3)
        self.seq += 1
        text = json.dumps(obj, default=_jsonable, separators=(",", ":"))
        if "\\ud" in text:
            # a surrogate: a text that held bytes that are not UTF-8 (os.fsdecode of a file name, argv)
            # or a pair; a lone one is escaped, so that the record stays JSON any reader takes
            text = json.dumps(_without_lone_surrogates(obj), default=lambda v: _without_lone_surrogates(_jsonable(v)),
                              separators=(",", ":"))
        self.file.write(text + "\n")
        self.file.flush()

    def emit(self, obj):
        if self.lock is None:
            self._emit(obj)
            return
        with self.lock:
            self._emit(obj)

    def _emit(self, obj):
        try:
            if self.file is None:
                self._open()
            self._write(obj)
        except Exception as exc:
            # never a record lost in silence: what could not be written is named, and the pass that
            # lost it is not judged
            try:
                if self.file is not None:
                    self._write({"type": "shim_error", "where": f"writing a {str(obj.get('type'))[:40]} record",
                                 "error": repr(exc)[:500]})
            except Exception:
                pass

    # -- stack attribution (never on the per-launch path) --------------------------------------

    def internal(self, fn):
        """A frame that is nobody's own code: Warp, this shim, importlib, the standard library
        (unittest among it) and the test runners (pytest, pluggy, xdist, execnet), wherever they
        are installed. Packages in site-packages are the program's or its libraries'."""
        if fn.startswith(self.internal_prefixes) or fn.startswith("<frozen"):
            return True
        if fn.startswith(self.stdlib_prefix) and not fn.startswith(self.site_prefixes):
            return True
        return fn.startswith(_runner_prefixes())

    def user_frame(self, skip=2):
        """Return (internal function names walked, the internal frames, file, line) of the first
        frame outside Warp, this shim and importlib."""
        chain = []
        frames = []
        try:
            f = sys._getframe(skip)
        except Exception:
            return chain, frames, None, None
        while f is not None:
            fn = f.f_code.co_filename
            if self.internal(fn):
                chain.append(f.f_code.co_name)
                frames.append(f)
                f = f.f_back
                continue
            return chain, frames, fn, f.f_lineno
        return chain, frames, None, None

    # -- exit -----------------------------------------------------------------------------------

    def record_module_files(self):
        """Where each Python module that defined a loaded kernel was imported from: a warm-up
        imports them from there (a test module pytest put on sys.path, a script's sibling)."""
        try:
            files = {}
            for name in sorted(self.kernel_modules)[:500]:
                module = sys.modules.get(name)
                file = getattr(module, "__file__", None)
                if name != "__main__" and isinstance(file, str):
                    files[name] = os.path.abspath(file)
            if files:
                self.emit({"type": "call", "function": "module_files", "args": files, "file": None, "line": None})
        except Exception:
            pass

    def record_results(self):
        """With $XWARP_RESULTS=1 (a notebook cell's run): what each Warp array the program left in
        __main__'s namespace holds, as a few figures (count, sum, sum of magnitudes, least and
        largest finite value, non-finite count), so that an exercise can check that a fix still
        computes what the broken form did. At most 64 arrays of at most 16M values each."""
        if os.environ.get("XWARP_RESULTS") != "1":
            return
        try:
            import numpy as np

            main = sys.modules.get("__main__")
            out = {}
            for name, value in sorted(vars(main).items()):
                if name.startswith("_") or not isinstance(value, self.warp.array) or len(out) >= 64:
                    continue
                figures = {"dtype": getattr(value.dtype, "__name__", str(value.dtype)), "shape": list(value.shape)}
                if value.size > (1 << 24):
                    figures["skipped"] = "larger than 16M values"
                else:
                    try:
                        flat = np.asarray(value.numpy(), dtype=np.float64).ravel()
                    except Exception as e:
                        figures["skipped"] = f"not numbers ({type(e).__name__})"
                        out[name] = figures
                        continue
                    finite = flat[np.isfinite(flat)]
                    figures.update({"n": int(flat.size), "nonfinite": int(flat.size - finite.size),
                                    "sum": float(finite.sum()), "abs_sum": float(np.abs(finite).sum()),
                                    "min": float(finite.min()) if finite.size else None,
                                    "max": float(finite.max()) if finite.size else None})
                out[name] = figures
            self.emit({"type": "call", "function": "results", "args": out, "file": None, "line": None})
        except Exception:
            pass

    def finish(self):
        if self.finished or self.warp is None:
            return
        self.finished = True
        _record_entry(self)
        self.record_module_files()
        self.record_results()
        try:
            sigs = []
            for key in self.launch_index:
                kernel, module, dim, device, types, block_dim, adjoint = key
                sigs.append(
                    {
                        "kernel": kernel,
                        "module": module,
                        "dim": list(dim) if isinstance(dim, tuple) else dim,
                        "device": device,
                        "dtypes": [_type_name(t) for t in types],
                        "block_dim": _effective_block_dim(device, block_dim, self.cfg),
                        "adjoint": adjoint,
                    }
                )
            runs = []
            seq = self.launch_seq if self.launch_seq is not None else []
            for i in seq:
                if runs and runs[-1][0] == i:
                    runs[-1][1] += 1
                else:
                    runs.append([i, 1])
            self.emit(
                {
                    "type": "exit",
                    "launch_signatures": sigs,
                    "launch_runs": runs,
                    "launch_total": self.launch_total,
                    "launches_truncated": self.launch_total > len(seq),
                    "runtime": _runtime_facts(self.ctx, self.cfg),
                    "whatif": {"lever": _lever.name, "applied": _lever.applied} if _lever is not None else None,
                    "launch_times": self.launch_times or None,
                }
            )
        except Exception as exc:
            self.emit({"type": "shim_error", "where": "finish", "error": repr(exc)})
        try:
            if self.file is not None:
                self.file.close()
        except Exception:
            pass


def _type_name(t):
    cls, dtype, ndim = t
    name = getattr(cls, "__name__", str(cls))
    if dtype is not None:
        dname = getattr(dtype, "__name__", None) or str(dtype)
        return f"{name}[{dname},{ndim}]" if ndim is not None else f"{name}[{dname}]"
    return name


def _effective_block_dim(device, block_dim, cfg):
    # Mirrors wp.launch: CPU runs one thread per block unless CPU blocks are enabled;
    # CUDA takes the requested value, 256 when omitted or non-positive.
    if device == "cpu" or (isinstance(device, str) and device.startswith("cpu")):
        if block_dim and block_dim > 1 and getattr(cfg, "enable_cpu_blocks", False):
            return block_dim
        return 1
    if block_dim is None or block_dim <= 0:
        return 256
    return block_dim


def _runtime_facts(ctx, cfg):
    facts = {}
    try:
        import warp

        facts["warp_version"] = getattr(warp, "__version__", None) or getattr(cfg, "version", None)
        facts["kernel_cache_dir"] = getattr(cfg, "kernel_cache_dir", None)
        rt = getattr(ctx, "runtime", None)
        if rt is not None:
            facts["toolkit_version"] = _jsonable(getattr(rt, "toolkit_version", None))
            facts["driver_version"] = _jsonable(getattr(rt, "driver_version", None))
            devices = []
            for d in [getattr(rt, "cpu_device", None)] + list(getattr(rt, "cuda_devices", []) or []):
                if d is None:
                    continue
                devices.append(
                    {
                        "alias": str(getattr(d, "alias", d)),
                        "name": str(getattr(d, "name", "")),
                        "arch": _jsonable(getattr(d, "arch", None)) if getattr(d, "is_cuda", False) else None,
                        "is_cuda": bool(getattr(d, "is_cuda", False)),
                    }
                )
            facts["devices"] = devices
    except Exception as exc:
        facts["error"] = repr(exc)
    return facts


# -- import watcher ---------------------------------------------------------------------------


class _ImportWatcher:
    """A meta-path finder that notices one module's import (`warp`: the hooks; `unittest.case`:
    the test watcher) and calls back right after the module finished importing. It changes
    nothing about how the module is found or loaded: it wraps the real loader's exec_module on
    that one loader instance."""

    def __init__(self, name, installed):
        self.name = name
        self.installed = installed

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            try:
                spec = find(name, path, target)
            except Exception:
                continue
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        real_exec = getattr(loader, "exec_module", None)
        if real_exec is None:
            return spec
        watcher = self

        def exec_module(module):
            real_exec(module)
            try:
                del loader.exec_module
            except Exception:
                pass
            try:
                sys.meta_path.remove(watcher)
            except ValueError:
                pass
            try:
                watcher.installed(module)
            except Exception:
                pass

        try:
            loader.exec_module = exec_module
        except Exception:
            return spec
        return spec


# -- hooks ------------------------------------------------------------------------------------


_HOOK_FILENAME = None  # wrappers' code objects claim to live inside Warp's package (see _hide)


def _hide(fn):
    """Give a wrapper's code object a file name inside Warp's own source directory.

    Warp finds "the user's frame" in places by skipping frames whose file lies in its package
    (allocation tags, verify_autograd_array_access messages). A wrapper defined here would
    be taken for user code and those messages would point at the shim; under a Warp file
    name the wrapper stays invisible, as if Warp had not been wrapped."""
    if _HOOK_FILENAME is not None:
        try:
            fn.__code__ = fn.__code__.replace(co_filename=_HOOK_FILENAME)
        except (AttributeError, TypeError, ValueError):
            pass
    return fn


def _frame_stack():
    stack = _tls.__dict__.get("stack")
    if stack is None:
        stack = _tls.stack = []
    return stack


def _top():
    stack = _tls.__dict__.get("stack")
    return stack[-1] if stack else None


def _install(warp):
    rec = _rec
    if rec is None or rec.warp is not None:
        return
    global threading, _tls
    import threading as _threading_module

    threading = _threading_module
    _tls = threading.local()
    rec.lock = threading.Lock()
    rec.warp = warp
    try:
        ctx = sys.modules.get("warp._src.context") or sys.modules.get("warp.context")
        build = sys.modules.get("warp._src.build") or sys.modules.get("warp.build")
        utils = sys.modules.get("warp._src.utils") or sys.modules.get("warp.utils")
        cfg = getattr(warp, "config", None)
        rec.ctx, rec.cfg = ctx, cfg
        warp_dir = os.path.dirname(os.path.abspath(warp.__file__)) + os.sep
        shim_dir = os.path.dirname(os.path.abspath(__file__)) + os.sep
        rec.internal_prefixes = (warp_dir, shim_dir, os.path.dirname(os.__file__) + os.sep + "importlib")
        global _HOOK_FILENAME
        src_dir = os.path.dirname(os.path.abspath(getattr(ctx, "__file__", None) or warp.__file__))
        _HOOK_FILENAME = os.path.join(src_dir, "xwarp_probe_hooks.py")

        hooks = rec.hooks
        force_log = os.environ.get("XWARP_FORCE_LOG_FALLBACK") == "1"
        Module = getattr(ctx, "Module", None)
        if Module is not None and not force_log:
            hooks["module_load"] = _hook_load(Module)
            hooks["status"] = _hook_compile(Module)
            hooks["codegen"] = _hook_method(Module, "_run_codegen", "codegen_ms")
            hooks["mark_modified"] = _hook_mark_modified(Module)
            hooks["module_created"] = _hook_module_init(Module)
        if build is not None and not force_log:
            hooks["native_cpu"] = _hook_build(build, "build_cpu", "cpu", source_arg=1)
            hooks["native_cuda"] = _hook_build(build, "build_cuda", "cuda", source_arg=0)
            hooks["lto"] = _hook_lto(build)
        if utils is not None and not force_log:
            hooks["warp_timer"] = _hook_timer(getattr(utils, "ScopedTimer", None))
        hooks["launch"] = _hook_launch(warp, ctx)
        if _lever is not None:
            _lever.at_import(warp, cfg)
        if os.environ.get("XWARP_NVRTC_TRACE") == "1":
            hooks["nvrtc_trace"] = _turn_on_compile_time_trace(cfg)
        hooks["config"] = _hook_config(cfg)
        hooks["calls"] = _hook_calls(warp, ctx, build)
        hooks["unique_kernels"] = _hook_kernel_decorator(warp)

        # Without the load hook the only source left is Warp's own log: turn its detail on
        # so the module lines carry block_dim and the native compile lines appear.
        log_fallback = not hooks.get("module_load")
        if log_fallback and cfg is not None:
            try:
                if hasattr(warp, "LOG_DEBUG") and hasattr(cfg, "log_level"):
                    cfg.log_level = warp.LOG_DEBUG
                else:
                    cfg.verbose = True
            except Exception:
                pass
        rec.emit(
            {
                "type": "warp",
                "version": getattr(warp, "__version__", None),
                "file": getattr(warp, "__file__", None),
                "hooks": hooks,
                "log_fallback": log_fallback,
            }
        )
        # Cache-related environment changes made before `import warp` waited for the record.
        for event in rec.pending:
            rec.emit(event)
        rec.pending = None
        _record_entry(rec)
    except Exception as exc:
        rec.emit({"type": "shim_error", "where": "install", "error": repr(exc)})


def _hook_load(Module):
    orig = getattr(Module, "load", None)
    if orig is None:
        return False
    rec = _rec

    def load(self, device, block_dim=None, *args, **kwargs):
        if _lever is not None and not self.execs:
            _lever.before_first_load(self)
        # Read the requested block_dim before the call: Warp <= 1.14 writes it into
        # self.options during load.
        options = self.options
        bd = block_dim if block_dim is not None else options.get("block_dim")
        stack = _frame_stack()
        frame = {}
        stack.append(frame)
        t0 = _perf()
        try:
            result = orig(self, device, block_dim, *args, **kwargs)
        except BaseException as exc:
            stack.pop()
            if not getattr(exc, "_xwarp_seen", False):
                try:
                    exc._xwarp_seen = True
                except Exception:
                    pass
                _record_load(rec, self, None, device, bd, frame, t0, exc)
            raise
        stack.pop()
        # Fast path: Warp returned an executable it already had. Nothing to record.
        if result is None or getattr(result, "_xwarp_seen", False):
            return result
        try:
            result._xwarp_seen = True
        except Exception:
            pass
        _record_load(rec, self, result, device, bd, frame, t0, None)
        return result

    Module.load = _hide(load)
    return True


def _record_load(rec, module, result, device, bd, frame, t0, error):
    total_ms = (_perf() - t0) * 1000.0
    try:
        if result is not None:
            hash_hex = _hex(getattr(result, "module_hash", None))
            dev = str(getattr(result, "device", device))
            block_dim = getattr(result, "block_dim", None) or bd
        else:
            hashers = getattr(module, "hashers", {}) or {}
            h = hashers.get(bd)
            hash_hex = None
            if h is not None:
                get = getattr(h, "get_hash", None) or getattr(h, "get_module_hash", None)
                hash_hex = _hex(get()) if get else None
            dev = str(device)
            try:
                dev = str(rec.ctx.runtime.get_device(device))
            except Exception:
                pass
            block_dim = bd
        if error is not None:
            status = "error"
        elif "compiled" in frame:
            status = "compiled" if frame["compiled"] else "cached"
        elif frame.get("warp_status") in ("compiled", "cached", "error"):
            status = frame["warp_status"]
        elif rec.hooks.get("status") == "compile-call":
            status = "cached"  # Warp 1.9-1.11 call compile() only when they build
        else:
            status = "unknown"
        event = {
            "type": "load",
            "module": module.name,
            "hash": hash_hex,
            "device": dev,
            "block_dim": block_dim,
            "status": status,
            "warp_ms": frame.get("warp_ms"),
            "total_ms": round(total_ms, 3),
            "t_start_ms": round((t0 - rec.t0) * 1000.0, 3),
            "thread": threading.current_thread().name,
        }
        if _preload_depth[0] > 0:
            event["via_preload"] = True
        launching = _tls.__dict__.get("launching")
        if launching is not None:
            event["triggered_by"] = launching
        test = _current_test()
        if test:
            event["test"] = test
            if status == "compiled":
                paid = rec.builds_by_test.setdefault(test, [0, 0.0])
                paid[0] += 1
                paid[1] += frame.get("warp_ms") or total_ms
        for key in (
            "native_ms",
            "native_kind",
            "codegen_ms",
            "source_bytes",
            "output_suffix",
            "ltoir_inputs",
            "lto",
            "first_in_thread",
            "pch_ms",
            "phases",
        ):
            if key in frame:
                event[key] = frame[key]
        if error is not None:
            event["error"] = f"{type(error).__name__}: {error}"[:2000]
        event["snapshot"] = _snapshot(module, bd)
        mismatch = _config_mismatch(module, rec.cfg)
        if mismatch:
            event["config_mismatch"] = mismatch
        rec.emit(event)
    except Exception as exc:
        rec.emit({"type": "shim_error", "where": "load", "error": repr(exc)})


# The test running in this process, each from where its runner keeps it, never decided once:
# pytest's node id as pytest's own runner sets PYTEST_CURRENT_TEST (the environment hook sees the
# assignment and checks who made it: a value the program wrote is no test), the unittest test
# TestCase.run is running (wrapped when unittest.case is imported, before or after Warp), and the
# test whose process started this one (the id it inherited). None outside any test.
_inherited_test = os.environ.get("PYTEST_CURRENT_TEST")
_inherited_name = _inherited_test.rsplit(" (", 1)[0] if isinstance(_inherited_test, str) and _inherited_test else None
_pytest_now = [None]
_unittest_now = [None]
_TEST_USE_CAP = 20000  # test_use records a process writes at most


def _pytest_set(key, value, frame):
    """Called by the environment hook for PYTEST_CURRENT_TEST: taken only from pytest's own runner,
    whose frame holds the item (its node id lacks its file under --pyargs: the file is added)."""
    try:
        code = frame.f_code
        if code.co_name == "_update_current_test_var" and "_pytest" in code.co_filename:
            if not (isinstance(value, str) and value):
                _pytest_now[0] = None
                return
            nodeid = value.rsplit(" (", 1)[0]
            if nodeid.startswith("::"):
                path = getattr(frame.f_locals.get("item"), "path", None)
                if path is not None:
                    nodeid = _test_file(os.fspath(path)) + nodeid
            _pytest_now[0] = nodeid
    except Exception:
        pass


def _test_file(path):
    """A test file as a test id names it: relative to the current folder when it is in it."""
    try:
        rel = os.path.relpath(path)
        return path if rel.startswith(os.pardir) else rel
    except ValueError:
        return path


def _unittest_id(case):
    """A unittest test's id, whole like pytest's (path/to/test_x.py::Class::test), so that a suite's
    tests read the same whichever runner ran them; its own id() when its file is unknown."""
    cls = type(case)
    module = sys.modules.get(getattr(cls, "__module__", ""))
    file = getattr(module, "__file__", None)
    method = getattr(case, "_testMethodName", None)
    if isinstance(file, str) and isinstance(method, str):
        return f"{_test_file(file)}::{cls.__qualname__}::{method}"
    name = case.id()
    return name if isinstance(name, str) else None


def _current_test():
    """The test that is running, for a load (never on the launch path): _test_now(), else the id of
    a unittest.TestCase whose method is on the stack (a test whose run() began before unittest was
    watched)."""
    now = _test_now()
    if now is not None:
        return now
    unittest = sys.modules.get("unittest")
    case = getattr(unittest, "TestCase", None)
    if case is None:
        return None
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            owner = f.f_locals.get("self")
            if isinstance(owner, case):
                try:
                    return _unittest_id(owner)
                except Exception:
                    return None
        f = f.f_back
    return None


def _watch_unittest():
    """Wraps unittest's TestCase.run so that a launch knows its test in one list read. What the
    test does is unchanged; an id() that is not a string is no test name."""
    case = getattr(sys.modules.get("unittest.case"), "TestCase", None)
    run = getattr(case, "run", None)
    if run is None or getattr(run, "_xwarp_watch", False):
        return

    def watched_run(self, *args, **kwargs):
        previous = _unittest_now[0]
        try:
            _unittest_now[0] = _unittest_id(self)
        except Exception:
            pass
        try:
            return run(self, *args, **kwargs)
        finally:
            _unittest_now[0] = previous

    watched_run._xwarp_watch = True
    watched_run.__wrapped__ = run
    watched_run.__doc__ = getattr(run, "__doc__", None)
    case.run = watched_run


def _test_now():
    """The test running now, on the launch path: three list reads."""
    return _pytest_now[0] or _unittest_now[0] or _inherited_name


def _note_test_use(rec, test, module, device):
    """A test's first launch of a module on a device: who reused what another test paid for."""
    try:
        use = (test, module, device)
        uses = rec.test_uses
        if use in uses or len(uses) >= _TEST_USE_CAP:
            return
        uses.add(use)
        rec.emit({"type": "call", "function": "test_use", "args": {"test": test, "module": module, "device": device},
                  "file": None, "line": None})
    except Exception:
        pass


def _snapshot(module, bd):
    """What the module's identity was made of at this load: unique kernels with their
    hashes and generic signatures, user function hashes, and the resolved options."""
    snap = {}
    try:
        hashers = getattr(module, "hashers", None) or {}
        h = hashers.get(bd)
        kernels = []
        if h is not None:
            unique = getattr(h, "unique_kernels", None)
            items = unique.items() if isinstance(unique, dict) else [(getattr(k, "hash", None), k) for k in h.get_unique_kernels()]
            seen = set()
            for khash, k in items:
                entry = (getattr(k, "key", "?"), _hex(khash, 16), getattr(k, "sig", "") or "")
                if entry in seen:
                    continue
                seen.add(entry)
                generic = getattr(k, "generic_parent", None) is not None
                item = {
                    "key": entry[0],
                    "hash": entry[1],
                    "sig": _instance_types(k) if generic else entry[2],
                    "generic": generic,
                }
                if generic:
                    try:
                        item["types"] = [_type_spec(t) for t in k.adj.arg_types.values()]
                    except Exception:
                        pass
                # A kernel's own option overrides the module's (Warp builds with module | kernel
                # options): @wp.kernel(enable_backward=False) generates no adjoint for it.
                own = getattr(k, "options", None)
                if isinstance(own, dict) and isinstance(own.get("enable_backward"), bool):
                    item["enable_backward"] = own["enable_backward"]
                # Where the kernel's function lives (a warm-up imports it from there; a
                # "<locals>" qualname is one a factory or closure made at run time).
                fn = getattr(k, "func", None)
                for field, attr in (("qualname", "__qualname__"), ("defined_in", "__module__")):
                    value = getattr(fn, attr, None)
                    if isinstance(value, str):
                        item[field] = value
                if isinstance(item.get("defined_in"), str) and _rec is not None:
                    _rec.kernel_modules.add(item["defined_in"])
                factory = getattr(getattr(k, "generic_parent", None) or k, "_xwarp_factory", None)
                if factory is not None:
                    item["factory"] = factory
                kernels.append(item)
            funcs = {}
            for f, fh in (getattr(h, "function_hashes", None) or {}).items():
                try:
                    is_builtin = f.is_builtin() if callable(getattr(f, "is_builtin", None)) else False
                except Exception:
                    is_builtin = False
                if not is_builtin:
                    funcs[getattr(f, "key", repr(f))] = _hex(fh, 16)
            snap["functions"] = funcs
        snap["kernels"] = sorted(kernels, key=lambda k: (k["key"], k["sig"], k["hash"] or ""))
        resolved = getattr(module, "resolved_options", None)
        opts = resolved.get(bd) if isinstance(resolved, dict) else None
        snap["options_source"] = "resolved" if opts is not None else "module"
        if opts is None:
            opts = dict(module.options)
            opts["block_dim"] = bd
        snap["options"] = {str(k): _jsonable(v) for k, v in opts.items()}
    except Exception as exc:
        snap["error"] = repr(exc)
    return snap


def _instance_types(kernel):
    # A generic instance's argument types, readable ("a: array(ndim=1, dtype=float64)");
    # Warp's own signature string is a compact code.
    try:
        types = kernel.adj.arg_types
        return ", ".join(f"{n}: {getattr(t, '__name__', None) or repr(t)}" for n, t in types.items())[:300]
    except Exception:
        return getattr(kernel, "sig", "") or ""


def _config_mismatch(module, cfg):
    out = {}
    if cfg is None:
        return out
    options = getattr(module, "options", {}) or {}
    for key in _SNAPSHOT_OPTION_KEYS:
        if key not in options or not hasattr(cfg, key):
            continue
        mv, cv = options[key], getattr(cfg, key)
        if mv is None:  # resolved lazily from config at hash time: cannot be stale
            continue
        if mv != cv:
            out[key] = {"module": _jsonable(mv), "config": _jsonable(cv)}
    return out


def _hook_compile(Module):
    # 1.12+: _compile() holds the cache check and returns True (built) / False (cached).
    # 1.9-1.11: compile() is called only when building and returns None.
    name = "_compile" if hasattr(Module, "_compile") else ("compile" if hasattr(Module, "compile") else None)
    if name is None:
        return False
    orig = getattr(Module, name)

    def compile_hook(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        frame = _top()
        if frame is not None:
            frame["compiled"] = bool(result) if isinstance(result, bool) else True
        return result

    setattr(Module, name, _hide(compile_hook))
    return "_compile" if name == "_compile" else "compile-call"


def _add_phase(frame, name, t0, t1):
    """A span inside a load (codegen, native compile, LTO, header write), in ms since the
    process's shim started: the build timeline draws them."""
    rec = _rec
    frame.setdefault("phases", []).append(
        [name, round((t0 - rec.t0) * 1000.0, 3), round((t1 - t0) * 1000.0, 3)]
    )


def _hook_method(cls, name, field):
    orig = getattr(cls, name, None)
    if orig is None:
        return False

    def timed(self, *args, **kwargs):
        t0 = _perf()
        try:
            return orig(self, *args, **kwargs)
        finally:
            frame = _top()
            if frame is not None:
                t1 = _perf()
                frame[field] = round(frame.get(field, 0.0) + (t1 - t0) * 1000.0, 3)
                _add_phase(frame, "codegen", t0, t1)

    setattr(cls, name, _hide(timed))
    return True


def _hook_build(build, name, kind, source_arg):
    orig = getattr(build, name, None)
    if orig is None:
        return False

    def native(*args, **kwargs):
        t0 = _perf()
        wall0 = time.time()
        try:
            return orig(*args, **kwargs)
        finally:
            # The first native build of a thread also pays for the thread's precompiled
            # header (Warp keeps one per thread): the analysis needs to know which one it was.
            count = _tls.__dict__.get("native_builds", 0)
            _tls.native_builds = count + 1
            frame = _top()
            if frame is not None:
                try:
                    t1 = _perf()
                    frame["native_ms"] = round(frame.get("native_ms", 0.0) + (t1 - t0) * 1000.0, 3)
                    frame["native_kind"] = kind
                    _add_phase(frame, "compile", t0, t1)
                    if count == 0:
                        frame["first_in_thread"] = True
                    # A build that needed a header the thread did not have yet (another
                    # block_dim, another optimization level) writes one more.
                    pch = _pch_generation_ms(kwargs.get("pch_dir"), wall0)
                    if pch is not None:
                        frame["pch_ms"] = pch
                        _add_phase(frame, "header", t0, t0 + pch / 1000.0)
                    src = args[source_arg] if len(args) > source_arg else None
                    if isinstance(src, (str, bytes, os.PathLike)) and os.path.exists(src):
                        frame["source_bytes"] = frame.get("source_bytes", 0) + os.path.getsize(src)
                    out = args[2] if kind == "cuda" and len(args) > 2 else (args[0] if args else None)
                    if isinstance(out, str):
                        frame["output_suffix"] = os.path.splitext(out)[1]
                    ltoirs = kwargs.get("ltoirs")
                    if ltoirs:
                        frame["ltoir_inputs"] = frame.get("ltoir_inputs", 0) + len(ltoirs)
                except Exception:
                    pass

    setattr(build, name, _hide(native))
    return True


def _pch_generation_ms(pch_dir, wall_start):
    """How long the thread's first build spent writing its precompiled header: the header
    file's mtime minus the build's start. Warp passes the per-thread PCH directory to the
    CPU build; nothing is created here."""
    if not isinstance(pch_dir, str) or not os.path.isdir(pch_dir):
        return None
    newest = None
    for entry in os.scandir(pch_dir):
        if entry.name.endswith(".pch"):
            m = entry.stat().st_mtime
            newest = m if newest is None or m > newest else newest
    if newest is None or newest < wall_start:
        return None
    return round((newest - wall_start) * 1000.0, 3)


def _hook_lto(build):
    orig = getattr(build, "_build_lto_base", None)
    if orig is None:
        return False

    def lto(lto_symbol, compile_func, builder, *args, **kwargs):
        built = [False]

        def compile_wrapper(*a, **k):
            built[0] = True
            return compile_func(*a, **k)

        t0 = _perf()
        try:
            return orig(lto_symbol, compile_wrapper, builder, *args, **kwargs)
        finally:
            frame = _top()
            if frame is not None:
                try:
                    import hashlib

                    t1 = _perf()
                    frame.setdefault("lto", []).append(
                        {
                            "symbol": hashlib.sha256(str(lto_symbol).encode()).hexdigest()[:16],
                            "built": built[0],
                            "ms": round((t1 - t0) * 1000.0, 3),
                        }
                    )
                    if built[0]:
                        _add_phase(frame, "lto", t0, t1)
                except Exception:
                    pass

    build._build_lto_base = _hide(lto)
    return True


def _hook_timer(ScopedTimer):
    orig = getattr(ScopedTimer, "__exit__", None) if ScopedTimer is not None else None
    if orig is None:
        return False

    def __exit__(self, *exc):
        result = orig(self, *exc)
        try:
            frame = _top()
            if frame is not None and str(getattr(self, "name", "")).startswith("Module "):
                if getattr(self, "active", False):
                    frame["warp_ms"] = round(float(self.elapsed), 3)
                msg = str(getattr(self, "extra_msg", "") or "").strip().strip("()")
                if msg:
                    frame["warp_status"] = msg
        except Exception:
            pass
        return result

    ScopedTimer.__exit__ = _hide(__exit__)
    return True


_TRIGGERS = (
    ("_add_normalized_overload", "overload"),
    ("add_overload", "overload"),
    ("register_kernel", "kernel"),
    ("register_function", "function"),
    ("register_struct", "struct"),
    ("set_module_options", "options"),
    ("unload", "unload"),
    ("_compile", "options"),
    ("compile", "options"),
)


def _hook_mark_modified(Module):
    orig = getattr(Module, "mark_modified", None)
    if orig is None:
        return False
    rec = _rec

    def mark_modified(self):
        try:
            if getattr(self, "execs", None):  # only a loaded module can churn
                _record_dirty(rec, self)
        except Exception:
            pass
        return orig(self)

    Module.mark_modified = _hide(mark_modified)
    return True


def _record_dirty(rec, module):
    chain, frames, file, line = rec.user_frame(skip=3)
    trigger, detail = "other", {}
    names = set(chain)
    for fname, kind in _TRIGGERS:
        if fname in names:
            trigger = kind
            break
    for f in frames:
        name = f.f_code.co_name
        loc = f.f_locals
        if trigger == "kernel" and name == "register_kernel" and "kernel" in loc:
            detail["kernel"] = getattr(loc["kernel"], "key", None)
            break
        if trigger == "overload" and name in ("_add_normalized_overload", "add_overload") and "self" in loc:
            detail["kernel"] = getattr(loc["self"], "key", None)
            if isinstance(loc.get("sig"), str):
                detail["sig"] = loc["sig"]
            break
        if trigger == "function" and name == "register_function" and "func" in loc:
            detail["function"] = getattr(loc["func"], "key", None)
            break
        if trigger == "options" and name == "set_module_options" and isinstance(loc.get("options"), dict):
            detail["options"] = {str(k): _jsonable(v) for k, v in loc["options"].items()}
            break
    del frames
    event = {"type": "dirty", "module": module.name, "trigger": trigger, "detail": detail, "file": file, "line": line}
    # For a kernel made inside a factory, the statement that called the factory matters too.
    if trigger == "kernel" and file is not None:
        try:
            f = sys._getframe(3)
            while f is not None and f.f_code.co_filename != file:
                f = f.f_back
            caller = f.f_back if f is not None else None
            if caller is not None and not rec.internal(caller.f_code.co_filename):
                detail["called_from"] = {"file": caller.f_code.co_filename, "line": caller.f_lineno}
        except Exception:
            pass
    rec.emit(event)


def _hook_module_init(Module):
    orig = getattr(Module, "__init__", None)
    if orig is None:
        return False
    rec = _rec

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        if _lever is not None:
            _lever.on_module_created(self)
        try:
            _, frames, file, line = rec.user_frame(skip=2)
            del frames
            rec.emit({"type": "module", "module": getattr(self, "name", None), "file": file, "line": line})
        except Exception:
            pass

    Module.__init__ = _hide(__init__)
    return True


def _hook_config(cfg):
    """Record every `wp.config.X = v` made outside Warp, with its file:line, by giving
    the config module object a subclass of its own class with a recording __setattr__."""
    if cfg is None:
        return False
    rec = _rec
    import types

    base = type(cfg)
    if not issubclass(base, types.ModuleType):
        return False

    def __setattr__(self, name, value):
        old = self.__dict__.get(name, None)
        if _lever is not None and _lever.holds_config(name):
            try:
                chain, frames, file, line = rec.user_frame(skip=2)
                del frames
                if file is not None and not chain:
                    _lever.count("config_assignments_held")
                    return
            except Exception:
                pass
        base.__setattr__(self, name, value)
        try:
            if not name.startswith("_"):
                # Only assignments written by user code: Warp sets some globals itself
                # (kernel_cache_dir at init), and those are not the user's decision.
                chain, frames, file, line = rec.user_frame(skip=2)
                del frames
                if file is not None and not chain:
                    rec.emit(
                        {
                            "type": "config_set",
                            "key": name,
                            "old": _jsonable(old),
                            "new": _jsonable(value),
                            "file": file,
                            "line": line,
                        }
                    )
        except Exception:
            pass

    try:
        cfg.__class__ = type("XwarpRecordedConfig", (base,), {"__setattr__": _hide(__setattr__)})
    except TypeError:
        return False
    return True


# Rare API calls that explain a measurement: cache clearing (CS-2), preloads (their block_dim
# and workers: CS-5, CS-13, preload-block-dim), tapes (gradients in use: CS-10) and module
# option changes (CS-3, option arrival). Each is recorded with the user's file:line.
_CALLS = (
    ("clear_kernel_cache", ("module", "device")),
    ("clear_lto_cache", ()),
    ("force_load", ("device", "modules", "block_dim", "max_workers")),
    ("load_module", ("module", "device", "recursive", "block_dim", "max_workers")),
    ("set_module_options", ("options", "module")),
)

_preload_depth = [0]  # > 0 while a force_load / load_module call runs (any thread)


def _describe_arg(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_describe_arg(v) for v in value]
    name = getattr(value, "name", None) or getattr(value, "__name__", None) or getattr(value, "alias", None)
    return str(name) if name is not None else repr(value)[:200]


def _hook_calls(warp, ctx, build):
    rec = _rec
    wrapped = {}
    for name, params in _CALLS:
        orig = getattr(warp, name, None)
        if orig is None or not callable(orig):
            continue
        preload = name in ("force_load", "load_module")
        # These two resolve module=None to *their caller's* module by looking a fixed number of
        # frames up. This wrapper is one more frame, so it names the caller's module itself.
        caller_module_param = "module" if name in ("set_module_options", "load_module") else None
        try:
            import inspect

            signature = inspect.signature(orig)
        except (TypeError, ValueError):
            signature, caller_module_param = None, None

        def make(orig=orig, name=name, params=params, preload=preload, signature=signature, cm=caller_module_param):
            def call(*args, **kwargs):
                if cm is not None:
                    try:
                        bound = signature.bind_partial(*args, **kwargs)
                        if bound.arguments.get(cm) is None:
                            bound.arguments[cm] = _caller_module(sys._getframe(1))
                            args, kwargs = bound.args, bound.kwargs
                    except Exception:
                        pass
                try:
                    # load_module calls force_load: record the user's call, not Warp's own.
                    nested = preload and _preload_depth[0] > 0
                    _, frames, file, line = rec.user_frame(skip=2)
                    del frames
                    if file is not None and not nested:
                        detail = {}
                        for i, p in enumerate(params):
                            if i < len(args):
                                detail[p] = _describe_arg(args[i])
                            elif p in kwargs:
                                detail[p] = _describe_arg(kwargs[p])
                        if name == "set_module_options" and detail.get("module") is None:
                            detail["module"] = _user_module_name(file)
                        rec.emit({"type": "call", "function": name, "args": detail, "file": file, "line": line})
                except Exception:
                    pass
                if _lever is not None:
                    held = _lever.on_call(name, args, kwargs)
                    if held is not None:
                        if held is _lever_skip_call():
                            return None
                        args, kwargs = held
                if preload:
                    _preload_depth[0] += 1
                    try:
                        return orig(*args, **kwargs)
                    finally:
                        _preload_depth[0] -= 1
                return orig(*args, **kwargs)

            call.__wrapped__ = orig
            call.__doc__ = getattr(orig, "__doc__", None)
            return _hide(call)

        wrapper = make()
        setattr(warp, name, wrapper)
        if ctx is not None and getattr(ctx, name, None) is orig:
            setattr(ctx, name, wrapper)
        if build is not None and getattr(build, name, None) is orig:
            setattr(build, name, wrapper)
        wrapped[name] = True
    tape = getattr(warp, "Tape", None)
    if tape is not None and hasattr(tape, "__init__"):
        orig_init = tape.__init__
        seen = [False]

        def __init__(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            if not seen[0]:
                seen[0] = True
                try:
                    _, frames, file, line = rec.user_frame(skip=2)
                    del frames
                    rec.emit({"type": "call", "function": "Tape", "args": {}, "file": file, "line": line})
                except Exception:
                    pass

        tape.__init__ = _hide(__init__)
        wrapped["Tape"] = True
    return wrapped


def _lever_skip_call():
    import xwarp_levers

    return xwarp_levers.SKIP_CALL


def _caller_module(frame):
    """The Python module Warp would resolve for a call made from `frame`, as an object with
    __name__ (which every Warp version accepts for module=)."""
    import types

    name = frame.f_globals.get("__name__")
    if not name:
        spec = frame.f_globals.get("__spec__")
        name = spec.name if spec is not None else None
    module = sys.modules.get(name) if name else None
    if module is not None and getattr(module, "__dict__", None) is frame.f_globals:
        return module
    return types.SimpleNamespace(__name__=name)


def _user_module_name(file):
    # set_module_options(module=None) targets the caller's Python module: its __name__.
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) == file:
            return mod.__name__
    return None


def _hook_launch(warp, ctx):
    orig = getattr(ctx, "launch", None) if ctx is not None else getattr(warp, "launch", None)
    if orig is None:
        return False
    import inspect
    from array import array

    rec = _rec
    rec.launch_seq = array("I")
    try:
        params = list(inspect.signature(orig).parameters)
    except (TypeError, ValueError):
        params = ["kernel", "dim", "inputs", "outputs", "adj_inputs", "adj_outputs", "device", "stream", "adjoint"]
    pos = {name: params.index(name) for name in params}
    p_dim, p_in, p_out = pos.get("dim", 1), pos.get("inputs", 2), pos.get("outputs", 3)
    p_dev, p_stream, p_adj, p_bd = pos.get("device"), pos.get("stream"), pos.get("adjoint"), pos.get("block_dim")
    get_device = getattr(warp, "get_device", None)
    index = rec.launch_index

    def arg(args, kwargs, p, name, default):
        if p is not None and p < len(args):
            return args[p]
        return kwargs.get(name, default)

    def launch(*args, **kwargs):
        used = None  # (module, device): written as a test_use after the launch, its load included
        if _lever is not None and _lever.wants_first_launch:
            _lever.wants_first_launch = False
            _lever.at_first_launch(warp, ctx, _preload_depth)
        try:
            kernel = args[0] if args else kwargs.get("kernel")
            dim = arg(args, kwargs, p_dim, "dim", None)
            if type(dim) is not int and dim is not None:
                dim = tuple(dim)
            types = tuple(
                (type(a), getattr(a, "dtype", None), getattr(a, "ndim", None))
                for group in (arg(args, kwargs, p_in, "inputs", ()), arg(args, kwargs, p_out, "outputs", ()))
                for a in (group or ())
            )
            stream = arg(args, kwargs, p_stream, "stream", None)
            device = stream.device if stream is not None else arg(args, kwargs, p_dev, "device", None)
            if device is None and get_device is not None:
                device = get_device()
            key = (
                kernel.key,
                kernel.module.name,
                dim,
                str(device),
                types,
                arg(args, kwargs, p_bd, "block_dim", None),
                bool(arg(args, kwargs, p_adj, "adjoint", False)),
            )
            i = index.get(key)
            if i is None:
                i = index[key] = len(index)
                _record_launch_site(rec, kernel)
            test = _test_now()
            used = (test, key[1], key[3]) if test is not None else None
            rec.launch_total += 1
            if rec.launch_total <= _LAUNCH_CAP:
                rec.launch_seq.append(i)
        except Exception:
            pass
        # The kernel being launched, for a load it triggers (the build timeline says which
        # launch waited). One attribute write: the per-launch path stays O(1).
        tls = _tls.__dict__
        previous = tls.get("launching")
        try:
            tls["launching"] = args[0].key if args else kwargs["kernel"].key
        except Exception:
            tls["launching"] = None
        try:
            if _time_kernels:
                return _timed_launch(rec, warp, orig, args, kwargs)
            return orig(*args, **kwargs)
        finally:
            tls["launching"] = previous
            if used is not None:
                _note_test_use(rec, *used)

    launch.__wrapped__ = orig
    launch.__doc__ = getattr(orig, "__doc__", None)
    _hide(launch)
    ctx.launch = launch
    if getattr(warp, "launch", None) is orig:
        warp.launch = launch
    return True


_LAUNCH_SITE_CAP = 256  # launch-site records per process (a new signature in a loop adds one each time)
_launch_sites_seen = set()


def _record_launch_site(rec, kernel):
    """The user frames on the stack of a launch signature's first launch, innermost first: a
    launch through a wrapper (self._launch, a Stage.run(), a library's helper) is a launch in
    each of its callers' statements. Only on a new signature: never on the steady launch path."""
    if len(_launch_sites_seen) >= _LAUNCH_SITE_CAP:
        return
    try:
        stack = []
        f = sys._getframe(2)
        while f is not None and len(stack) < 12:
            fn = f.f_code.co_filename
            if not rec.internal(fn):
                stack.append([fn, f.f_lineno, f.f_code.co_name])
            f = f.f_back
        if not stack:
            return
        seen = (getattr(kernel, "key", None), tuple(tuple(x[:2]) for x in stack))
        if seen in _launch_sites_seen:
            return
        _launch_sites_seen.add(seen)
        module = getattr(getattr(kernel, "module", None), "name", None)
        args = {"kernel": getattr(kernel, "key", None), "module": module, "stack": stack}
        rec.emit({"type": "call", "function": "launch", "args": args, "file": stack[0][0], "line": stack[0][1]})
    except Exception:
        pass


def _record_entry(rec):
    """The file the interpreter runs as __main__ (a script, -m's package __main__.py, a console
    script) and the folder its top package imports from: where entry-point edits go."""
    try:
        main = sys.modules.get("__main__")
        file = getattr(main, "__file__", None)
        spec = getattr(main, "__spec__", None)
        name = getattr(spec, "name", None) if spec is not None else None
        root = None
        if isinstance(file, str):
            file = os.path.abspath(file)
            root = os.path.dirname(file)
            if name:
                # pkg.sub.__main__ lives in root/pkg/sub/__main__.py: its top package's parent
                for _ in range(name.count(".")):
                    root = os.path.dirname(root)
        rec.emit({"type": "call", "function": "entry", "args": {"file": file, "module": name, "root": root},
                  "file": file, "line": None})
    except Exception:
        pass


# -- kernels made by factories (warm-up re-creates them) -------------------------------------


def _plain(value, depth=0):
    """A factory argument as tagged data the warm-up can rebuild: {"lit"} for None, bool, int,
    str; {"float"} for a float (its repr, so nan and inf survive JSON); {"tuple"}/{"list"} of
    plain values; {"ref": "module:qualname"} for an enum member, a Warp type or a module-level
    class or function that resolves to the same object; {"enum": class ref, "value": int} for a
    combination of flags; {"object": type} for anything else."""
    t = type(value)
    if value is None or t in (bool, int) or (t is str and len(value) <= 1000):
        return {"lit": value}
    if t is float:
        return {"float": repr(value)}
    if t in (tuple, list) and depth < 4 and len(value) <= 64:
        items = [_plain(v, depth + 1) for v in value]
        if all("object" not in i for i in items):
            return {t.__name__: items}
        return {"object": t.__name__ + " holding an object"}
    ref = _ref_of(value)
    if ref is not None:
        return {"ref": ref}
    import enum

    if isinstance(value, enum.Enum) and type(value.value) is int:
        owner = _ref_of(type(value))  # a combination of flags has no member name: its class and value
        if owner is not None:
            return {"enum": owner, "value": value.value}
    return {"object": getattr(t, "__qualname__", str(t))[:200]}


def _ref_of(value):
    import enum

    if isinstance(value, enum.Enum):
        owner = _ref_of(type(value))
        name = value.name
        return f"{owner}.{name}" if owner is not None and isinstance(name, str) and name.isidentifier() else None
    warp = _rec.warp if _rec is not None else None
    name = getattr(value, "__name__", None)
    if warp is not None and isinstance(name, str) and getattr(warp, name, None) is value:
        return "warp:" + name  # a Warp type (wp.float32, wp.vec3) by the name Warp exports
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return None
    obj = sys.modules.get(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return f"{module}:{qualname}" if obj is value else None


def _factory_of(func, rec):
    """The call that made a kernel function defined inside another function: the frame whose
    code holds the function's code (through any wrapper of wp.kernel), with its arguments."""
    code = getattr(func, "__code__", None)
    qualname = getattr(func, "__qualname__", "")
    if code is None or ".<locals>." not in qualname:
        return None
    f = sys._getframe(2)
    depth = 0
    while f is not None and code not in f.f_code.co_consts:
        f = f.f_back
        depth += 1
        if depth > 40:
            return None
    if f is None:
        return None
    fc = f.f_code
    named = fc.co_argcount + fc.co_kwonlyargcount
    names = list(fc.co_varnames[:named])
    kinds = ["pos"] * fc.co_argcount + ["kw"] * fc.co_kwonlyargcount
    if fc.co_flags & 0x04:  # *args
        names.append(fc.co_varnames[named])
        kinds.append("star")
    local = f.f_locals
    args = [[n, k, _plain(local.get(n))] for n, k in zip(names, kinds)]
    return {
        "module": f.f_globals.get("__name__"),
        "qualname": getattr(fc, "co_qualname", fc.co_name),
        "file": fc.co_filename,
        "line": f.f_lineno,
        "args": args,
    }


def _note_factory(kernel, func, rec):
    try:
        if ".<locals>." in getattr(func, "__qualname__", ""):
            info = _factory_of(func, rec)
            if info is not None:
                kernel._xwarp_factory = info
    except Exception:
        pass
    return kernel


# -- module="unique" declarations (CS-9) ------------------------------------------------------


def _default_line(code, param):
    """The line of `param="unique"` in the signature of the function `code` belongs to."""
    import inspect
    import re

    try:
        lines, start = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    pattern = re.compile(r"\b" + re.escape(param) + r"\s*(:[^=,]*)?=\s*[\"']unique[\"']")
    for i, text in enumerate(lines[:40]):
        if pattern.search(text):
            return start + i
        if text.rstrip().endswith(":") and ")" in text:  # end of the signature
            break
    return None


def _unique_declaration(rec):
    """Where a wp.kernel(module="unique") call was written, and when the "unique" came in as a
    parameter of the declaring function (a factory), that parameter's default and the call of
    the factory. Called only for module="unique": never on a launch path."""
    f = sys._getframe(2)
    while f is not None and rec.internal(f.f_code.co_filename):
        f = f.f_back
    if f is None:
        return None
    code = f.f_code
    decl = {"file": code.co_filename, "line": f.f_lineno, "declared_in": code.co_name}
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    local = f.f_locals
    for p in params:
        if local.get(p) == "unique":
            line = _default_line(code, p)
            if line is not None:
                decl["default"] = {"file": code.co_filename, "line": line, "param": p}
            caller = f.f_back
            while caller is not None and rec.internal(caller.f_code.co_filename):
                caller = caller.f_back
            if caller is not None:
                decl["called_from"] = {"file": caller.f_code.co_filename, "line": caller.f_lineno}
                # the user frames above it, innermost first: a factory called through a caching
                # wrapper is really called where the wrapper was (the fixer picks the statement
                # that sits in a block with a launch before it)
                stack = []
                while caller is not None and len(stack) < 8:
                    if not rec.internal(caller.f_code.co_filename):
                        stack.append([caller.f_code.co_filename, caller.f_lineno])
                    caller = caller.f_back
                decl["called_stack"] = stack
            break
    return decl


def _record_unique(rec, kernel, decl):
    try:
        if decl is None:
            return
        module = getattr(kernel, "module", None)
        args = {"key": getattr(kernel, "key", None), "module": getattr(module, "name", None)}
        for k in ("declared_in", "default", "called_from", "called_stack"):
            if k in decl:
                args[k] = decl[k]
        rec.emit({"type": "call", "function": "kernel", "args": args, "file": decl["file"], "line": decl["line"]})
    except Exception:
        pass


def _hook_kernel_decorator(warp):
    orig = getattr(warp, "kernel", None)
    if orig is None or not callable(orig):
        return False
    rec = _rec

    def kernel(f=None, *args, **kwargs):
        moving = _lever is not None and _lever.moves_kernels
        if kwargs.get("module") != "unique" and not moving:
            if f is not None:
                return _note_factory(orig(f, *args, **kwargs), f, rec)

            def plain(func):
                return _note_factory(orig(func, *args, **kwargs), func, rec)

            return plain
        decl = None
        if kwargs.get("module") == "unique":
            try:
                decl = _unique_declaration(rec)
            except Exception:
                decl = None

        def declare(func):
            options = dict(kwargs)
            if moving:
                target = _lever.kernel_module(func, options)
                if target is not None:
                    options["module"] = target
                    options.pop("module_options", None)
            out = orig(func, *args, **options)
            if decl is not None and options.get("module") == "unique":
                _record_unique(rec, out, decl)
            return _note_factory(out, func, rec)

        if f is not None:
            return declare(f)
        return declare

    kernel.__wrapped__ = orig
    kernel.__doc__ = getattr(orig, "__doc__", None)
    warp.kernel = _hide(kernel)
    return True


# -- cache-related environment variables (CS-2) ----------------------------------------------

_WATCHED_ENV = ("CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "WARP_CACHE_PATH")


def _hook_environ(rec):
    """Record assignments of the cache variables through os.environ, with the user's line, and
    CUDA_CACHE_DISABLE when the command's environment already set it. The probe sets
    CUDA_CACHE_PATH and WARP_CACHE_PATH itself, so only the program's own changes count."""
    value = os.environ.get("CUDA_CACHE_DISABLE")
    if value:
        rec.emit_or_hold(
            {"type": "call", "function": "environ", "args": {"name": "CUDA_CACHE_DISABLE", "value": value, "inherited": True},
             "file": None, "line": None}
        )
    base = type(os.environ)

    def __setitem__(self, key, value):
        if key in _WATCHED_ENV and _lever is not None and _lever.holds_environ(key):
            _lever.count("environment_assignments_held")
            return
        base.__setitem__(self, key, value)
        if key == "PYTEST_CURRENT_TEST":
            _pytest_set(key, value, sys._getframe(1))
        elif key in _WATCHED_ENV:
            try:
                f = sys._getframe(1)
                rec.emit_or_hold(
                    {"type": "call", "function": "environ", "args": {"name": key, "value": str(value)},
                     "file": f.f_code.co_filename, "line": f.f_lineno}
                )
            except Exception:
                pass

    def __delitem__(self, key):
        base.__delitem__(self, key)
        if key == "PYTEST_CURRENT_TEST":  # pytest's runner pops it after each test's teardown
            try:
                f = sys._getframe(1)
                while f is not None and f.f_code.co_name in ("pop", "__delitem__"):
                    f = f.f_back
                _pytest_set(key, None, f)
            except Exception:
                pass

    try:
        os.environ.__class__ = type("XwarpRecordedEnviron", (base,), {"__setitem__": __setitem__, "__delitem__": __delitem__})
    except TypeError:
        return False
    return True


# -- timing and tracing switches ---------------------------------------------------------------

# Kernels (by key) whose launches are timed at steady state: the mathdx-off replay and the
# baseline samples it interleaves with time the same kernels, whether or not they use LTO.
_time_kernels = frozenset(k for k in os.environ.get("XWARP_TIME_LAUNCHES", "").split(",") if k)
_LAUNCH_TIMES_CAP = 1000  # per kernel


def _turn_on_compile_time_trace(cfg):
    """measure --nvrtc-trace: Warp's compile_time_trace (1.8+) on, right after `import warp` and
    before the program creates a module (modules copy it when created). NVRTC then writes a
    Chrome trace next to each CUDA module it builds. False where this Warp has no such option."""
    if cfg is None or not hasattr(cfg, "compile_time_trace"):
        return False
    try:
        type(cfg).__setattr__(cfg, "compile_time_trace", True)
        return True
    except Exception:
        return False


def _type_spec(t):
    """A generic instance's argument type as data the replay can turn back into the type."""
    if not isinstance(t, type) and getattr(t, "dtype", None) is not None and hasattr(t, "ndim"):
        kind = type(t).__name__
        # wp.array(dtype=...) in an annotation is a private class; the public name builds it
        return {"array": "array" if kind.startswith("_") else kind, "dtype": _type_spec(t.dtype), "ndim": t.ndim}
    name = getattr(t, "__name__", repr(t))
    spec = {"type": name}
    # A vector or matrix of a shape Warp's namespace has no name for (wp.types.vector(length=5, ...)):
    # its class is named vec_t or mat_t, so its shape and scalar say what to build
    shape, scalar = getattr(t, "_shape_", None), getattr(t, "_wp_scalar_type_", None)
    if isinstance(shape, tuple) and scalar is not None and getattr(sys.modules.get("warp"), name, None) is not t:
        spec["shape"] = list(shape)
        spec["scalar"] = _type_spec(scalar)
    # A @wp.struct is Warp's Struct around the class it was made from: a warm-up imports the
    # class by where it lives
    cls = getattr(t, "cls", None)
    if isinstance(cls, type) and isinstance(getattr(t, "vars", None), dict):
        spec["struct"] = f"{cls.__module__}:{cls.__qualname__}"
    return spec


def _timed_launch(rec, warp, orig, args, kwargs):
    """The launch, between two device synchronizations, when its kernel is one the replay times
    (the kernels of the modules that built MathDx LTO artifacts in the baseline): the
    steady-state time mathdx-off must be weighed against."""
    try:
        kernel = args[0] if args else kwargs.get("kernel")
        if kernel.key not in _time_kernels:
            return orig(*args, **kwargs)
    except Exception:
        return orig(*args, **kwargs)
    sync = getattr(warp, "synchronize", None)
    if sync is not None:
        sync()
    t0 = _perf()
    result = orig(*args, **kwargs)
    if sync is not None:
        sync()
    times = rec.launch_times.setdefault(kernel.key, [])
    if len(times) < _LAUNCH_TIMES_CAP:
        times.append(round((_perf() - t0) * 1000.0, 4))
    return result


# -- process lifecycle ------------------------------------------------------------------------


def _after_fork_in_child():
    # A forked child gets its own record: it must not append to the parent's file.
    rec = _rec
    if rec is None:
        return
    rec.lock = threading.Lock() if threading is not None else None
    rec.file = None
    rec.pid = os.getpid()
    rec.seq = 0
    rec.t0 = _perf()
    rec.started_unix = time.time()
    rec.launch_index.clear()
    if rec.launch_seq is not None:
        del rec.launch_seq[:]
    rec.launch_total = 0
    rec.finished = False
    if _tls is not None:
        _tls.__dict__.pop("stack", None)


def start():
    global _rec
    if _rec is not None:
        return
    record_dir = os.environ.get("XWARP_RECORD_DIR")
    if not record_dir or not os.path.isdir(record_dir):
        return
    _rec = _Recorder(record_dir)
    _load_lever()
    import atexit

    atexit.register(_rec.finish)
    try:
        _hook_environ(_rec)
    except Exception:
        pass
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
    if "unittest.case" in sys.modules:
        _watch_unittest()
    else:
        sys.meta_path.insert(0, _ImportWatcher("unittest.case", lambda module: _watch_unittest()))
    if "warp" in sys.modules:
        _install(sys.modules["warp"])
    else:
        sys.meta_path.insert(0, _ImportWatcher("warp", _install))
