# The fixed part of every warm-up file warp-probe warmup writes (render/warmup_file.cpp puts the
# measured constants above it: WORKERS, IMPORT_PATHS, ENTRY_SCRIPT, ENTRY_SOURCE, DEVICE, ARCH, CONFIG,
# OPTIONS, STAGES). It uses Warp's public API only: wp.overload, wp.set_module_options, wp.force_load, and
# wp.compile_aot_module where the Warp has it.
# ruff: noqa: F821

_entry = None


def _entry_definitions(root):
    """The command's own script (or notebook cell) as its kernels need it: its definitions run
    under the name __main__, Warp's module for them; the program's work is left out."""
    global _entry
    if _entry is None:
        import ast
        import linecache
        import types

        if ENTRY_SOURCE is not None:
            # Warp reads a kernel's source back (inspect): the cell's lines are lent to linecache
            path, source = os.path.join(root, "notebook_cell_warmup.py"), ENTRY_SOURCE
            linecache.cache[path] = (len(source), None, source.splitlines(True), path)
        else:
            path = os.path.join(root, ENTRY_SCRIPT)
            with open(path, encoding="utf-8") as f:
                source = f.read()
        tree = ast.parse("\n".join(l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))), path)
        kept = []
        for stmt in tree.body:
            # Definitions only: imports, functions and classes (the kernels), constants (literals,
            # or Warp's own constructors of literals: wp.constant(2.0), wp.vec3(...)), and Warp's
            # set-up calls. Launches, loops, the main block and any other call are the
            # program's work, and never run here.
            definition = isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef))
            constant = isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and _constant(stmt.value)
            setup = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and ast.unparse(
                stmt.value.func
            ).rsplit(".", 1)[-1] in ("init", "set_module_options", "set_device") and _constant(stmt.value)
            if definition or constant or setup:
                kept.append(stmt)
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), namespace)
        _entry = types.SimpleNamespace(**namespace)
    return _entry


def _constant(node):
    """A literal, a name, an attribute of a name (wp.float32), or a call of Warp's whose
    arguments are all of these: a value the kernels read, computed by nothing but Warp."""
    import ast

    if isinstance(node, (ast.Constant, ast.Name)):
        return True
    if isinstance(node, ast.Attribute):
        return _constant(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_constant(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _constant(k) for k in node.keys) and all(_constant(v) for v in node.values)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, ast.Subscript):
        return _constant(node.value) and _constant(node.slice)
    if isinstance(node, ast.Call):
        func = node.func
        while isinstance(func, ast.Attribute):
            func = func.value
        return (isinstance(func, ast.Name) and func.id in _WARP_NAMES and all(_constant(a) for a in node.args)
                and all(_constant(k.value) for k in node.keywords))
    return False


_WARP_NAMES = ("wp", "warp")


def _resolve(default_module, name, root):
    """An object by its qualname in a module ("module:qualname" names another module)."""
    module_name, _, qualname = name.rpartition(":")
    module_name = module_name or default_module
    obj = _entry_definitions(root) if module_name == "__main__" else importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _value(tagged, root):
    """A factory argument from its recorded data: a literal, a float, a tuple or list of those,
    or a reference to a Warp type or a name in the factory's package."""
    if set(tagged) == {"enum", "value"}:  # a combination of flags: the class called with its value
        return _resolve("", tagged["enum"], root)(tagged["value"])
    ((kind, value),) = tagged.items()
    if kind == "lit":
        return value
    if kind == "float":
        return float(value)
    if kind in ("tuple", "list"):
        items = [_value(x, root) for x in value]
        return tuple(items) if kind == "tuple" else items
    if kind == "ref":
        return _resolve("", value, root)
    raise ValueError(f"argument recorded as {kind}: not data this file can rebuild")


def _made_by_factories(factories, root):
    """Calls each factory the run called (through the name its module exports, decorators
    included) with the recorded arguments: what they return holds the kernels they made."""
    made = []
    for call in factories:
        factory = _resolve(call["module"], call["qualname"], root)
        args, kwargs = [], {}
        for name, kind, tagged in call["args"]:
            value = _value(tagged, root)
            if kind == "pos":
                args.append(value)
            elif kind == "star":
                args.extend(value)
            else:
                kwargs[name] = value
        made.append(factory(*args, **kwargs))
    return made


def _module_named(name, made):
    """The Warp module `name` among what the factories returned, else in Warp's registry."""
    pending = list(made)
    while pending:
        obj = pending.pop()
        module = getattr(obj, "module", None)
        if getattr(module, "name", None) == name:
            return module
        if isinstance(obj, (tuple, list)):
            pending.extend(obj)
        elif isinstance(obj, dict):
            pending.extend(obj.values())
    context = sys.modules.get("warp._src.context") or sys.modules.get("warp.context")
    registry = getattr(context, "user_modules", None)
    if isinstance(registry, dict) and name in registry:
        return registry[name]
    raise LookupError(f"the factory calls made no module {name}: the program's code or its arguments moved on since it was measured")


def warm_up(workers=WORKERS, root=None, device=DEVICE, arch=ARCH, log=print):
    """Builds the identities below into Warp's kernel cache (wp.config.kernel_cache_dir, or
    WARP_CACHE_PATH), `workers` at a time. Returns (identities loaded, what failed)."""
    root = os.path.abspath(root or os.path.dirname(os.path.abspath(__file__)))
    if root not in sys.path:
        sys.path.insert(0, root)
    sys.path.extend(p for p in IMPORT_PATHS if p not in sys.path)
    for key, value in CONFIG.items():
        setattr(wp.config, key, value)
    wp.init()
    started = time.perf_counter()
    loaded, failed, cuda_loads = 0, [], []
    # One pool for every stage: a worker thread keeps the precompiled header it wrote (Warp keeps
    # one per thread), so a later stage's build on it does not write another.
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for stage in STAGES:
            loads = []
            for module_name, kernel_name, target_device, block_dim, instances, options, factories, warp_module in stage:
                try:
                    made = _made_by_factories(factories, root)
                    for name, types in instances:
                        wp.overload(_resolve(module_name, name, root), types)
                    module = _resolve(module_name, kernel_name, root).module if kernel_name else _module_named(warp_module, made)
                    changed = {
                        key: value
                        for key, value in OPTIONS[options].items()
                        if module.options.get(key) is not None and module.options.get(key) != value
                    }
                    if changed:
                        wp.set_module_options(changed, module=module)
                except Exception as error:  # the program's code moved on since it was measured
                    failed.append(f"{module_name}:{kernel_name}: {type(error).__name__}: {error}")
                    continue
                if device and target_device.startswith("cuda"):
                    target_device = device
                loads.append((module, target_device, block_dim))
            # A stage's loads are independent: each builds in a worker (one build per module, device
            # and block_dim, as wp.load_module(..., max_workers=N) would), the longest first.
            futures = [
                pool.submit(wp.force_load, device=d, modules=[m], block_dim=b, max_workers=0) for m, d, b in loads
            ]
            for (module, target_device, block_dim), future in zip(loads, futures):
                try:
                    future.result()
                    loaded += 1
                    if target_device.startswith("cuda"):
                        cuda_loads.append((module, target_device, block_dim))
                except Exception as error:
                    failed.append(f"{module.name} on {target_device}: {type(error).__name__}: {error}")
    if arch:
        aot = getattr(wp, "compile_aot_module", None)
        if aot is None:
            log("warp warm-up: this Warp has no wp.compile_aot_module: nothing built ahead of time for " + str(arch))
        for module, target_device, block_dim in cuda_loads if aot is not None else ():
            # compile_aot_module builds at the module's own block_dim: lend it the measured one
            before = module.options.get("block_dim")
            try:
                wp.set_module_options({"block_dim": block_dim}, module=module)
                aot(module, device=target_device, arch=arch)
            except Exception as error:
                failed.append(f"{module.name} ahead of time for {arch}: {type(error).__name__}: {error}")
            finally:
                wp.set_module_options({"block_dim": before}, module=module)
    log(
        f"warp warm-up: {loaded} module identities in {time.perf_counter() - started:.2f} s "
        f"({max(1, workers)} workers) into {wp.config.kernel_cache_dir}"
    )
    for line in failed:
        log("warp warm-up: not built: " + line)
    return loaded, failed


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Build the measured Warp modules into the kernel cache.")
    parser.add_argument("--workers", type=int, default=WORKERS, help="builds at a time (default %(default)s)")
    parser.add_argument("--root", help="the folder the program's modules are imported from (default: this file's)")
    parser.add_argument("--device", default=DEVICE, help="build for this CUDA device instead of the measured one")
    parser.add_argument("--arch", type=int, action="append", help="also build ahead of time for this CUDA architecture")
    args = parser.parse_args()
    _, not_built = warm_up(args.workers, args.root, args.device, args.arch or ARCH)
    sys.exit(1 if not_built else 0)
