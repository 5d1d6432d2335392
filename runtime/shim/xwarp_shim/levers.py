"""xwarp what-if levers: what each lever changes inside a replayed process.

warp-probe's what-if replays run the unmodified command with one lever applied, in the
replayed processes only ($XWARP_WHATIF: {"lever": NAME, "params": {...}}). The shim imports
this file only then. A lever changes how Warp compiles the program, never what it computes;
every change it makes is counted (`applied`) and written with the process's exit record, so
the engine can tell "applied" from "nothing to move".

The shim's hooks call the active lever's methods; no hook tests a lever's name. Each lever is
one class below and one entry in LEVERS; the engine's table (src/analysis/levers/) lists the
same names, with what each plans from a baseline and what its replay must show.

What a lever may be asked (its parameters) and which of its counters say it changed something
(x-effects) are written once, in the shim-inputs contract (shim_inputs.schema.json, copied
beside this package when it is built): make() reads a lever's parameters from there, and the
engine judges a replay applied by the same file's x-effects.
"""

import os

SHARED_MODULE = "xwarp_whatif_shared"
MERGED_MODULE = "xwarp_whatif_merged"

# What on_call returns for a call the lever swallows.
SKIP_CALL = object()


class Lever:
    """The hook methods, each doing nothing: a lever overrides the ones it needs."""

    name = ""
    pinned = {}  # wp.config keys held at a value, whatever the program assigns
    moves_kernels = False  # kernel declarations go through kernel_module()
    wants_first_launch = False  # at_first_launch() runs once, at the first wp.launch

    def __init__(self, params):
        self.params = params or {}
        self.applied = {}

    # -- the process starts: before the program reads its arguments ------------------------------

    def at_start(self):
        """Runs once, when the shim starts in a process, before the program's own code."""

    def count(self, what, n=1):
        self.applied[what] = self.applied.get(what, 0) + n

    # -- import warp: right after, before the program defines a kernel --------------------------

    def at_import(self, warp, cfg):
        """Pin the config values the lever holds (modules copy them when created)."""
        for key, value in self.pinned.items():
            if cfg is not None and hasattr(cfg, key):
                try:
                    if getattr(cfg, key) != value:
                        self.count("config_set")
                    type(cfg).__setattr__(cfg, key, value)
                except Exception:
                    pass

    # -- assignments the program makes ---------------------------------------------------------

    def holds_config(self, key):
        """True when the program's assignment to wp.config.<key> must not land."""
        return key in self.pinned

    def holds_environ(self, key):
        """True when the program's os.environ[key] = ... must not land (cache variables)."""
        return False

    # -- recorded Warp calls -------------------------------------------------------------------

    def on_call(self, name, args, kwargs):
        """None: the call goes through unchanged; SKIP_CALL: it is skipped; (args, kwargs):
        it goes through with these. Pinned options are taken out of set_module_options."""
        if name != "set_module_options" or not self.pinned:
            return None
        options = args[0] if args else kwargs.get("options")
        if not isinstance(options, dict) or not any(k in self.pinned for k in options):
            return None
        kept = {k: v for k, v in options.items() if k not in self.pinned}
        self.count("module_options_held", len(options) - len(kept))
        if args:
            return (kept,) + tuple(args[1:]), kwargs
        return args, dict(kwargs, options=kept)

    # -- modules and kernels -------------------------------------------------------------------

    def on_module_created(self, module):
        pass

    def before_first_load(self, module):
        pass

    def at_first_launch(self, warp, ctx, preload_depth):
        pass

    def kernel_module(self, func, kwargs):
        """The module a kernel declaration goes to instead, or None."""
        return None


class BackwardOff(Lever):
    name = "backward-off"
    pinned = {"enable_backward": False}


class PchOff(Lever):
    name = "pch-off"
    pinned = {"use_precompiled_headers": False}


class MathdxOff(Lever):
    name = "mathdx-off"
    pinned = {"enable_mathdx_gemm": False, "enable_mathdx_fft": False, "enable_mathdx_solver": False}


_CACHE_ENV = ("CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "WARP_CACHE_PATH")


class KeepCache(Lever):
    """The program's cache destroyers held: cache clears skipped, the cache settings and
    variables kept as the probe set them, the driver's compute cache back on."""

    name = "keep-cache"
    pinned = {"cache_kernels": True}

    def at_import(self, warp, cfg):
        Lever.at_import(self, warp, cfg)
        if os.environ.get("CUDA_CACHE_DISABLE"):
            try:
                del os.environ["CUDA_CACHE_DISABLE"]
                self.count("environment_restored")
            except Exception:
                pass

    def holds_config(self, key):
        return key in self.pinned or key == "kernel_cache_dir"

    def holds_environ(self, key):
        return key in _CACHE_ENV

    def on_call(self, name, args, kwargs):
        if name in ("clear_kernel_cache", "clear_lto_cache"):
            self.count(name + "_skipped")
            return SKIP_CALL
        return Lever.on_call(self, name, args, kwargs)


class OptionsAtCreation(Lever):
    """Each module the params name starts with the options it ended with in the baseline."""

    name = "options-at-creation"

    def on_module_created(self, module):
        try:
            options = (self.params.get("modules") or {}).get(getattr(module, "name", None))
            if options:
                module.options.update(options)
                self.count("modules")
                self.count("options", len(options))
        except Exception:
            pass


class PreregisterOverloads(Lever):
    """Before a module's first load, the generic instances the baseline built are registered."""

    name = "preregister-overloads"

    def __init__(self, params):
        Lever.__init__(self, params)
        self.registered_modules = set()

    def before_first_load(self, module):
        name = getattr(module, "name", None)
        if name in self.registered_modules:
            return
        self.registered_modules.add(name)
        try:
            import warp

            for inst in self.params.get("instances") or ():
                if inst.get("module") != name:
                    continue
                kernel = module.kernels.get(inst.get("kernel"))
                types = [_type_from_spec(t, warp) for t in inst.get("types") or ()]
                if kernel is None or any(t is None for t in types):
                    self.count("instances_not_rebuilt")
                    continue
                if kernel.get_overload(types) is None:
                    kernel.add_overload(types)
                    self.count("instances_registered")
        except Exception:
            self.count("errors")


class ParallelPreload(Lever):
    """At the first launch: the modules the baseline built, at the block_dims it used, loaded
    through Warp's own force_load with the params' number of workers."""

    name = "parallel-preload"
    wants_first_launch = True

    def at_first_launch(self, warp, ctx, preload_depth):
        force_load = getattr(warp, "force_load", None)
        force_load = getattr(force_load, "__wrapped__", force_load)
        user_modules = getattr(ctx, "user_modules", {}) or {}
        workers = int(self.params.get("workers") or 1)
        for group in self.params.get("groups") or ():
            modules = [user_modules.get(n) for n in group.get("modules") or ()]
            found = [m for m in modules if m is not None]
            self.count("modules_missing", len(modules) - len(found))
            if not found or force_load is None:
                continue
            try:
                preload_depth[0] += 1
                force_load(device=group.get("device"), modules=found, block_dim=group.get("block_dim"), max_workers=workers)
                self.count("modules_preloaded", len(found))
            except Exception as exc:
                self.count("errors")
                self.applied["error"] = repr(exc)[:300]
            finally:
                preload_depth[0] -= 1
        self.applied["workers"] = workers


def _kernel_key(func, kwargs):
    import re

    return kwargs.get("name") or re.sub("[^0-9a-zA-Z_]+", "", func.__qualname__.replace(".", "__"))


class SharedModule(Lever):
    """The module="unique" kernels the params name are declared in one shared module."""

    name = "shared-module"
    moves_kernels = True

    def kernel_module(self, func, kwargs):
        try:
            if kwargs.get("module") == "unique" and not kwargs.get("module_options"):
                if _kernel_key(func, kwargs) in (self.params.get("kernels") or ()):
                    self.count("kernels_moved")
                    return SHARED_MODULE
        except Exception:
            pass
        return None


class MergeModules(Lever):
    """Kernels of the listed small modules are declared in one merged module: those in a
    listed Python module's default module, or declared with module="NAME" for a listed name
    (and no options of their own)."""

    name = "merge-modules"
    moves_kernels = True

    def kernel_module(self, func, kwargs):
        try:
            named = kwargs.get("module")
            listed = self.params.get("modules") or ()
            if (named is None and getattr(func, "__module__", None) in listed) or (
                isinstance(named, str) and named != "unique" and named in listed and not kwargs.get("module_options")
            ):
                self.count("kernels_moved")
                return MERGED_MODULE
        except Exception:
            pass
        return None


# The suite levers change pytest-xdist's arguments in the pytest process itself (the shim starts
# before pytest reads sys.argv), and mark the change in the environment its workers inherit: a
# worker that sees the mark, or the worker count asked for, says the lever reached it. The
# controlling process imports no Warp and writes no record; its workers do.
_SUITE_MARK = "PYTEST_XWARP_SUITE_LEVER"


def _pytest_controller():
    """True in the process that runs pytest's main: started as `python -m pytest` or as the pytest
    script. pytest-xdist's workers are started with `-c` (and PYTEST_XDIST_WORKER may be inherited
    from a pytest that runs this one, so it decides nothing)."""
    import sys

    argv = list(getattr(sys, "orig_argv", None) or [])
    for i, arg in enumerate(argv[:-1]):
        if arg == "-m" and argv[i + 1] in ("pytest", "py.test"):
            return True
    return len(argv) > 1 and os.path.basename(argv[1]) in ("pytest", "py.test")


def _replace_option(argv, long_name, short_name, value):
    """argv without the option (`--name V`, `--name=V`, `-nV`, `-n V`), then `--name value`."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == long_name or (short_name and arg == short_name):
            skip = True
            continue
        if arg.startswith(long_name + "=") or (short_name and arg.startswith(short_name) and not arg.startswith("--")
                                               and len(arg) > len(short_name)):
            continue
        out.append(arg)
    return out + [long_name, str(value)]


class _SuiteLever(Lever):
    option = ("", "")

    def value(self):
        return ""

    def at_start(self):
        import sys

        if not _pytest_controller() or not self.value():
            return
        sys.argv[1:] = _replace_option(sys.argv[1:], *self.option, self.value())
        os.environ[_SUITE_MARK] = f"{self.name}={self.value()}"

    def at_import(self, warp, cfg):
        super().at_import(warp, cfg)
        if (os.environ.get("PYTEST_XDIST_WORKER") and not _pytest_controller()
                and os.environ.get(_SUITE_MARK) == f"{self.name}={self.value()}"):
            self.count("workers_started")


class XdistLoadfile(_SuiteLever):
    name = "xdist-loadfile"
    option = ("--dist", "")

    def value(self):
        return self.params.get("dist") if self.params.get("dist") in ("loadfile",) else ""


class XdistWorkers(_SuiteLever):
    name = "xdist-workers"
    option = ("--numprocesses", "-n")

    def value(self):
        n = self.params.get("workers")
        return str(n) if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 1024 else ""


def _files_under(*folders):
    """Files under the folders, counted up to 100,000 (a kept cache is counted, not walked without end)."""
    found = [len(files) for folder in folders if folder for _, _, files in os.walk(folder)]
    return min(sum(found), 100000)


class KeepCudaCache(Lever):
    # warp-probe keeps the CUDA cache a cold pass filled (the rest emptied): it counts what it held
    name = "keep-cuda-cache"

    def at_start(self):
        self.count("cuda_cache_files", _files_under(os.environ.get("CUDA_CACHE_PATH")))


class KeepLtoCache(Lever):
    # the same for Warp's LTO cache, <kernel cache>/<version>/lto
    name = "keep-lto-cache"

    def at_start(self):
        base = os.environ.get("WARP_CACHE_PATH") or ""
        versions = os.listdir(base) if os.path.isdir(base) else []
        self.count("lto_cache_files", _files_under(*(os.path.join(base, v, "lto") for v in versions)))


LEVERS = {
    cls.name: cls
    for cls in (
        BackwardOff,
        PchOff,
        ParallelPreload,
        OptionsAtCreation,
        PreregisterOverloads,
        SharedModule,
        MergeModules,
        KeepCache,
        MathdxOff,
        XdistLoadfile,
        XdistWorkers,
        KeepCudaCache,
        KeepLtoCache,
    )
}


def contract_params():
    """lever name -> the parameters its $XWARP_WHATIF variant allows, from the shim-inputs
    contract; None when no readable contract is found."""
    import json

    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(os.path.dirname(here), "shim_inputs.schema.json"),  # built and installed
                 os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(here))), "contracts",
                              "shim_inputs.schema.json")):  # source tree: runtime/shim/xwarp_shim -> contracts/
        try:
            with open(path, encoding="utf-8") as f:
                defs = json.load(f)["$defs"]
            variants = (defs[ref["$ref"].rsplit("/", 1)[1]] for ref in defs["whatif"]["oneOf"])
            return {v["properties"]["lever"]["const"]: set(v["properties"]["params"].get("properties", {}))
                    for v in variants}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return None


def make(spec):
    """The lever a $XWARP_WHATIF spec asks for. A name or a parameter outside the contract gets a
    lever that changes nothing and says why (the engine then judges the replay not-applied),
    rather than one acting on half a request."""
    name = str(spec.get("lever") or "") if isinstance(spec, dict) else ""
    params = spec.get("params") if isinstance(spec, dict) else None
    allowed = contract_params()
    if allowed is None:
        why = "contract_unreadable"
    elif name not in allowed or name not in LEVERS:
        why = "lever_unknown"
    elif not isinstance(params, dict) or any(k not in allowed[name] for k in params):
        why = "spec_outside_contract"
    else:
        lever = LEVERS[name](params)
        lever.name = name
        return lever
    lever = Lever({})
    lever.name = name
    lever.count(why)
    return lever


def _type_from_spec(spec, warp):
    """A generic instance's argument type, from the data the shim's snapshot recorded."""
    import builtins

    if "array" in spec:
        cls = getattr(warp, "array" if spec["array"].startswith("_") else spec["array"], None)
        dtype = _type_from_spec(spec["dtype"], warp)
        if cls is None or dtype is None:
            return None
        return cls(dtype=dtype, ndim=spec["ndim"])
    name = spec.get("type")
    found = getattr(warp, name, None) if name else None
    if found is None and name in ("float", "int", "bool"):
        found = getattr(builtins, name)
    return found

