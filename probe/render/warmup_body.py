# The fixed part of every warm-up file warp-probe warmup writes (render/warmup_file.cpp puts the
# measured constants above it: WORKERS, IMPORT_PATHS, ENTRY_SCRIPT, ENTRY_SOURCE, DEVICE, ARCH, CONFIG,
# OPTIONS, TARGETS). It uses Warp's public API only: wp.overload, wp.set_module_options, wp.force_load, and
# wp.compile_aot_module where the Warp has it.
#
# The builds run in worker processes, this same file started with --serve: a process builds in
# parallel with the others (Warp's code generation holds the interpreter's lock, a thread would
# not), and each process has its own copy of a module, so forms of it the run built in different
# processes (pytest-xdist workers instantiating other generic kernels) are each reachable.
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


def _type_of(spec, root):
    """An argument type of a generic instance: Warp's as written, the program's own (_later) imported now."""
    if isinstance(spec, tuple) and spec[:1] == ("xwarp-later",):
        if spec[1] == "struct":
            return _resolve("", spec[2], root)
        kind, inner, ndim = spec[2:]
        return getattr(wp, kind)(dtype=_type_of(inner, root), ndim=ndim)
    return spec


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


def _prepare(root):
    """A worker's set-up: the program's import paths and its wp.config values, then Warp."""
    if root not in sys.path:
        sys.path.insert(0, root)
    sys.path.extend(p for p in IMPORT_PATHS if p not in sys.path)
    for key, value in CONFIG.items():
        setattr(wp.config, key, value)
    wp.init()


def _build(target, root, device, arch):
    """Registers what one identity held (factory calls, generic instances, options) on its module
    in this process, loads it, and builds it ahead of time for `arch`. Returns what failed, and
    notes."""
    module_name, kernel_name, target_device, block_dim, instances, options, factories, warp_module = target[:8]
    try:
        made = _made_by_factories(factories, root)
        for name, types in instances:
            wp.overload(_resolve(module_name, name, root), [_type_of(t, root) for t in types])
        module = _resolve(module_name, kernel_name, root).module if kernel_name else _module_named(warp_module, made)
        changed = {
            key: value
            for key, value in OPTIONS[options].items()
            if module.options.get(key) is not None and module.options.get(key) != value
        }
        if changed:
            wp.set_module_options(changed, module=module)
    except Exception as error:  # the program's code moved on since it was measured
        return [f"{module_name}:{kernel_name}: {type(error).__name__}: {error}"], []
    if device and target_device.startswith("cuda"):
        target_device = device
    try:
        wp.force_load(device=target_device, modules=[module], block_dim=block_dim, max_workers=0)
    except Exception as error:
        return [f"{module.name} on {target_device}: {type(error).__name__}: {error}"], []
    if not arch or not target_device.startswith("cuda"):
        return [], []
    aot = getattr(wp, "compile_aot_module", None)
    if aot is None:
        return [], ["this Warp has no wp.compile_aot_module: nothing built ahead of time for " + str(arch)]
    failed = []
    # compile_aot_module builds at the module's own block_dim: lend it the measured one
    before = module.options.get("block_dim")
    try:
        wp.set_module_options({"block_dim": block_dim}, module=module)
        aot(module, device=target_device, arch=arch)
    except Exception as error:
        failed.append(f"{module.name} ahead of time for {arch}: {type(error).__name__}: {error}")
    finally:
        wp.set_module_options({"block_dim": before}, module=module)
    return failed, []


def _serve(root, device, arch):
    """A worker process: builds the targets whose numbers arrive on its standard input, one at a
    time, and answers each on its standard output in one JSON line; Warp's own messages go to
    standard error."""
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    _prepare(root)
    answers.write(json.dumps({"ready": str(wp.config.kernel_cache_dir)}) + "\n")
    for line in sys.stdin:
        index = int(line)
        failed, notes = _build(TARGETS[index], root, device, arch)
        answers.write(json.dumps({"target": index, "failed": failed, "notes": notes}) + "\n")


class _Worker:
    """One worker process, the forms of each module it has built, and the target it builds now."""

    def __init__(self, command, env, events):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        self.forms = {}  # Warp module -> the form of it this process built last (one copy, whatever the device)
        self.target = None
        self.ready = False
        threading.Thread(target=self._read, args=(events,), daemon=True).start()

    def _read(self, events):
        for line in self.process.stdout:
            try:
                events.put((self, json.loads(line)))
            except ValueError:
                pass
        events.put((self, None))  # the process ended

    def can_build(self, target):
        built = self.forms.get(target[7])
        return built is None or built == target[8] or built in target[9]

    def send(self, index):
        self.target = index
        self.forms[TARGETS[index][7]] = TARGETS[index][8]
        self.process.stdin.write(f"{index}\n")
        self.process.stdin.flush()

    def stop(self):
        """Ends the process: at once while it builds (an interrupt), else once it has read its end."""
        if self.target is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=30)
                return
            except Exception:
                pass
        self.process.kill()
        self.process.wait()


def warm_up(workers=WORKERS, root=None, device=DEVICE, arch=ARCH, log=print):
    """Builds the identities above into Warp's kernel cache (wp.config.kernel_cache_dir, or
    WARP_CACHE_PATH) in `workers` processes at a time. Returns (identities loaded, what failed)."""
    root = os.path.abspath(root or os.path.dirname(os.path.abspath(__file__)))
    started = time.perf_counter()
    env = dict(os.environ)
    if getattr(wp.config, "kernel_cache_dir", None):  # set by the program that calls warm_up()
        env["WARP_CACHE_PATH"] = str(wp.config.kernel_cache_dir)
    command = [sys.executable, os.path.abspath(__file__), "--serve", json.dumps([root, device, list(arch or ())])]
    events = queue.Queue()
    pending = list(range(len(TARGETS)))  # the longest modules first, each module's forms in order
    crew, loaded, failed, notes, cache = [], 0, [], [], None
    try:
        crew = [_Worker(command, env, events) for _ in range(min(max(1, workers), len(TARGETS)))]
        idle = list(crew)
        while pending or any(w.target is not None for w in crew):
            for worker in list(idle):
                fits = next((i for i in pending if worker.can_build(TARGETS[i])), None)
                if fits is None and pending:
                    # it built another form of every module left that this one does not hold:
                    # a fresh process reaches them
                    worker.stop()
                    crew.remove(worker)
                    idle.remove(worker)
                    worker = _Worker(command, env, events)
                    crew.append(worker)
                    idle.append(worker)
                    fits = pending[0]
                if fits is not None:
                    pending.remove(fits)
                    worker.send(fits)
                    idle.remove(worker)
            worker, answer = events.get()
            if worker not in crew:
                continue  # a process stopped above
            if answer is None:  # the process ended: what it was building failed with it
                crew.remove(worker)
                if worker in idle:
                    idle.remove(worker)
                code = worker.process.wait()
                if not worker.ready:  # it could not set up: nor will the next one
                    failed.extend(f"{TARGETS[i][7]} on {TARGETS[i][2]}: no worker process started (exit code {code})"
                                  for i in pending + ([worker.target] if worker.target is not None else []))
                    pending.clear()
                elif worker.target is not None:
                    failed.append(f"{TARGETS[worker.target][7]} on {TARGETS[worker.target][2]}: its worker process "
                                  f"ended (exit code {code})")
                worker.target = None
                if pending:
                    idle.append(_Worker(command, env, events))
                    crew.append(idle[-1])
                continue
            if "ready" in answer:
                worker.ready, cache = True, answer["ready"]
                continue
            worker.target = None
            idle.append(worker)
            failed.extend(answer["failed"])
            notes.extend(n for n in answer["notes"] if n not in notes)
            loaded += 0 if answer["failed"] else 1
    finally:
        for worker in crew:
            worker.stop()
    for line in notes:
        log("warp warm-up: " + line)
    log(
        f"warp warm-up: {loaded} module identities in {time.perf_counter() - started:.2f} s "
        f"({max(1, workers)} worker processes) into {cache}"
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
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # a worker process of warm_up(): [root, device, arch]
    args = parser.parse_args()
    if args.serve:
        _serve(*json.loads(args.serve))
        sys.exit(0)
    _, not_built = warm_up(args.workers, args.root, args.device, args.arch or ARCH)
    sys.exit(1 if not_built else 0)
