"""The phases of a build, each timed inside the load that runs it: codegen, the native CPU and
CUDA compiles (and the precompiled header each wrote), LTO artifacts, Warp's own timers, and
the NVRTC compile-time trace switch."""

import os
import time

from . import state
from .state import perf
from .wrapping import hide, top


def hook_compile(Module):
    # 1.12+: _compile() holds the cache check and returns True (built) / False (cached).
    # 1.9-1.11: compile() is called only when building and returns None.
    name = "_compile" if hasattr(Module, "_compile") else ("compile" if hasattr(Module, "compile") else None)
    if name is None:
        return False
    orig = getattr(Module, name)

    def compile_hook(self, *args, **kwargs):
        result = orig(self, *args, **kwargs)
        frame = top()
        if frame is not None:
            frame["compiled"] = bool(result) if isinstance(result, bool) else True
        return result

    setattr(Module, name, hide(compile_hook))
    return "_compile" if name == "_compile" else "compile-call"


def add_phase(frame, name, t0, t1):
    """A span inside a load (codegen, native compile, LTO, header write), in ms since the
    process's shim started: the build timeline draws them."""
    rec = state.rec
    frame.setdefault("phases", []).append(
        [name, round((t0 - rec.t0) * 1000.0, 3), round((t1 - t0) * 1000.0, 3)]
    )


def hook_method(cls, name, field):
    orig = getattr(cls, name, None)
    if orig is None:
        return False

    def timed(self, *args, **kwargs):
        t0 = perf()
        try:
            return orig(self, *args, **kwargs)
        finally:
            frame = top()
            if frame is not None:
                t1 = perf()
                frame[field] = round(frame.get(field, 0.0) + (t1 - t0) * 1000.0, 3)
                add_phase(frame, "codegen", t0, t1)

    setattr(cls, name, hide(timed))
    return True


def hook_build(build, name, kind, source_arg):
    orig = getattr(build, name, None)
    if orig is None:
        return False

    def native(*args, **kwargs):
        t0 = perf()
        wall0 = time.time()
        try:
            return orig(*args, **kwargs)
        finally:
            # The first native build of a thread also pays for the thread's precompiled
            # header (Warp keeps one per thread): the analysis needs to know which one it was.
            count = state.tls.__dict__.get("native_builds", 0)
            state.tls.native_builds = count + 1
            frame = top()
            if frame is not None:
                try:
                    t1 = perf()
                    frame["native_ms"] = round(frame.get("native_ms", 0.0) + (t1 - t0) * 1000.0, 3)
                    frame["native_kind"] = kind
                    add_phase(frame, "compile", t0, t1)
                    if count == 0:
                        frame["first_in_thread"] = True
                    # A build that needed a header the thread did not have yet (another
                    # block_dim, another optimization level) writes one more.
                    pch = pch_generation_ms(kwargs.get("pch_dir"), wall0)
                    if pch is not None:
                        frame["pch_ms"] = pch
                        add_phase(frame, "header", t0, t0 + pch / 1000.0)
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

    setattr(build, name, hide(native))
    return True


def pch_generation_ms(pch_dir, wall_start):
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


def hook_lto(build):
    orig = getattr(build, "_build_lto_base", None)
    if orig is None:
        return False

    def lto(lto_symbol, compile_func, builder, *args, **kwargs):
        built = [False]

        def compile_wrapper(*a, **k):
            built[0] = True
            return compile_func(*a, **k)

        t0 = perf()
        try:
            return orig(lto_symbol, compile_wrapper, builder, *args, **kwargs)
        finally:
            frame = top()
            if frame is not None:
                try:
                    import hashlib

                    t1 = perf()
                    frame.setdefault("lto", []).append(
                        {
                            "symbol": hashlib.sha256(str(lto_symbol).encode()).hexdigest()[:16],
                            "built": built[0],
                            "ms": round((t1 - t0) * 1000.0, 3),
                        }
                    )
                    if built[0]:
                        add_phase(frame, "lto", t0, t1)
                except Exception:
                    pass

    build._build_lto_base = hide(lto)
    return True


def hook_timer(ScopedTimer):
    orig = getattr(ScopedTimer, "__exit__", None) if ScopedTimer is not None else None
    if orig is None:
        return False

    def __exit__(self, *exc):
        result = orig(self, *exc)
        try:
            frame = top()
            if frame is not None and str(getattr(self, "name", "")).startswith("Module "):
                if getattr(self, "active", False):
                    frame["warp_ms"] = round(float(self.elapsed), 3)
                msg = str(getattr(self, "extra_msg", "") or "").strip().strip("()")
                if msg:
                    frame["warp_status"] = msg
        except Exception:
            pass
        return result

    ScopedTimer.__exit__ = hide(__exit__)
    return True


def turn_on_compile_time_trace(cfg):
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
