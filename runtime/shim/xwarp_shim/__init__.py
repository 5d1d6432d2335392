"""xwarp recorder: runs inside every Python process of a measured command.

warp-probe starts it through the `sitecustomize.py` beside this package. It waits for
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

Rules every module here keeps, because it runs inside someone else's program:
* it never changes whether or how the target runs: every wrapper calls through and
  swallows its own failures;
* the per-launch path stays O(1): no stack walks, no I/O, no strong references to
  kernel objects (holding one would keep closure kernels alive and change module hashes);
* every Warp internal is feature-detected; a missing hook is reported, never guessed.

One module per job: recorder (the record files), install (the hooks, once Warp is imported),
loads and build_phases (what a load did), snapshot (a module's content), dirtying (churn),
calls, launches, declarations, environ, attribution (which test paid), levers (what-if
replays); state holds what they share.
"""

import os
import sys
import time

from . import state
from .attribution import watch_unittest
from .environ import hook_environ
from .recorder import Recorder
from .state import load_lever, perf
from .watcher import ImportWatcher


def active_recorder():
    """This process's recorder, or None when the shim does not record here (the pytest plugin
    reads each test's builds from it)."""
    return state.rec


def after_fork_in_child():
    # A forked child gets its own record: it must not append to the parent's file.
    rec = state.rec
    if rec is None:
        return
    rec.lock = state.threading.Lock() if state.threading is not None else None
    rec.file = None
    rec.pid = os.getpid()
    rec.seq = 0
    rec.t0 = perf()
    rec.started_unix = time.time()
    rec.launch_index.clear()
    rec.load_cache_dirs = set()
    if rec.launch_seq is not None:
        del rec.launch_seq[:]
    rec.launch_total = 0
    rec.finished = False
    if state.tls is not None:
        state.tls.__dict__.pop("stack", None)


def install_hooks(warp):
    # The hooks' modules are imported only once Warp is: a process of the command that never
    # imports Warp loads the recorder and the watchers, nothing more.
    from .install import install

    install(warp)


def start(observer=False):
    """Starts recording into $XWARP_RECORD_DIR. observer (the pytest plugin): record only, and
    apply nothing the environment's XWARP_ variables ask for (a what-if lever, timed launches)."""
    if state.rec is not None:
        return
    record_dir = os.environ.get("XWARP_RECORD_DIR")
    if not record_dir or not os.path.isdir(record_dir):
        return
    state.observer = bool(observer)
    state.force_log_fallback = os.environ.get("XWARP_FORCE_LOG_FALLBACK") == "1" and not state.observer
    state.nvrtc_trace = os.environ.get("XWARP_NVRTC_TRACE") == "1" and not state.observer
    state.rec = Recorder(record_dir)
    if not state.observer:
        load_lever()
    import atexit

    atexit.register(state.rec.finish)
    try:
        hook_environ(state.rec)
    except Exception:
        pass
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=after_fork_in_child)
    if "unittest.case" in sys.modules:
        watch_unittest()
    else:
        sys.meta_path.insert(0, ImportWatcher("unittest.case", lambda module: watch_unittest()))
    if "warp" in sys.modules:
        install_hooks(sys.modules["warp"])
    else:
        sys.meta_path.insert(0, ImportWatcher("warp", install_hooks))
