"""xwarp fixer: turns a finding's code form into a unified diff against the program's own files.

warp-probe fix plans each fix from a measured report (what to change, where, to what: the
lever registry's code forms) and runs this file with the interpreter the program ran with, so
that the program's own syntax is what is parsed:

    python xwarp_fix.py REQUEST.json RESPONSE.json

Edits are located with Python's own `ast` (statement ranges, names bound and read) and made on
whole lines, so comments and formatting outside the changed lines are kept as they are. A diff
is written with `a/` and `b/` paths relative to the request's root: it applies with `git apply`
and with `patch -p1`. Nothing is written but RESPONSE.json; a fix this file cannot make safely
comes back with one sentence saying why, and no patch.
"""

import ast
import difflib
import io
import json
import os
import stat
import sys
import tokenize

MAX_SOURCE_BYTES = 4 * 1024 * 1024  # larger than any hand-written module; a generated one is not edited

# -- reading the program ----------------------------------------------------------------------


class Source:
    """A file of the program: its lines, its syntax tree, and the edits a fix makes to it, as
    (first line, last line, replacement lines) on the original's 1-based lines; an insertion
    before line n is (n, n - 1, lines)."""

    def __init__(self, path, root):
        self.path = path
        self.rel = os.path.relpath(path, root)
        with open(path, "rb") as f:
            raw = f.read()
        self.encoding = "utf-8"
        try:
            self.encoding = tokenize.detect_encoding(io.BytesIO(raw).readline)[0]
        except SyntaxError:
            pass
        self.text = raw.decode(self.encoding)
        self.lines = self.text.splitlines(keepends=True)
        self.tree = ast.parse(self.text, filename=path)
        self.edits = []

    def line(self, n):
        return self.lines[n - 1] if 0 < n <= len(self.lines) else ""

    def indent_of(self, n):
        text = self.line(n)
        return text[: len(text) - len(text.lstrip())]

    def insert_before(self, n, new_lines):
        self.edits.append((n, n - 1, new_lines))

    def insert_block(self, n, new_lines):
        """new_lines as a block of their own before line n, in the file's style: after the last
        code line above n, one blank line before the block, and the blank lines that stood
        before n (or one, when none did) after it."""
        above = n - 1
        while above > 0 and not self.line(above).strip():
            above -= 1
        gap_before = ["\n"] if above > 0 else []
        gap_after = [] if n - 1 > above or not self.line(n).strip() else ["\n"]
        self.edits.append((above + 1, above, gap_before + list(new_lines) + gap_after))

    def replace(self, first, last, new_lines):
        self.edits.append((first, last, new_lines))

    def delete(self, first, last):
        self.edits.append((first, last, []))

    def edited(self):
        """The text with every edit made, bottom-up (edits never overlap: checked)."""
        spans = sorted(self.edits, key=lambda e: (e[0], e[1]))
        for (a_first, a_last, _), (b_first, b_last, _) in zip(spans, spans[1:]):
            if b_first <= a_last:
                raise FixRefused(f"two edits of {self.rel} overlap at line {b_first}")
        lines = list(self.lines)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        # bottom-up; at one line, the range it replaces before what is inserted above it, and
        # insertions at one point in the order they were made
        order = sorted(range(len(self.edits)), key=lambda i: (self.edits[i][0], self.edits[i][1], i), reverse=True)
        for first, last, new in (self.edits[i] for i in order):
            lines[first - 1 : last] = [x if x.endswith("\n") else x + "\n" for x in new]
        return "".join(lines)

    def diff(self):
        after = self.edited()
        before = self.text if self.text.endswith("\n") or not self.text else self.text + "\n"
        out = list(
            difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile="a/" + self.rel,
                tofile="b/" + self.rel,
            )
        )
        text = "".join(out)
        if self.text and not self.text.endswith("\n") and text:
            # the original's last line had no newline: say so where the diff quotes it
            last = self.lines[-1]
            text = text.replace("-" + last + "\n", "-" + last + "\n\\ No newline at end of file\n", 1)
        return text


class FixRefused(Exception):
    """A fix this file will not make, with the one sentence that says why."""


def parents(tree):
    """node -> its parent, for the whole tree."""
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def first_line(node):
    """A statement's first line, its decorators included."""
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


def statement_at(source, line, kinds=(ast.stmt,)):
    """The innermost statement of these kinds whose lines include `line`, with the body
    (a list) that holds it."""
    best = None
    for node in ast.walk(source.tree):
        for field in ("body", "orelse", "finalbody", "handlers"):
            body = getattr(node, field, None)
            if not isinstance(body, list):
                continue
            for stmt in body:
                if isinstance(stmt, kinds) and first_line(stmt) <= line <= stmt.end_lineno:
                    if best is None or first_line(stmt) >= first_line(best[0]):
                        best = (stmt, body)
    return best


# What CS-2's places may be: a call that clears a cache, an assignment of a cache setting or of a
# cache variable. Any other statement a report names is left alone.
_CACHE_CALLS = ("clear_kernel_cache", "clear_lto_cache")
_CACHE_SETTINGS = ("cache_kernels", "kernel_cache_dir")
_CACHE_VARIABLES = ("CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "WARP_CACHE_PATH")


def throws_cache_away(stmt):
    """True when the simple statement is a cache clear: a call of clear_kernel_cache or
    clear_lto_cache and nothing else, or an assignment to wp.config.cache_kernels /
    kernel_cache_dir or os.environ[a cache variable]."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        return name in _CACHE_CALLS
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr in _CACHE_SETTINGS and ast.unparse(t.value).endswith("config"):
                continue
            if isinstance(t, ast.Subscript) and ast.unparse(t.value).endswith("environ") and isinstance(t.slice, ast.Constant) \
                    and t.slice.value in _CACHE_VARIABLES:
                continue
            return False
        return True
    return False


def calls_launch(node):
    """True when the statement calls something named launch (wp.launch, warp.launch, launch)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if (isinstance(f, ast.Attribute) and f.attr == "launch") or (isinstance(f, ast.Name) and f.id == "launch"):
                return True
    return False


def bound_names(nodes):
    """Names the statements bind (assignments, loop targets, imports, defs, with-as)."""
    out = set()
    for stmt in nodes:
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
                out.add(sub.id)
            elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(sub.name)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                for alias in sub.names:
                    out.add((alias.asname or alias.name).split(".")[0])
    return out


def read_names(node):
    """The names a statement reads that it does not bind itself: what it needs from before it."""
    reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    own = set()
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = sub.args
            for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
                if a is not None:
                    own.add(a.arg)
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store) and sub is not node:
            own.add(sub.id)
    return reads - own


def attached_comments(source, line):
    """The first line of the comment block directly above `line` (no blank line between)."""
    n = line
    while n > 1 and source.line(n - 1).strip().startswith("#"):
        n -= 1
    return n


def warp_alias(source):
    """The name `import warp [as X]` binds at the top of the file, or None."""
    for stmt in source.tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "warp":
                    return alias.asname or "warp"
    return None


def module_docstring_end(source):
    body = source.tree.body
    end = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(
        body[0].value.value, str
    ):
        end = body[0].end_lineno
    for stmt in body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            end = stmt.end_lineno
    return end


def package_of(path):
    """The dotted package a file belongs to, from the folders above it that hold __init__.py
    ("" for a file outside any package): what its relative imports are relative to."""
    parts = []
    folder = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return ".".join(parts)


def imported_modules(stmt, package=""):
    if isinstance(stmt, ast.Import):
        return [a.name for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom):
        base = stmt.module or ""
        if stmt.level:
            parent = package.split(".")[: max(0, len(package.split(".")) - (stmt.level - 1))] if package else []
            if not parent:
                return []
            base = ".".join(parent + ([base] if base else []))
        if base:
            return [base] + [base + "." + a.name for a in stmt.names]
    return []


def defines_kernels(name, kernel_modules):
    return any(m == name or m.startswith(name + ".") or name.startswith(m + ".") for m in kernel_modules)


def entry_point(source, kernel_modules):
    """Where a setting must go to arrive before any kernel is defined: (line to insert before,
    the warp alias to use, whether `import warp` must be written too). Right after `import
    warp`, unless an import that defines kernels comes first: then before that import. A
    relative import counts as one of the package it is relative to; an import of the program's
    own package (one of the kernels' top packages) counts as defining kernels."""
    alias = warp_alias(source)
    warp_end = None
    first_kernel_import = None
    package = package_of(source.path)
    tops = {m.split(".")[0] for m in kernel_modules} - {"warp", "__main__"}
    for stmt in source.tree.body:
        if isinstance(stmt, ast.Import) and any(a.name == "warp" for a in stmt.names) and warp_end is None:
            warp_end = stmt.end_lineno
        names = imported_modules(stmt, package)
        if first_kernel_import is None and any(defines_kernels(m, kernel_modules) or m.split(".")[0] in tops for m in names):
            first_kernel_import = stmt
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) and first_kernel_import is None and warp_end is None:
            first_kernel_import = stmt  # code before any import of warp: put the setting above it
    if warp_end is not None and (first_kernel_import is None or warp_end < first_line(first_kernel_import)):
        return warp_end + 1, alias, False
    if first_kernel_import is not None:
        return first_line(first_kernel_import), alias or "wp", True
    return module_docstring_end(source) + 1, alias or "wp", True


def literal(value):
    """A plain value as Python source: only None, bool, int, finite float and str reach code."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int) or (isinstance(value, float) and value == value and abs(value) != float("inf")):
        return repr(value)
    if isinstance(value, str):
        return ascii(value)  # quotes, newlines, controls and every non-ASCII character escaped
    raise FixRefused(f"the value {str(value)[:60]!r} is not a plain literal: no code is written from it")


def comment_text(text):
    """Report text that enters a comment: one line of printable ASCII (a newline would end the
    comment and start code; ESC and bidirectional controls would hide what the line does)."""
    text = str(text)
    return "".join(c if " " <= c <= "~" else "?" for c in text)[:200]


def checked_name(value, what, dotted=False):
    """A name that enters generated code: an identifier (dotted where a module path may be),
    or the fix is refused with why."""
    parts = value.split(".") if isinstance(value, str) and dotted else [value]
    if not parts or not all(isinstance(p, str) and p.isidentifier() and p.isascii() for p in parts):
        raise FixRefused(f"the {what} {str(value)[:60]!r} is not a Python identifier: no code is written from it")
    return value


# -- the code forms ---------------------------------------------------------------------------


class Fixer:
    def __init__(self, request):
        self.root = request["root"]
        self.entry = request.get("entry")
        self.kernel_modules = request.get("kernel_modules") or []
        # (file, line) of every user frame the run recorded on a first launch's stack: a
        # statement holding one launches, whatever wrapper it goes through (self._launch(...))
        self.launch_sites = {}
        for site in request.get("launch_sites") or ():
            if isinstance(site, dict) and isinstance(site.get("file"), str) and isinstance(site.get("line"), int):
                self.launch_sites.setdefault(os.path.realpath(site["file"]), set()).add(site["line"])
        self.sources = {}
        self.notes = []

    def launches(self, src, stmt):
        """True when the statement launches: a call named launch in it, or a recorded launch
        passed through one of its lines."""
        if calls_launch(stmt):
            return True
        lines = self.launch_sites.get(os.path.realpath(src.path), ())
        return any(first_line(stmt) <= n <= stmt.end_lineno for n in lines)

    def source(self, path):
        path = os.path.realpath(path)
        if not path.startswith(os.path.realpath(self.root) + os.sep):
            raise FixRefused(f"{path} is outside the project ({self.root}): not the program's own file to edit")
        try:
            info = os.stat(path)
        except OSError as e:
            raise FixRefused(f"{path} cannot be read ({type(e).__name__}: {e})")
        # a FIFO or device would block or never end; a huge file is no program source to edit
        if not stat.S_ISREG(info.st_mode):
            raise FixRefused(f"{path} is not a regular file: not a source this fix edits")
        if info.st_size > MAX_SOURCE_BYTES:
            raise FixRefused(f"{path} is {info.st_size // 1024} KiB, over the {MAX_SOURCE_BYTES // 1024} KiB a source this fix edits may be")
        if path not in self.sources:
            try:
                self.sources[path] = Source(path, self.root)
            except (OSError, SyntaxError, UnicodeDecodeError) as e:
                raise FixRefused(f"{path} cannot be read as Python here ({type(e).__name__}: {e})")
        return self.sources[path]

    def entry_source(self):
        if not self.entry:
            raise FixRefused("the command has no entry script (python -c, or not Python): no entry point to set this in")
        return self.source(self.entry)

    # Each op edits the program's sources; a refusal says why in one sentence.

    def op_config_at_entry(self, op):
        checked_name(op["key"], "wp.config option")
        src = self.entry_source()
        at, alias, with_import = entry_point(src, self.kernel_modules)
        lines = ([f"import warp as {alias}\n"] if with_import else []) + [
            f"{alias}.config.{op['key']} = {literal(op['value'])}  # xwarp fix: {comment_text(op.get('why', 'set before any module is created'))}\n"
        ]
        src.insert_block(at, lines)
        for place in op.get("remove") or ():
            self.remove_statement(place, only_if="config", key=op["key"])

    def op_module_options(self, op):
        src = self.source(op["file"])
        alias = warp_alias(src)
        at, alias2, with_import = entry_point(src, [])
        alias = alias or alias2
        options = "{" + ", ".join(f"{checked_name(k, 'module option')!r}: {literal(v)}" for k, v in op["options"].items()) + "}"
        lines = ([f"import warp as {alias}\n"] if with_import else []) + [
            f"{alias}.set_module_options({options})  # xwarp fix: the module's options before its first load\n"
        ]
        src.insert_block(at, lines)
        for place in op.get("remove") or ():
            self.remove_statement(place, only_if="call", function="set_module_options")

    def op_overloads(self, op):
        src = self.source(op["file"])
        alias = warp_alias(src) or "wp"
        target = None
        for stmt in ast.walk(src.tree):
            if isinstance(stmt, ast.FunctionDef) and stmt.name == op["kernel"]:
                target = stmt
                break
        if target is None:
            raise FixRefused(f"no definition of kernel {op['kernel']} in {src.rel}")
        lines = []
        for types in op["instances"]:
            code = [type_code(t, alias) for t in types]
            if any(c is None for c in code):
                self.notes.append(f"an instance of {op['kernel']} takes a type that exists only at run time: not registered")
                continue
            lines.append(f"{alias}.overload({checked_name(op['kernel'], 'kernel name')}, [{', '.join(code)}])  # xwarp fix: registered before the first load\n")
        if not lines:
            raise FixRefused(f"no instance of {op['kernel']} has types that can be written in its file")
        indent = src.indent_of(target.lineno)
        src.insert_before(target.end_lineno + 1, ["\n"] + [indent + x for x in lines])

    def op_named_module(self, op):
        """Each group of kernels (those sharing a declaration) moves into the named module whole,
        its creations between launches hoisted first, or stays unique with why: what can move
        moves, so a plugin kernel made in a loop does not keep the others unique."""
        name = checked_name(op["name"], "module name")
        moved, stayed = [], []
        for group in op["groups"]:
            mark = self.mark()
            try:
                for place in group.get("hoist_calls") or ():
                    self.hoist_any(place)
                for place in group["places"]:
                    self.replace_unique(self.source(place["file"]), place["line"], name)
                moved.extend(group.get("kernels") or ())
            except FixRefused as e:
                self.rollback(mark)
                stayed.append((group.get("kernels") or ["?"], str(e)))
        if not moved:
            raise FixRefused("; ".join(dict.fromkeys(why for _, why in stayed)) or "no kernel to move")
        for kernels, why in stayed:
            self.notes.append(f"{', '.join(comment_text(k) for k in kernels)} stay(s) module=\"unique\": {why}")
        if stayed:
            self.notes.append(f"moved into module {name}: {', '.join(comment_text(k) for k in moved)}")

    def mark(self):
        """Where each file's edits stand now, to take back a group's edits that could not all be made."""
        return {path: len(src.edits) for path, src in self.sources.items()}

    def rollback(self, mark):
        for path, src in self.sources.items():
            del src.edits[mark.get(path, 0):]

    def hoist_any(self, place):
        """Hoists the first frame of a late creation that can move: the factory's call, else a
        caller above it (a factory called through a caching wrapper is really called there)."""
        candidates = [place] + [f for f in place.get("stack") or () if isinstance(f, dict)]
        reasons = []
        for candidate in candidates:
            try:
                self.source(candidate["file"])
            except FixRefused as e:
                reasons.append(str(e))
                continue
            try:
                self.hoist(candidate["file"], candidate["line"], None)
                return
            except FixRefused as e:
                reasons.append(str(e))
        raise FixRefused(reasons[0] if len(reasons) == 1 else "; ".join(dict.fromkeys(reasons)))

    def op_hoist(self, op):
        """The first of the places that can move before the first launch moves (the kernel's
        definition in its own block, then where a factory made it); else the fallback."""
        places = op.get("places") or [{"file": op["file"], "line": op["line"]}]
        reasons = []
        for place in places:
            try:
                self.hoist(place["file"], place["line"], None)
                return
            except FixRefused as e:
                reasons.append(str(e))
        fallback = op.get("fallback")
        if fallback is None:
            raise FixRefused("; ".join(reasons))
        why = reasons[-1].split(": ", 1)[-1] if reasons else "it cannot move"
        self.own_module(self.source(fallback["file"]), fallback["line"], fallback.get("module", "unique"), why)

    def op_preload(self, op):
        src = self.entry_source()
        alias = warp_alias(src) or "wp"
        at = None
        for stmt in src.tree.body:
            test = getattr(stmt, "test", None)
            main_guard = isinstance(stmt, ast.If) and "__name__" in ast.unparse(test) if test is not None else False
            if main_guard or (not isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) and calls_launch(stmt)):
                at = first_line(stmt)
                break
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                at = first_line(stmt)
                break
        if at is None:
            raise FixRefused("found no statement of the entry script before which the modules exist and none has launched")
        lines = []
        for group in op["groups"]:
            mods = ", ".join(f"{alias}.get_module({checked_name(m, 'module name', dotted=True)!r})" for m in group["modules"])
            bd = f", block_dim={int(group['block_dim'])}" if group.get("block_dim") not in (None, -1, 1) else ""
            if not isinstance(group.get("device"), str) or not all(c.isalnum() or c == ":" for c in group["device"]):
                raise FixRefused(f"the device {str(group.get('device'))[:40]!r} is not a Warp device name")
            lines.append(
                f'{alias}.force_load(device="{group["device"]}", modules=[{mods}]{bd}, max_workers={int(op["workers"])})'
                "  # xwarp fix: build the modules in parallel before the first launch\n"
            )
        src.insert_before(at, lines)

    def op_preload_block_dim(self, op):
        src = self.source(op["file"])
        found = statement_at(src, op["line"])
        if found is None:
            raise FixRefused(f"no statement at {src.rel}:{op['line']}")
        stmt = found[0]
        call = next((c for c in ast.walk(stmt) if isinstance(c, ast.Call) and getattr(c.func, "attr", getattr(c.func, "id", "")) in ("load_module", "force_load")), None)
        if call is None:
            raise FixRefused(f"no wp.load_module or wp.force_load call at {src.rel}:{op['line']}")
        if call.lineno != call.end_lineno:
            raise FixRefused(f"the preload at {src.rel}:{op['line']} spans several lines: edit its block_dim by hand")
        text = src.line(call.lineno)
        head = text[: call.col_offset]
        body = text[call.col_offset : call.end_col_offset]
        tail = text[call.end_col_offset :]
        bd = next((k for k in call.keywords if k.arg == "block_dim"), None)
        if bd is not None:
            body = body[: bd.value.col_offset - call.col_offset] + str(op["block_dim"]) + body[bd.value.end_col_offset - call.col_offset :]
        else:
            sep = ", " if (call.args or call.keywords) else ""
            body = body[:-1] + f"{sep}block_dim={op['block_dim']})"
        src.replace(call.lineno, call.lineno, [head + body + tail])

    def op_remove_statements(self, op):
        removed = 0
        for place in op["places"]:
            if self.remove_statement(place, only_if="cache"):
                removed += 1
        if not removed:
            raise FixRefused("every place that throws the cache away is deliberate (under a condition): left as it is")

    # -- shared edits ------------------------------------------------------------------------

    def remove_statement(self, place, only_if, key=None, function=None):
        """Removes the simple statement at place; leaves (and names) one under a condition: a
        deliberate maintenance path."""
        try:
            src = self.source(place["file"])
        except FixRefused as e:
            self.notes.append(str(e))
            return False
        found = statement_at(src, place["line"], (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign))
        if found is None:
            self.notes.append(f"{src.rel}:{place['line']}: not a statement this fix can remove: left as it is")
            return False
        stmt, body = found
        up = parents(src.tree)
        node = stmt
        while node in up:
            node = up[node]
            if isinstance(node, (ast.If, ast.IfExp, ast.Try)) or (isinstance(node, ast.While)):
                self.notes.append(
                    f"{src.rel}:{place['line']} ({place.get('what', 'this statement')}) runs under a condition: a "
                    "deliberate path, left as it is"
                )
                return False
        if only_if == "config" and f".config.{key}" not in ast.unparse(stmt):
            return False
        if only_if == "cache" and not throws_cache_away(stmt):
            self.notes.append(f"{src.rel}:{place['line']} is not a statement that throws the cache away (a report's line "
                              "names it): left as it is")
            return False
        if only_if == "call" and function not in ast.unparse(stmt):
            return False
        first, last = first_line(stmt), stmt.end_lineno
        if len(body) == 1:
            src.replace(first, last, [src.indent_of(first) + "pass  # xwarp fix: removed " + comment_text(place.get("what", "")) + "\n"])
        else:
            src.delete(first, last)
        return True

    def replace_unique(self, src, line, name):
        tokens = list(tokenize.generate_tokens(io.StringIO(src.line(line)).readline))
        for i, tok in enumerate(tokens):
            if tok.type == tokenize.STRING and tok.string.strip("'\"") == "unique" and i >= 2:
                if tokens[i - 1].string == "=" and tokens[i - 2].type == tokenize.NAME:
                    text = src.line(line)
                    quote = tok.string[0]
                    new = text[: tok.start[1]] + f"{quote}{checked_name(name, 'module name', dotted=True)}{quote}" + text[tok.end[1] :]
                    src.replace(line, line, [new])
                    return
        raise FixRefused(f'no module="unique" at {src.rel}:{line}')

    def hoist(self, path, line, fallback):
        """Moves the statement that creates a kernel at `line` (a def, or a call of a factory)
        before the first launch of the block that holds it, when nothing it reads is bound in
        between; otherwise gives the kernel's definition (fallback: file, line) a module of its
        own, or refuses."""
        src = self.source(path)
        found = statement_at(src, line)
        if found is None:
            raise FixRefused(f"no statement at {src.rel}:{line}")
        stmt, body = found
        index = body.index(stmt)
        launch = next((i for i, s in enumerate(body[:index]) if self.launches(src, s)), None)
        why = None
        if launch is None:
            why = "no launch comes before it in the block that holds it (the launch is in a loop or a caller)"
        else:
            needed = read_names(stmt)
            between = bound_names(body[launch:index])
            clash = sorted(needed & between)
            if clash:
                why = f"it reads {', '.join(clash)}, which the program computes after the first launch"
        if why is None:
            start = attached_comments(src, first_line(stmt))
            end = stmt.end_lineno
            moved = src.lines[start - 1 : end]
            while end < len(src.lines) and not src.line(end + 1).strip() and end + 1 < first_line(body[-1]) + 10**9:
                end += 1  # the blank lines after it go with it: the place it leaves keeps its spacing
            to = attached_comments(src, first_line(body[launch]))
            # a definition keeps the blank lines PEP 8 gives it (two at the top level, one inside)
            gap = ["\n"] * ((2 if not src.indent_of(first_line(stmt)) else 1) if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)) else 0)
            before = gap if gap and src.line(to - 1).strip() else []
            src.delete(start, end)
            src.insert_before(to, before + moved + gap)
            return
        if fallback is None:
            raise FixRefused(f"the kernel created at {src.rel}:{line} cannot move before the first launch: {why}")
        self.own_module(self.source(fallback["file"]), fallback["line"], fallback.get("module", "unique"), why)

    def own_module(self, src, line, name, why):
        """@wp.kernel at `line` (the kernel's decorator, or within its def) with a module of its own."""
        name = checked_name(name, "module name", dotted=True)
        found = statement_at(src, line, (ast.FunctionDef,))
        if found is None:
            raise FixRefused(f"no kernel definition at {src.rel}:{line}")
        fn = found[0]
        for deco in fn.decorator_list:
            text = ast.unparse(deco)
            if not text.endswith("kernel") and "kernel(" not in text:
                continue
            if deco.lineno != deco.end_lineno:
                raise FixRefused(f"the decorator at {src.rel}:{deco.lineno} spans lines: give the kernel a module by hand")
            if isinstance(deco, ast.Call):
                if any(k.arg == "module" for k in deco.keywords):
                    raise FixRefused(f"the kernel at {src.rel}:{deco.lineno} names its module already")
                row = src.line(deco.lineno)
                head = row[: deco.end_col_offset - 1]
                sep = ", " if (deco.args or deco.keywords) else ""
                src.replace(deco.lineno, deco.lineno, [head + f'{sep}module="{name}")' + row[deco.end_col_offset :]])
            else:
                row = src.line(deco.lineno)
                src.replace(deco.lineno, deco.lineno, [row[: deco.end_col_offset] + f'(module="{name}")' + row[deco.end_col_offset :]])
            self.notes.append(f"the kernel's creation cannot move before the first launch ({why}): it gets a module of its own instead")
            return
        raise FixRefused(f"no @wp.kernel decorator on the definition at {src.rel}:{line}")


def type_code(spec, alias):
    """A generic instance's argument type, as the code that builds it in the kernel's file."""
    if "array" in spec:
        dtype = type_code(spec.get("dtype") or {}, alias)
        if dtype is None:
            return None
        kind = spec["array"] if isinstance(spec["array"], str) and not spec["array"].startswith("_") else "array"
        ndim = spec.get("ndim", 1)
        if not (kind.isidentifier() and kind.isascii()) or type(ndim) is not int or not 1 <= ndim <= 4:
            return None  # Warp arrays have 1 to 4 dimensions: anything else is not a recorded type
        return f"{alias}.{kind}(dtype={dtype}, ndim={ndim})"
    name = spec.get("type")
    if name in ("float", "int", "bool"):
        return name
    if isinstance(name, str) and name.isidentifier() and name.isascii():
        return f"{alias}.{name}"  # Warp's own type (a user struct's name is not in Warp's namespace: the replay says)
    return None


# The protocol (contracts/fixer_protocol.schema.json): its version, and each operation's
# handler, by the name warp-probe's code forms emit (tests/python/test_contracts.py holds this
# table to the schema's list).
PROTOCOL = 2
OPERATIONS = {
    "config_at_entry": Fixer.op_config_at_entry,
    "module_options": Fixer.op_module_options,
    "overloads": Fixer.op_overloads,
    "named_module": Fixer.op_named_module,
    "hoist": Fixer.op_hoist,
    "preload": Fixer.op_preload,
    "preload_block_dim": Fixer.op_preload_block_dim,
    "remove_statements": Fixer.op_remove_statements,
}


def check_request(request):
    """The request's shape, before anything is read or edited: a request outside the protocol
    (another warp-probe's, or damaged) gets one sentence, not a traceback."""
    if not isinstance(request, dict) or not isinstance(request.get("fixes"), list) or not isinstance(request.get("root"), str):
        raise SystemExit("xwarp_fix: the request is not a fixer request (root and fixes)")
    if request.get("protocol") != PROTOCOL:
        raise SystemExit(f"xwarp_fix: protocol {request.get('protocol')!r} requested; this fixer speaks {PROTOCOL}")
    for fix in request["fixes"]:
        ops = fix.get("ops") if isinstance(fix, dict) else None
        if not isinstance(fix.get("id") if isinstance(fix, dict) else None, str) or not isinstance(ops, list):
            raise SystemExit("xwarp_fix: a fix without an id and a list of operations")
        for op in ops:
            if not isinstance(op, dict) or op.get("op") not in OPERATIONS:
                raise SystemExit(f"xwarp_fix: operation {str(op.get('op') if isinstance(op, dict) else op)[:40]!r} is not in protocol {PROTOCOL}")


def make_fix(fixer, fix):
    fixer.sources = {}
    fixer.notes = []
    for op in fix["ops"]:
        OPERATIONS[op["op"]](fixer, op)
    patch = "".join(s.diff() for s in fixer.sources.values() if s.edits)
    if not patch:
        raise FixRefused("the code form changed nothing in the program's files")
    return {
        "id": fix["id"],
        "patch": patch,
        "files": sorted(s.rel for s in fixer.sources.values() if s.edits),
        "notes": fixer.notes,
    }


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        request = json.load(f)
    check_request(request)
    fixer = Fixer(request)
    out = []
    for fix in request["fixes"]:
        try:
            out.append(make_fix(fixer, fix))
        except FixRefused as e:
            out.append({"id": fix["id"], "reason": str(e), "notes": fixer.notes})
        except Exception as e:  # a bug here must not cost the other fixes
            out.append({"id": fix["id"], "reason": f"the fixer failed on this program ({type(e).__name__}: {e})"})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"protocol": PROTOCOL, "fixes": out}, f)


if __name__ == "__main__":
    main()
