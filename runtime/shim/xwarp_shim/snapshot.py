"""A loaded module's content (kernels, functions, generic instances, options) as data, so that
the analysis can say why a new hash appeared; and the options that arrived after it was made."""

from . import state
from .values import hex_of, jsonable, type_spec

# The six options Warp copies from warp.config when a module is created (1.15+; older
# versions copy a subset, and `mode` up to 1.8). A difference at load time between the
# module's value and the global one means the global arrived too late.
SNAPSHOT_OPTION_KEYS = (
    "max_unroll",
    "enable_backward",
    "lineinfo",
    "compile_time_trace",
    "deterministic",
    "deterministic_max_records",
    "mode",
)


def snapshot(module, bd):
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
                entry = (getattr(k, "key", "?"), hex_of(khash, 16), getattr(k, "sig", "") or "")
                if entry in seen:
                    continue
                seen.add(entry)
                generic = getattr(k, "generic_parent", None) is not None
                item = {
                    "key": entry[0],
                    "hash": entry[1],
                    "sig": instance_types(k) if generic else entry[2],
                    "generic": generic,
                }
                if generic:
                    try:
                        item["types"] = [type_spec(t) for t in k.adj.arg_types.values()]
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
                if isinstance(item.get("defined_in"), str) and state.rec is not None:
                    state.rec.kernel_modules.add(item["defined_in"])
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
                    funcs[getattr(f, "key", repr(f))] = hex_of(fh, 16)
            snap["functions"] = funcs
        snap["kernels"] = sorted(kernels, key=lambda k: (k["key"], k["sig"], k["hash"] or ""))
        resolved = getattr(module, "resolved_options", None)
        opts = resolved.get(bd) if isinstance(resolved, dict) else None
        snap["options_source"] = "resolved" if opts is not None else "module"
        if opts is None:
            opts = dict(module.options)
            opts["block_dim"] = bd
        snap["options"] = {str(k): jsonable(v) for k, v in opts.items()}
    except Exception as exc:
        snap["error"] = repr(exc)
    return snap


def instance_types(kernel):
    # A generic instance's argument types, readable ("a: array(ndim=1, dtype=float64)");
    # Warp's own signature string is a compact code.
    try:
        types = kernel.adj.arg_types
        return ", ".join(f"{n}: {getattr(t, '__name__', None) or repr(t)}" for n, t in types.items())[:300]
    except Exception:
        return getattr(kernel, "sig", "") or ""


def config_mismatch(module, cfg):
    out = {}
    if cfg is None:
        return out
    options = getattr(module, "options", {}) or {}
    for key in SNAPSHOT_OPTION_KEYS:
        if key not in options or not hasattr(cfg, key):
            continue
        mv, cv = options[key], getattr(cfg, key)
        if mv is None:  # resolved lazily from config at hash time: cannot be stale
            continue
        if mv != cv:
            out[key] = {"module": jsonable(mv), "config": jsonable(cv)}
    return out
