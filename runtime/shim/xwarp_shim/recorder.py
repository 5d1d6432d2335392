"""The recorder: one JSON-lines file per process under $XWARP_RECORD_DIR (O_EXCL: no process
writes another's), the exit record with what the process launched and which hooks held,
and the facts about the run the analysis needs (block_dim, devices, the entry point)."""

import os
import sys
import time

from . import state
from .places import runner_prefixes, site_prefixes
from .state import perf
from .values import jsonable, type_name, without_lone_surrogates

LAUNCH_CAP = 2_000_000  # ordered launches kept; beyond this only the total grows

# The record contract this shim writes: contracts/shim_records.schema.json describes every
# record below, and its x-contract-version is this number (a test holds them equal).
CONTRACT = 3


class Recorder:
    def __init__(self, record_dir):
        self.record_dir = record_dir
        self.t0 = perf()
        self.started_unix = time.time()
        self.lock = None  # a state.threading.Lock once Warp is imported; before that, one thread
        self.file = None
        self.seq = 0
        self.pid = os.getpid()
        self.internal_prefixes = ()
        self.user_prefixes = ()  # inside an internal folder, yet the user's kind of code (Warp's tests)
        self.stdlib_prefix = os.path.dirname(os.__file__) + os.sep
        self.site_prefixes = site_prefixes()
        self.hooks = {}
        self.warp = None
        self.ctx = None
        self.cfg = None
        # launches: signature -> index, and the ordered index sequence
        self.launch_index = {}
        # The kernel cache in force at each load that did work: a program that moves
        # kernel_cache_dir and sets it back before it ends loaded from where it pointed then.
        self.load_cache_dirs = set()
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
                "contract": CONTRACT,
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
        obj["t_ms"] = round((perf() - self.t0) * 1000.0, 3)
        self.seq += 1
        text = json.dumps(obj, default=jsonable, separators=(",", ":"))
        if "\\ud" in text:
            # a surrogate: a text that held bytes that are not UTF-8 (os.fsdecode of a file name, argv)
            # or a pair; a lone one is escaped, so that the record stays JSON any reader takes
            text = json.dumps(without_lone_surrogates(obj), default=lambda v: without_lone_surrogates(jsonable(v)),
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
        if fn.startswith(self.user_prefixes):
            return False
        if fn.startswith(self.internal_prefixes) or fn.startswith("<frozen"):
            return True
        if fn == "<string>" and "execnet" in sys.modules:
            return True  # an xdist worker's bootstrap, exec'd by execnet (a `python -c` program's code stays the user's)
        if fn.startswith(self.stdlib_prefix) and not fn.startswith(self.site_prefixes):
            return True
        return fn.startswith(runner_prefixes())

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
        if os.environ.get("XWARP_RESULTS") != "1" or state.observer:
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
        record_entry(self)
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
                        "dtypes": [type_name(t) for t in types],
                        "block_dim": block_dim,  # resolved at the launch
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
                    "runtime": dict(runtime_facts(self.ctx, self.cfg),
                                    kernel_cache_dirs_at_loads=sorted(self.load_cache_dirs)),
                    "whatif": {"lever": state.lever.name, "applied": state.lever.applied} if state.lever is not None else None,
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


def effective_block_dim(device, block_dim, cfg):
    # Mirrors wp.launch: CPU runs one thread per block unless CPU blocks are enabled;
    # CUDA takes the requested value, 256 when omitted or non-positive.
    if device == "cpu" or (isinstance(device, str) and device.startswith("cpu")):
        if block_dim and block_dim > 1 and getattr(cfg, "enable_cpu_blocks", False):
            return block_dim
        return 1
    if block_dim is None or block_dim <= 0:
        return 256
    return block_dim


def runtime_facts(ctx, cfg):
    facts = {}
    try:
        import warp

        facts["warp_version"] = getattr(warp, "__version__", None) or getattr(cfg, "version", None)
        cache_dir = getattr(cfg, "kernel_cache_dir", None)
        facts["kernel_cache_dir"] = os.path.realpath(str(cache_dir)) if cache_dir else cache_dir  # links resolved
        rt = getattr(ctx, "runtime", None)
        if rt is not None:
            facts["toolkit_version"] = jsonable(getattr(rt, "toolkit_version", None))
            facts["driver_version"] = jsonable(getattr(rt, "driver_version", None))
            devices = []
            for d in [getattr(rt, "cpu_device", None)] + list(getattr(rt, "cuda_devices", []) or []):
                if d is None:
                    continue
                devices.append(
                    {
                        "alias": str(getattr(d, "alias", d)),
                        "name": str(getattr(d, "name", "")),
                        "arch": jsonable(getattr(d, "arch", None)) if getattr(d, "is_cuda", False) else None,
                        "is_cuda": bool(getattr(d, "is_cuda", False)),
                    }
                )
            facts["devices"] = devices
    except Exception as exc:
        facts["error"] = repr(exc)
    return facts


def import_system(warp):
    """Where this Python imports from, for the probe to decide whose code each file is (it reads
    the installed distributions' RECORD files there, outside this process and its timing): the
    import path as the program left it, the standard library's folders, Warp's package folder and
    the working folder."""
    try:
        import sysconfig

        paths = sysconfig.get_paths()
        stdlib = sorted({os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if paths.get(k)})
    except Exception:
        stdlib = [os.path.dirname(os.__file__)]
    cwd = os.getcwd()
    sys_path = []
    for entry in sys.path[:200]:
        if isinstance(entry, str):
            full = os.path.abspath(os.path.join(cwd, entry))
            if full not in sys_path:
                sys_path.append(full)
    warp_file = getattr(warp, "__file__", None)
    warp_dir = os.path.dirname(os.path.realpath(warp_file)) if isinstance(warp_file, str) else None
    return {"sys_path": sys_path, "stdlib": stdlib, "warp": warp_dir, "cwd": cwd}


def record_entry(rec):
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
        rec.emit({"type": "call", "function": "entry",
                  "args": {"file": file, "module": name, "root": root, **import_system(rec.warp)},
                  "file": file, "line": None})
    except Exception:
        pass
