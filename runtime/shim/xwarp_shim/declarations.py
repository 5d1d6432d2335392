"""Kernel declarations: kernels a factory made (the factory and its plain arguments, so the
warm-up can call it again) and module="unique" declarations with the line that asked for one."""

import sys

from . import state
from .wrapping import hide

# -- kernels made by factories (warm-up re-creates them) -------------------------------------


def plain_value(value, depth=0):
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
        items = [plain_value(v, depth + 1) for v in value]
        if all("object" not in i for i in items):
            return {t.__name__: items}
        return {"object": t.__name__ + " holding an object"}
    ref = ref_of(value)
    if ref is not None:
        return {"ref": ref}
    import enum

    if isinstance(value, enum.Enum) and type(value.value) is int:
        owner = ref_of(type(value))  # a combination of flags has no member name: its class and value
        if owner is not None:
            return {"enum": owner, "value": value.value}
    return {"object": getattr(t, "__qualname__", str(t))[:200]}


def ref_of(value):
    import enum

    if isinstance(value, enum.Enum):
        owner = ref_of(type(value))
        name = value.name
        return f"{owner}.{name}" if owner is not None and isinstance(name, str) and name.isidentifier() else None
    warp = state.rec.warp if state.rec is not None else None
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


def factory_of(func, rec):
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
    args = [[n, k, plain_value(local.get(n))] for n, k in zip(names, kinds)]
    return {
        "module": f.f_globals.get("__name__"),
        "qualname": getattr(fc, "co_qualname", fc.co_name),
        "file": fc.co_filename,
        "line": f.f_lineno,
        "args": args,
    }


def note_factory(kernel, func, rec):
    try:
        if ".<locals>." in getattr(func, "__qualname__", ""):
            info = factory_of(func, rec)
            if info is not None:
                kernel._xwarp_factory = info
    except Exception:
        pass
    return kernel


# -- module="unique" declarations (CS-9) ------------------------------------------------------


def default_line(code, param):
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


def unique_declaration(rec):
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
            line = default_line(code, p)
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


def record_unique(rec, kernel, decl):
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


def hook_kernel_decorator(warp):
    orig = getattr(warp, "kernel", None)
    if orig is None or not callable(orig):
        return False
    rec = state.rec

    def kernel(f=None, *args, **kwargs):
        moving = state.lever is not None and state.lever.moves_kernels
        if kwargs.get("module") != "unique" and not moving:
            if f is not None:
                return note_factory(orig(f, *args, **kwargs), f, rec)

            def plain(func):
                return note_factory(orig(func, *args, **kwargs), func, rec)

            return plain
        decl = None
        if kwargs.get("module") == "unique":
            try:
                decl = unique_declaration(rec)
            except Exception:
                decl = None

        def declare(func):
            options = dict(kwargs)
            if moving:
                target = state.lever.kernel_module(func, options)
                if target is not None:
                    options["module"] = target
                    options.pop("module_options", None)
            out = orig(func, *args, **options)
            if decl is not None and options.get("module") == "unique":
                record_unique(rec, out, decl)
            return note_factory(out, func, rec)

        if f is not None:
            return declare(f)
        return declare

    kernel.__wrapped__ = orig
    kernel.__doc__ = getattr(orig, "__doc__", None)
    warp.kernel = hide(kernel)
    return True
