"""What changed an already-loaded module (churn): a kernel defined after the load, a new generic
overload, an option set, a module created; and every wp.config assignment user code made,
each with the user's file:line."""

import sys

from . import state
from .values import jsonable
from .wrapping import hide

TRIGGERS = (
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


def hook_mark_modified(Module):
    orig = getattr(Module, "mark_modified", None)
    if orig is None:
        return False
    rec = state.rec

    def mark_modified(self):
        try:
            if getattr(self, "execs", None):  # only a loaded module can churn
                record_dirty(rec, self)
        except Exception:
            pass
        return orig(self)

    Module.mark_modified = hide(mark_modified)
    return True


def record_dirty(rec, module):
    chain, frames, file, line = rec.user_frame(skip=3)
    trigger, detail = "other", {}
    names = set(chain)
    for fname, kind in TRIGGERS:
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
            detail["options"] = {str(k): jsonable(v) for k, v in loc["options"].items()}
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


def hook_module_init(Module):
    orig = getattr(Module, "__init__", None)
    if orig is None:
        return False
    rec = state.rec

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        if state.lever is not None:
            state.lever.on_module_created(self)
        try:
            _, frames, file, line = rec.user_frame(skip=2)
            del frames
            rec.emit({"type": "module", "module": getattr(self, "name", None), "file": file, "line": line})
        except Exception:
            pass

    Module.__init__ = hide(__init__)
    return True


def hook_config(cfg):
    """Record every `wp.config.X = v` made outside Warp, with its file:line, by giving
    the config module object a subclass of its own class with a recording __setattr__."""
    if cfg is None:
        return False
    rec = state.rec
    import types

    base = type(cfg)
    if not issubclass(base, types.ModuleType):
        return False

    def __setattr__(self, name, value):
        old = self.__dict__.get(name, None)
        if state.lever is not None and state.lever.holds_config(name):
            try:
                chain, frames, file, line = rec.user_frame(skip=2)
                del frames
                if file is not None and not chain:
                    state.lever.count("config_assignments_held")
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
                            "old": jsonable(old),
                            "new": jsonable(value),
                            "file": file,
                            "line": line,
                        }
                    )
        except Exception:
            pass

    try:
        cfg.__class__ = type("XwarpRecordedConfig", (base,), {"__setattr__": hide(__setattr__)})
    except TypeError:
        return False
    return True
