"""Rare API calls that explain a measurement (cache clears, preloads, tapes, module options),
each recorded with the user's file:line; a lever may hold one back."""

import sys

from . import state
from .places import caller_module, user_module_name
from .values import describe_arg
from .wrapping import hide

# Rare API calls that explain a measurement: cache clearing (CS-2), preloads (their block_dim
# and workers: CS-5, CS-13, preload-block-dim), tapes (gradients in use: CS-10) and module
# option changes (CS-3, option arrival). Each is recorded with the user's file:line.
CALLS = (
    ("clear_kernel_cache", ("module", "device")),
    ("clear_lto_cache", ()),
    ("force_load", ("device", "modules", "block_dim", "max_workers")),
    ("load_module", ("module", "device", "recursive", "block_dim", "max_workers")),
    ("set_module_options", ("options", "module")),
)

preload_depth = [0]  # > 0 while a force_load / load_module call runs (any thread)


def hook_calls(warp, ctx, build):
    rec = state.rec
    wrapped = {}
    for name, params in CALLS:
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
                            bound.arguments[cm] = caller_module(sys._getframe(1))
                            args, kwargs = bound.args, bound.kwargs
                    except Exception:
                        pass
                try:
                    # load_module calls force_load: record the user's call, not Warp's own.
                    nested = preload and preload_depth[0] > 0
                    _, frames, file, line = rec.user_frame(skip=2)
                    del frames
                    if file is not None and not nested:
                        detail = {}
                        for i, p in enumerate(params):
                            if i < len(args):
                                detail[p] = describe_arg(args[i])
                            elif p in kwargs:
                                detail[p] = describe_arg(kwargs[p])
                        if name == "set_module_options" and detail.get("module") is None:
                            detail["module"] = user_module_name(file)
                        rec.emit({"type": "call", "function": name, "args": detail, "file": file, "line": line})
                except Exception:
                    pass
                if state.lever is not None:
                    held = state.lever.on_call(name, args, kwargs)
                    if held is not None:
                        if held is lever_skip_call():
                            return None
                        args, kwargs = held
                if preload:
                    preload_depth[0] += 1
                    try:
                        return orig(*args, **kwargs)
                    finally:
                        preload_depth[0] -= 1
                return orig(*args, **kwargs)

            call.__wrapped__ = orig
            call.__doc__ = getattr(orig, "__doc__", None)
            return hide(call)

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

        tape.__init__ = hide(__init__)
        wrapped["Tape"] = True
    return wrapped


def lever_skip_call():
    from . import levers

    return levers.SKIP_CALL
