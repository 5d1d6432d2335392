"""Installs every hook right after `import warp`, each feature-detected, and writes the record
that says which hooks held (no hook: the analysis falls back to Warp's own log)."""

import os
import sys

from . import state
from .build_phases import hook_build, hook_compile, hook_lto, hook_method, hook_timer, turn_on_compile_time_trace
from .calls import hook_calls
from .declarations import hook_kernel_decorator
from .dirtying import hook_config, hook_mark_modified, hook_module_init
from .launches import hook_launch
from .loads import hook_load
from .recorder import record_entry


def install(warp):
    rec = state.rec
    if rec is None or rec.warp is not None:
        return
    import threading

    state.threading = threading
    state.tls = threading.local()
    rec.lock = threading.Lock()
    rec.warp = warp
    try:
        ctx = sys.modules.get("warp._src.context") or sys.modules.get("warp.context")
        build = sys.modules.get("warp._src.build") or sys.modules.get("warp.build")
        utils = sys.modules.get("warp._src.utils") or sys.modules.get("warp.utils")
        cfg = getattr(warp, "config", None)
        rec.ctx, rec.cfg = ctx, cfg
        warp_dir = os.path.dirname(os.path.abspath(warp.__file__)) + os.sep
        # The shim's folder (sitecustomize.py and this package): its frames are never the user's.
        shim_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
        rec.internal_prefixes = (warp_dir, shim_dir, os.path.dirname(os.__file__) + os.sep + "importlib")
        # Warp's own tests and examples are code that uses Warp, as the user's is: their frames are
        # where a finding points when the suite measured is Warp's
        rec.user_prefixes = (os.path.join(warp_dir, "tests", ""), os.path.join(warp_dir, "examples", ""))
        src_dir = os.path.dirname(os.path.abspath(getattr(ctx, "__file__", None) or warp.__file__))
        state.hook_filename = os.path.join(src_dir, "xwarp_probe_hooks.py")

        hooks = rec.hooks
        force_log = state.force_log_fallback  # as the process started, whatever it set since
        Module = getattr(ctx, "Module", None)
        if Module is not None and not force_log:
            hooks["module_load"] = hook_load(Module)
            hooks["status"] = hook_compile(Module)
            hooks["codegen"] = hook_method(Module, "_run_codegen", "codegen_ms")
            hooks["mark_modified"] = hook_mark_modified(Module)
            hooks["module_created"] = hook_module_init(Module)
        if build is not None and not force_log:
            hooks["native_cpu"] = hook_build(build, "build_cpu", "cpu", source_arg=1)
            hooks["native_cuda"] = hook_build(build, "build_cuda", "cuda", source_arg=0)
            hooks["lto"] = hook_lto(build)
        if utils is not None and not force_log:
            hooks["warp_timer"] = hook_timer(getattr(utils, "ScopedTimer", None))
        hooks["launch"] = hook_launch(warp, ctx)
        if state.lever is not None:
            state.lever.at_import(warp, cfg)
        if state.nvrtc_trace:
            hooks["nvrtc_trace"] = turn_on_compile_time_trace(cfg)
        hooks["config"] = hook_config(cfg)
        hooks["calls"] = hook_calls(warp, ctx, build)
        hooks["unique_kernels"] = hook_kernel_decorator(warp)

        # Without the load hook the only source left is Warp's own log: turn its detail on
        # so the module lines carry block_dim and the native compile lines appear.
        log_fallback = not hooks.get("module_load")
        if log_fallback and cfg is not None and not state.observer:  # the plugin changes no output
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
        record_entry(rec)
    except Exception as exc:
        rec.emit({"type": "shim_error", "where": "install", "error": repr(exc)})

