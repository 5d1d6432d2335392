"""Kernel launches: each launch as an interned signature, in order (O(1) per launch), the user
frames of each signature's first launch, and steady-state launch times where asked."""

import os
import sys

from . import state
from .attribution import note_test_use, test_now
from .calls import preload_depth
from .recorder import LAUNCH_CAP, effective_block_dim
from .state import perf
from .wrapping import hide


def hook_launch(warp, ctx):
    orig = getattr(ctx, "launch", None) if ctx is not None else getattr(warp, "launch", None)
    if orig is None:
        return False
    import inspect
    from array import array

    rec = state.rec
    rec.launch_seq = array("I")
    try:
        params = list(inspect.signature(orig).parameters)
    except (TypeError, ValueError):
        params = ["kernel", "dim", "inputs", "outputs", "adj_inputs", "adj_outputs", "device", "stream", "adjoint"]
    pos = {name: params.index(name) for name in params}
    p_dim, p_in, p_out = pos.get("dim", 1), pos.get("inputs", 2), pos.get("outputs", 3)
    p_dev, p_stream, p_adj, p_bd = pos.get("device"), pos.get("stream"), pos.get("adjoint"), pos.get("block_dim")
    get_device = getattr(warp, "get_device", None)
    config = getattr(warp, "config", None)
    index = rec.launch_index
    # Bound once: the lever is chosen at start and the thread-local made at `import warp`, both
    # before this hook; the per-launch path reads closure cells, not the state module.
    lever = state.lever
    local = state.tls

    def arg(args, kwargs, p, name, default):
        if p is not None and p < len(args):
            return args[p]
        return kwargs.get(name, default)

    def launch(*args, **kwargs):
        used = None  # (module, device): written as a test_use after the launch, its load included
        if lever is not None and lever.wants_first_launch:
            lever.wants_first_launch = False
            lever.at_first_launch(warp, ctx, preload_depth)
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
            # The block_dim the launch runs at, resolved now: a config changed after the
            # launch (enable_cpu_blocks set back at the end) does not change what ran.
            device = str(device)
            key = (
                kernel.key,
                kernel.module.name,
                dim,
                device,
                types,
                effective_block_dim(device, arg(args, kwargs, p_bd, "block_dim", None), config),
                bool(arg(args, kwargs, p_adj, "adjoint", False)),
            )
            test = test_now()
            used = (test, key[1], key[3]) if test is not None else None
        except Exception:
            key = None
        # The kernel being launched, for a load it triggers (the build timeline says which
        # launch waited). One attribute write: the per-launch path stays O(1).
        tls = local.__dict__
        previous = tls.get("launching")
        try:
            tls["launching"] = args[0].key if args else kwargs["kernel"].key
        except Exception:
            tls["launching"] = None
        try:
            if time_kernels:
                result = timed_launch(rec, warp, orig, args, kwargs)
            else:
                result = orig(*args, **kwargs)
        finally:
            tls["launching"] = previous
            if used is not None:
                note_test_use(rec, *used)
        # Counted once Warp returned from it: a launch that raised (its module could not load)
        # did not run.
        if key is not None:
            try:
                i = index.get(key)
                if i is None:
                    i = index[key] = len(index)
                    record_launch_site(rec, args[0] if args else kwargs.get("kernel"))
                rec.launch_total += 1
                if rec.launch_total <= LAUNCH_CAP:
                    rec.launch_seq.append(i)
            except Exception:
                pass
        return result

    launch.__wrapped__ = orig
    launch.__doc__ = getattr(orig, "__doc__", None)
    hide(launch)
    ctx.launch = launch
    if getattr(warp, "launch", None) is orig:
        warp.launch = launch
    return True


LAUNCH_SITE_CAP = 256  # launch-site records per process (a new signature in a loop adds one each time)
launch_sites_seen = set()


def record_launch_site(rec, kernel):
    """The user frames on the stack of a launch signature's first launch, innermost first: a
    launch through a wrapper (self._launch, a Stage.run(), a library's helper) is a launch in
    each of its callers' statements. Only on a new signature: never on the steady launch path."""
    if len(launch_sites_seen) >= LAUNCH_SITE_CAP:
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
        if seen in launch_sites_seen:
            return
        launch_sites_seen.add(seen)
        module = getattr(getattr(kernel, "module", None), "name", None)
        args = {"kernel": getattr(kernel, "key", None), "module": module, "stack": stack}
        rec.emit({"type": "call", "function": "launch", "args": args, "file": stack[0][0], "line": stack[0][1]})
    except Exception:
        pass


# -- timing and tracing switches ---------------------------------------------------------------

# Kernels (by key) whose launches are timed at steady state: the mathdx-off replay and the
# baseline samples it interleaves with time the same kernels, whether or not they use LTO.
time_kernels = frozenset(k for k in os.environ.get("XWARP_TIME_LAUNCHES", "").split(",") if k and not state.observer)
LAUNCH_TIMES_CAP = 1000  # per kernel


def timed_launch(rec, warp, orig, args, kwargs):
    """The launch, between two device synchronizations, when its kernel is one the replay times
    (the kernels of the modules that built MathDx LTO artifacts in the baseline): the
    steady-state time mathdx-off must be weighed against."""
    try:
        kernel = args[0] if args else kwargs.get("kernel")
        if kernel.key not in time_kernels:
            return orig(*args, **kwargs)
    except Exception:
        return orig(*args, **kwargs)
    sync = getattr(warp, "synchronize", None)
    if sync is not None:
        sync()
    t0 = perf()
    result = orig(*args, **kwargs)
    if sync is not None:
        sync()
    times = rec.launch_times.setdefault(kernel.key, [])
    if len(times) < LAUNCH_TIMES_CAP:
        times.append(round((perf() - t0) * 1000.0, 4))
    return result
