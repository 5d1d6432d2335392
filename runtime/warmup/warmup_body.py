#!/usr/bin/env python3
# Warm-up for Warp's kernel cache: the runtime of xwarp @XWARP_VERSION@. warp-probe warmup writes this
# file unchanged for every measurement made with this version; what it builds is data, the plan
# beside it (warp_warmup.json for warp_warmup.py: contracts/warmup_targets.schema.json), which a
# re-measure rewrites. Review this file once per xwarp version, and the plan's diff per measurement.
#
# Run it as a build step with the cache the application will use:
#     WARP_CACHE_PATH=/path/to/cache python warp_warmup.py [--plan FILE] [--workers N] [--root DIR] [--strict]
#         [--trust-plan[=SHA256]]   (a plan warp-probe did not write on this machine: reviewed, then trusted)
# or import it and call warm_up() at the application's start. It needs only Warp. It finds the
# program from its own folder and the current one (anywhere in the project), else from the measured
# project's folder, or --root. A target it cannot build fails alone and is named; --strict makes
# that exit 1. An identity folds in Warp's version, the device and the options: after a change to
# any of them the program builds again; write the plan again from a new measurement.
#
# It builds through Warp's public API: wp.overload, wp.set_module_options, wp.force_load, and
# wp.compile_aot_module where the Warp has it. To say what it built and what the cache holds it
# reads, each feature-detected, what Warp keeps on a module and is not public: the hash a load
# built under (execs), the hash it would build now (get_module_hash), its cache folder's name
# (get_module_identifier), and a factory's module in Warp's registry (user_modules). Where a Warp
# has none of them it still builds, and says the hash is unknown. The builds run in worker processes, this same file
# started with --serve: a process builds in parallel with the others (Warp's code generation holds
# the interpreter's lock, a thread would not), and each process has its own copy of a module, so
# forms of it the run built in different processes (pytest-xdist workers instantiating other
# generic kernels) are each reachable.
#
# What it runs: Warp, the program's own modules and installed packages' (imported from the folders
# it finds; an installed one is one a distribution's RECORD lists), the factories the run called
# (functions of those modules that define the kernel they return, never Warp's own, called with the
# recorded arguments as data), and from the command's own script or notebook cell only its Warp
# definitions. Never a launch, a subprocess other than its own workers, a name the program's modules
# do not define, or text of the plan as code. It builds a plan only where warp-probe wrote it (its
# SHA-256 in this machine's ledger, plan_ledger()) or when told to trust it (--trust-plan). The rules
# below (the packages never the program's code, the wp.config values it may set) are this file's,
# not the plan's: an edited plan cannot loosen them.

import argparse
import importlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time

import warp as wp

RUNTIME_VERSION = "@XWARP_VERSION@"
PLAN_CONTRACT = 4  # the plans this file reads (contracts/warmup_targets.schema.json, x-contract-version)
PLAN_LIMIT = 64 << 20  # the largest plan this file reads (bytes)

# The warm-up contract's rules, as warp-probe @XWARP_VERSION@ has them: the top packages never the
# program's code (x-never-the-programs), and what CONFIG may hold (the config rule: keys that change
# a module's identity, each of its type and range; the file sets nothing else).
NEVER_THE_PROGRAMS = ["@XWARP_NEVER_THE_PROGRAMS@"]
CONFIG_RULES = {"@XWARP_CONFIG_RULES@": {}}

# The plan's values (load_plan): where the program is, what it built and with which options.
PROJECT = IMPORT_ROOT = ENTRY_SCRIPT = ""  # the measured command's folder; its import folder; its script
IMPORT_PATHS, PACKAGES, ROOT_PACKAGES, ARCH, USED, OPTIONS, TARGETS = [], [], [], [], [], [], []
CELL = ""  # a notebook cell's run: the SHA-256 of its code, NAME_cell.py beside the plan NAME.json
DEVICE = None  # the device that replaces CUDA's
WORKERS = 1
CONFIG = {}
_PLAN_PATH = [None]  # the plan read, once it is
_PLAN_DIGEST = [None]  # its SHA-256, of the bytes read

_PLAN_FIELDS = {
    "contract": int, "written_by": str, "measured": dict, "project": str, "import_root": str, "import_paths": list,
    "packages": list, "root_packages": list, "workers": int, "entry_script": str, "cell": str,
    "device": (str, type(None)), "arch": list, "used": list, "config": dict, "options": list, "targets": list,
}
_TARGET_FIELDS = {
    "warp_module": str, "hash": str, "device": str, "block_dim": (int, type(None)), "module": str, "kernel": str,
    "instances": list, "options": int, "factories": list, "form": int, "follows": list, "build_ms": (int, float),
    "tests": list,
}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_WARP_TYPE = re.compile(r"(bool|int|float|u?int(8|16|32|64)|float(16|32|64)|vec\w*|mat\w*|quat\w*|transform\w*|"
                        r"spatial_vector\w*|spatial_matrix\w*|spatial_transform\w*)\Z")
_ARRAY_KINDS = ("array", "indexedarray", "fabricarray", "indexedfabricarray")


class PlanNotTrusted(Exception):
    """The plan is not one warp-probe wrote on this machine and the caller did not trust it: nothing
    was imported or built (the file run as a script exits 3)."""


class WarmupRefused(Exception):
    """What the file will not do with a name its data gives (a module outside the program, a
    factory that is not a function of it): the target fails alone, with this reason."""


_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def _printable(text, limit=300):
    """Text from a plan or a report as one line a terminal shows as it is: control characters
    (ESC, OSC, a newline that would forge a line of this file's), bidi controls and invisible
    characters escaped; cut at `limit` characters with how many were left out."""
    import unicodedata

    out = []
    for ch in str(text):
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append("\\x%02x" % code)
        elif 0xD800 <= code < 0xE000 or code in _BIDI or unicodedata.category(ch) in ("Cf", "Zl", "Zp"):
            out.append("\\u%04x" % code if code <= 0xFFFF else "\\U%08x" % code)
        else:
            out.append(ch)
    line = "".join(out)
    return line if len(line) <= limit else line[:limit] + f"... ({len(line) - limit} more characters)"


def _bounded_bytes(path, limit):
    """A regular file's bytes, at most `limit`: (bytes, None), or (None, why) for anything else (a
    link, a FIFO, a device, a folder, a larger file, one that cannot be opened). Opening never
    waits: a FIFO is refused, not read."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        return None, ("a symbolic link" if error.errno == getattr(__import__("errno"), "ELOOP", -1)
                      else error.strerror or str(error))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
                else "a folder" if stat.S_ISDIR(mode) else "not a regular file"
            return None, kind + ", not a file"
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            return None, f"larger than {limit >> 20} MiB"
        return b"".join(chunks), None
    except OSError as error:
        return None, error.strerror or str(error)
    finally:
        os.close(fd)


def _fields_wrong(record, fields):
    """Why `record` is not a record of these fields and types; None when it is."""
    if not isinstance(record, dict) or set(record) != set(fields):
        return f"has the fields {sorted(record) if isinstance(record, dict) else type(record).__name__}, not {sorted(fields)}"
    for field, kind in fields.items():
        if not isinstance(record[field], kind) or isinstance(record[field], bool) and kind is not bool:
            return f"{field} is {type(record[field]).__name__}"
    return None


def load_plan(path=None):
    """Reads the plan: `path`, else $XWARP_WARMUP_PLAN, else the .json beside this file of its own
    name: a regular file of at most PLAN_LIMIT bytes (never a FIFO, a device or a link). A plan of
    another contract or shape stops here with one sentence, not midway through a build. Returns
    the path read; its SHA-256 is kept for the trust check (check_trust)."""
    import hashlib

    path = path or os.environ.get("XWARP_WARMUP_PLAN") or os.path.splitext(os.path.abspath(__file__))[0] + ".json"
    data, why = _bounded_bytes(path, PLAN_LIMIT)
    if data is None:
        raise SystemExit(f"warp warm-up: cannot read the plan {_printable(path)}: {why}; warp-probe warmup writes it beside "
                         f"this file (give another with --plan)")
    try:
        plan = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise SystemExit(f"warp warm-up: the plan {_printable(path)} is not JSON this file reads: "
                         f"{_printable(type(error).__name__)}: {_printable(str(error)[:200])}")
    if not isinstance(plan, dict) or plan.get("contract") != PLAN_CONTRACT:
        found = plan.get("contract") if isinstance(plan, dict) else type(plan).__name__
        raise SystemExit(f"warp warm-up: the plan {_printable(path)} follows contract {_printable(repr(found)[:40])}; this "
                         f"file (xwarp {RUNTIME_VERSION}) reads contract {PLAN_CONTRACT}: write both again with warp-probe warmup")
    wrong = _fields_wrong(plan, _PLAN_FIELDS)
    if wrong:
        raise SystemExit(f"warp warm-up: the plan {_printable(path)} {_printable(wrong)}")
    for i, target in enumerate(plan["targets"]):
        wrong = _fields_wrong(target, _TARGET_FIELDS)
        if wrong is None and not 0 <= target["options"] < len(plan["options"]):
            wrong = f"options is {target['options']}, not one of the plan's {len(plan['options'])} option sets"
        if wrong:
            raise SystemExit(f"warp warm-up: the plan {_printable(path)}: target {i} {_printable(wrong)}")
    if not re.fullmatch(r"([0-9a-f]{64})?", plan["cell"]):
        raise SystemExit(f"warp warm-up: the plan {_printable(path)}: cell is not the SHA-256 of a cell's code")
    if not all(isinstance(o, dict) for o in plan["options"]):
        raise SystemExit(f"warp warm-up: the plan {_printable(path)}: an option set that is not an object")
    globals().update(PROJECT=plan["project"], IMPORT_ROOT=plan["import_root"], IMPORT_PATHS=plan["import_paths"],
                     PACKAGES=plan["packages"], ROOT_PACKAGES=plan["root_packages"], WORKERS=plan["workers"],
                     ENTRY_SCRIPT=plan["entry_script"], CELL=plan["cell"], DEVICE=plan["device"],
                     ARCH=plan["arch"], USED=plan["used"], CONFIG=plan["config"], OPTIONS=plan["options"],
                     TARGETS=plan["targets"], MEASURED_IDENTITIES=plan["measured"].get("identities"))
    _PLAN_PATH[0] = os.path.abspath(path)
    _PLAN_DIGEST[0] = hashlib.sha256(data).hexdigest()
    return path


# -- whether the plan is one to build -----------------------------------------------------------


def plan_ledger():
    """The file where warp-probe notes the SHA-256 of every plan it writes on this machine (one
    per line): $XWARP_PLAN_LEDGER, else $XDG_DATA_HOME/xwarp/warmup-plans, else
    ~/.local/share/xwarp/warmup-plans."""
    explicit = os.environ.get("XWARP_PLAN_LEDGER")
    if explicit:
        return explicit
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "xwarp", "warmup-plans")


def _written_here(digest):
    data, _ = _bounded_bytes(plan_ledger(), 16 << 20)
    return data is not None and any(line.split(b" ", 1)[0] == digest.encode() for line in data.splitlines())


def what_it_does():
    """The plan's work in lines to review: the modules it imports, the factories it calls with
    their arguments, the script or cell whose definitions it runs, the wp.config values it sets."""
    lines = []
    modules = sorted({t["module"] for t in TARGETS if t["module"] and t["module"] != "__main__"}
                     | {f.get("module") for t in TARGETS for f in t["factories"] if isinstance(f, dict)} - {None, "__main__"})
    if modules:
        lines.append("imports " + ", ".join(_printable(str(m), 120) for m in modules[:20])
                     + (f" and {len(modules) - 20} more" if len(modules) > 20 else ""))
    calls = []
    for t in TARGETS:
        for f in t["factories"]:
            if isinstance(f, dict) and f not in calls:
                calls.append(f)
    for f in calls[:20]:
        args = ", ".join(_printable(json.dumps(a, separators=(",", ":")), 120) for a in f.get("args", [])[:8])
        lines.append(f"calls {_printable(str(f.get('module')), 120)}.{_printable(str(f.get('qualname')), 120)}({args})")
    if len(calls) > 20:
        lines.append(f"and {len(calls) - 20} more calls")
    if CELL:
        lines.append("runs the definitions of the notebook cell " + _printable(_cell_file()))
    elif ENTRY_SCRIPT and any(t["module"] == "__main__" for t in TARGETS):
        lines.append("runs the definitions of the script " + _printable(ENTRY_SCRIPT) + " (in the program's folder)")
    for key, value in CONFIG.items():
        lines.append(f"sets wp.config.{_printable(str(key), 60)} = {_printable(repr(value), 120)}")
    lines.append(f"builds {len(TARGETS)} module identities into Warp's kernel cache")
    return lines


def check_trust(trust=None, log=print):
    """A plan builds only when warp-probe wrote it on this machine (its SHA-256 is in the ledger),
    or the caller trusts it: trust=True trusts the plan as it is read, trust="SHA256" only the plan
    of that digest. Otherwise what it would do is shown and PlanNotTrusted says how to trust it."""
    _ensure_plan()
    digest = _PLAN_DIGEST[0]
    if isinstance(trust, str):
        if trust.lower() != digest:
            raise PlanNotTrusted(f"warp warm-up: --trust-plan names the plan {_printable(trust[:64])}, but "
                                 f"{_printable(_PLAN_PATH[0])} is {digest}: it changed since it was trusted; review it again")
        return
    if trust or _written_here(digest):
        return
    log(f"warp warm-up: the plan {_printable(_PLAN_PATH[0])} (SHA-256 {digest}) was not written by warp-probe on this "
        f"machine ({_printable(plan_ledger())} does not list it). It would:")
    for line in what_it_does():
        log("warp warm-up:   " + line)
    raise PlanNotTrusted(f"warp warm-up: not built: review the plan, then run again with --trust-plan={digest} (or "
                         "--trust-plan for the plan as it is), or write it again here with warp-probe warmup")


def _ensure_plan():
    """The plan read (the one beside this file when none was): a program that imports this file
    and calls warm_up() reads it there."""
    if _PLAN_PATH[0] is None:
        load_plan()


# -- where the program is ------------------------------------------------------------------------


def _ancestors(path):
    while True:
        yield path
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


def _holds_program(root):
    """True when `root` holds the program's own packages (or its script) as the measured run
    imported them."""
    if not os.path.isdir(root):
        return False
    names = ROOT_PACKAGES
    if ENTRY_SCRIPT:
        if not os.path.isfile(os.path.join(root, ENTRY_SCRIPT)):
            return False
    for name in names:
        if not (os.path.isdir(os.path.join(root, name)) or os.path.isfile(os.path.join(root, name + ".py"))):
            return False
    return bool(names) or bool(ENTRY_SCRIPT)


def _holds_paths(project):
    """True when the program's other import folders (IMPORT_PATHS: a test suite's folders, which
    pytest puts on the path itself) hold, under `project`, every package the file imports that is
    not in IMPORT_ROOT; True when it needs none."""
    wanted = [name for name in PACKAGES if name not in ROOT_PACKAGES]
    if not wanted or not IMPORT_PATHS:
        return True
    folders = [os.path.normpath(p if os.path.isabs(p) else os.path.join(project, p)) for p in IMPORT_PATHS]
    folders = [f for f in folders if os.path.isdir(f)]
    return bool(folders) and all(any(os.path.isdir(os.path.join(f, name)) or os.path.isfile(os.path.join(f, name + ".py"))
                                     for f in folders) for name in wanted)


def find_root(explicit=None):
    """The folder the program's modules import from, and the project around it: --root when given,
    else the first of this file's folder and its parents, the current folder and its parents, and
    the measured project's folder that holds the program, and its other import folders too (a
    suite run as `python -m pytest` imports from pytest's folder, and its test modules from the
    project's tests/: the file beside tests/, in ci/, finds them from its own folder). None when
    none does."""
    if explicit:
        root = os.path.abspath(explicit)
        project = PROJECT if os.path.isabs(IMPORT_ROOT) else os.path.normpath(os.path.join(root, *[os.pardir] * _depth()))
        _PROJECT_FOUND[0] = project
        return root, project
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = []
    for project in [*_ancestors(here), *_ancestors(os.getcwd()), PROJECT]:
        if project not in candidates:
            candidates.append(project)
    for needs_paths in (True, False):
        for project in candidates:
            root = os.path.normpath(os.path.join(project, IMPORT_ROOT))
            if _holds_program(root) and (not needs_paths or _holds_paths(project)):
                _PROJECT_FOUND[0] = project
                return root, project
    if not ROOT_PACKAGES and not ENTRY_SCRIPT:
        # only libraries (they import from the environment), or a notebook cell's own code
        project = next((c for c in candidates if _holds_paths(c)), PROJECT if os.path.isdir(PROJECT) else here)
        _PROJECT_FOUND[0] = project
        return os.path.normpath(os.path.join(project, IMPORT_ROOT)), project
    return None, None


def _depth():
    return 0 if IMPORT_ROOT in ("", ".") else len(os.path.normpath(IMPORT_ROOT).split(os.sep))


def _import_paths(project):
    """The other folders the run imported kernels' modules from that exist here (a relative one
    is inside the project); a library found nowhere else is left to the environment."""
    out = []
    for path in IMPORT_PATHS:
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(project, path))
        if os.path.isdir(full) and full not in out:
            out.append(full)
    return out


def _system_folders():
    """The interpreter's own library folders, whose modules define no program's kernels, and its
    folders of installed packages."""
    import sysconfig

    paths = sysconfig.get_paths()
    own = {os.path.realpath(paths[k]) + os.sep for k in ("stdlib", "platstdlib") if paths.get(k)}
    packages = {os.path.realpath(paths[k]) + os.sep for k in ("purelib", "platlib") if paths.get(k)}
    return own, packages


_USES_WARP = re.compile(rb"^\s*(import\s+warp\b|from\s+warp\b)", re.M)
_INSTALLED = {}  # a file's real path -> (distribution, version, the RECORD that lists it), read once


def _bounded_text(path, limit):
    """A regular file's text, at most `limit` bytes; None for anything else (a link, a FIFO, a device)."""
    data, _ = _bounded_bytes(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def _installed_files():
    """Every file an installed distribution on this Python's import path lists in its RECORD, by
    real path: the same model warp-probe decided the run's owners by (an installed package is
    the RECORD's, wherever it lies: site-packages, a pip --target folder on PYTHONPATH, the user's
    site). Read once, at most 200 folders and 5,000 distributions."""
    if _INSTALLED:
        return _INSTALLED
    import csv

    _INSTALLED[None] = None  # read: an environment with none stays read
    seen = 0
    for folder in [p for p in sys.path if isinstance(p, str) and p][:200]:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        bases = {os.path.abspath(folder), os.path.realpath(folder)}  # as named, and resolved
        for name in names:
            if not name.endswith(".dist-info") or seen >= 5000:
                continue
            seen += 1
            info = os.path.join(folder, name)
            record = _bounded_text(os.path.join(info, "RECORD"), 16 << 20)
            if record is None:
                continue
            meta = _bounded_text(os.path.join(info, "METADATA"), 1 << 20) or ""
            heads = dict(line.split(":", 1) for line in meta.split("\n\n", 1)[0].splitlines() if ":" in line)
            dist = (heads.get("Name", "").strip(), heads.get("Version", "").strip(), os.path.join(info, "RECORD"))
            for row in csv.reader(record.splitlines()):
                for base in bases if row and row[0] else ():
                    _INSTALLED.setdefault(os.path.normpath(os.path.join(base, row[0])), dist)
    return _INSTALLED


def _owner(real, as_found=None):
    """Whose a file is, by its real path (and the path the import system found it at, which a
    RECORD names when a folder on the way is a link): "project" (in the project found here),
    "installed" (an installed distribution's RECORD lists it; Warp's own among them), "stdlib" or
    None (neither: refused). Returns (owner, the evidence)."""
    own, packages = _system_folders()
    project = _PROJECT_FOUND[0]
    listed = _installed_files().get(real) or (_installed_files().get(as_found) if as_found else None)
    if listed is not None:
        return "installed", f"{listed[0]} {listed[1]} (listed in {listed[2]})"
    if any(real.startswith(p) for p in own) and not any(real.startswith(p) for p in packages):
        return "stdlib", "the Python installation's own library"
    if project and real.startswith(os.path.join(os.path.realpath(project), "")):
        return "project", f"in the project {project}"
    return None, None


def _program_file(name):
    """The file Python would import module `name` from, found without importing anything, when it
    is the program's own or an installed package's: its top package one the measured run imported
    kernels from (PACKAGES), never a distribution that runs programs, nor a package's __main__; the
    file on disk in the project found here or listed by an installed distribution's RECORD on this
    Python's import path (never the interpreter's own library, whatever folder a report names), and
    a module that uses Warp. Raises WarmupRefused otherwise: the same rule warp-probe checked when
    it wrote the plan. Returns (real path, owner)."""
    import importlib.machinery

    if not isinstance(name, str) or not _DOTTED.match(name):
        raise WarmupRefused(f"{name!r} is not a module name")
    top, *rest = name.split(".")
    if top != "warp" and top not in PACKAGES:
        raise WarmupRefused(f"module {name} is not one of the program's packages ({', '.join(PACKAGES) or 'none'})")
    if top in NEVER_THE_PROGRAMS:  # this file's list (the warm-up contract's)
        raise WarmupRefused(f"module {name} belongs to {top}, a package that runs programs: never the program's code")
    if rest[-1:] == ["__main__"]:
        raise WarmupRefused(f"module {name} is a package's command line: importing it runs it")
    spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    if spec is None:
        raise WarmupRefused(f"no package {top} on the import path (give --root, the folder that holds it)")
    locations = list(spec.submodule_search_locations or [])
    if not rest:
        path = spec.origin if spec.origin and spec.origin != "namespace" else (locations[0] if locations else None)
    else:
        path = None
        for base in locations:
            candidate = os.path.join(base, *rest)
            for option in (candidate + ".py", os.path.join(candidate, "__init__.py"), candidate):
                if os.path.exists(option):
                    path = option
                    break
            if path:
                break
    if path is None or not os.path.exists(path):
        raise WarmupRefused(f"module {name} is not on disk where its package {top} is")
    real = os.path.realpath(path)
    owner, _ = _owner(real, os.path.normpath(os.path.abspath(path)))
    if owner == "stdlib":
        raise WarmupRefused(f"module {name} is part of the Python installation ({real}), not of the program")
    if owner is None:
        folders = [p for p in sys.path if isinstance(p, str) and p]
        raise WarmupRefused(f"module {name} ({real}) is neither in the project ({_PROJECT_FOUND[0]}) nor listed by an installed "
                            f"distribution's RECORD on this Python's import path ({len(folders)} folders: "
                            f"{', '.join(folders[:4])}{' ...' if len(folders) > 4 else ''})")
    if real.endswith(".py"):
        text = _bounded_text(real, 4 << 20)
        if text is None or _USES_WARP.search(text.encode("utf-8", "replace")) is None:
            raise WarmupRefused(f"module {name} ({real}) does not use Warp: the file calls only the program's Warp code")
    return real, owner


_PROJECT_FOUND = [None]  # the project folder find_root() found, once it has


def _import(name):
    """A module of the program, once its file is found where the program keeps it."""
    _program_file(name)
    return importlib.import_module(name)


# -- the command's own script or cell: its Warp definitions only -----------------------------------

_entry = None
_SAFE_IMPORTS = ("__future__", "warp", "numpy", "math", "typing", "dataclasses", "enum", "functools")


def _entry_definitions(root):
    """The command's own script (or notebook cell) as its kernels need it, under the name __main__
    (Warp's module for them): imports of Warp and of the program's packages, @wp.kernel, @wp.func
    and @wp.struct definitions whose decorators, annotations and defaults call nothing but Warp's
    type constructors, and constants of literals. Everything else is the program's work and never
    runs here; the first lines left out are printed."""
    global _entry
    if _entry is None:
        import ast
        import hashlib
        import linecache
        import types

        path = _entry_file(root)
        data, why = _bounded_bytes(path, 4 << 20)
        if data is None:
            raise WarmupRefused(f"the command's script {_printable(path)} cannot be read: {why}")
        if CELL and hashlib.sha256(data).hexdigest() != CELL:
            raise WarmupRefused(f"the cell's code {_printable(path)} is not the code the plan was written with "
                                "(its SHA-256 differs): it changed since; write the warm-up again")
        source = data.decode("utf-8", "replace")
        linecache.checkcache(path)  # Warp reads a kernel's source back (inspect) from the same file
        tree = ast.parse("\n".join(l if not l.lstrip().startswith(("%", "!")) else "" for l in source.splitlines()), path)
        kept, left = [], []
        constants = {}
        for stmt in tree.body:
            why = _why_not_definition(stmt, constants, root)
            (left if why else kept).append((stmt, why))
        for stmt, why in left[:3]:
            print(f"warp warm-up: left out line {stmt.lineno} of the command's script: {_printable(why)}", file=sys.stderr)
        namespace = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
        exec(compile(ast.Module(body=[s for s, _ in kept], type_ignores=[]), path, "exec"), namespace)
        _entry = types.SimpleNamespace(**namespace)
    return _entry


def _cell_file():
    """A notebook cell's code, as warp-probe wrote it beside the plan: NAME_cell.py for NAME.json."""
    return os.path.splitext(_PLAN_PATH[0])[0] + "_cell.py"


def _entry_file(root):
    """The file whose definitions the file runs for the kernels of __main__: the cell's file beside
    the plan, or the command's script, which must be the project's own (in the project found here,
    listed by no installed distribution): a plan never names another file to run."""
    if CELL:
        return _cell_file()  # read only with the digest the plan holds (_entry_definitions)
    if not ENTRY_SCRIPT or os.path.isabs(ENTRY_SCRIPT) or os.pardir in ENTRY_SCRIPT.split(os.sep):
        raise WarmupRefused(f"the command's script {_printable(ENTRY_SCRIPT)!s} is not a file name in the program's folder")
    path = os.path.join(root, ENTRY_SCRIPT)
    real = os.path.realpath(path)
    owner, _ = _owner(real, os.path.normpath(path))
    if owner != "project":
        raise WarmupRefused(f"the command's script {_printable(real)} is not the project's own file "
                            f"({'an installed package' if owner == 'installed' else owner or 'outside the project'}): "
                            "the file runs definitions only from the program's own script")
    return path


def _why_not_definition(stmt, constants, root):
    """Why a statement of the script is not a definition this file runs, "" when it is."""
    import ast

    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        if isinstance(stmt, ast.ImportFrom) and stmt.level:
            return "a relative import"
        names = [stmt.module] if isinstance(stmt, ast.ImportFrom) else [a.name for a in stmt.names]
        for name in names:
            top = (name or "").split(".")[0]
            if top not in _SAFE_IMPORTS + tuple(PACKAGES) and not _in_root(top, root):
                return f"an import of {name}, which is neither Warp nor the program's"
        if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
            return "a star import"
        return ""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        # a function's body runs only when it is called: a plain one is kept (a factory of the
        # script's kernels), called only when the script is a file on disk (never a cell's)
        if isinstance(stmt, ast.AsyncFunctionDef):
            return "an async function"
        for deco in stmt.decorator_list:
            if not _warp_decorator(deco, ("kernel", "func", "func_grad", "func_replay", "overload")):
                return "a decorator that is not Warp's"
        a = stmt.args
        for default in a.defaults + [d for d in a.kw_defaults if d is not None]:
            if not _literal(default):
                return "a default that is not a literal"
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [x for x in (a.vararg, a.kwarg) if x]:
            if arg.annotation is not None and not _type_expression(arg.annotation):
                return f"an annotation of {arg.arg} that is not a Warp type"
        if stmt.returns is not None and not _type_expression(stmt.returns):
            return "a return annotation that is not a Warp type"
        return ""
    if isinstance(stmt, ast.ClassDef):
        if stmt.bases or stmt.keywords or len(stmt.decorator_list) != 1 or not _warp_decorator(stmt.decorator_list[0], ("struct",)):
            return "a class that is not a plain @wp.struct"
        for item in stmt.body:
            docstring = isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str)
            field = isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.value is None and _type_expression(item.annotation)
            if not (docstring or field or isinstance(item, ast.Pass)):
                return "a struct body with more than field annotations"
        return ""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not all(isinstance(t, ast.Name) for t in targets) or stmt.value is None:
            return "an assignment to something other than a name"
        if isinstance(stmt, ast.AnnAssign) and not _type_expression(stmt.annotation):
            return "an annotation that is not a Warp type"
        kind = _constant_kind(stmt.value, constants)
        if kind is None:
            return "a value that is not a constant of literals"
        for t in targets:
            constants[t.id] = kind
        return ""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return ""  # a docstring
    return "the program's work (a statement that is no definition)"


def _in_root(top, root):
    """A module or package of that name in the program's own folder."""
    return bool(top) and _IDENTIFIER.match(top) is not None and (
        os.path.isfile(os.path.join(root, top + ".py")) or os.path.isdir(os.path.join(root, top)))


def _warp_attribute(node, names):
    """wp.NAME or warp.NAME, NAME among `names`."""
    import ast

    return (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("wp", "warp")
            and node.attr in names)


def _warp_decorator(node, names):
    import ast

    if _warp_attribute(node, names):
        return True
    return (isinstance(node, ast.Call) and _warp_attribute(node.func, names) and not node.args
            and all(k.arg is not None and _literal(k.value) for k in node.keywords))


def _literal(node):
    import ast

    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (bytes, str)) or len(node.value) <= 10000
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float))
    if isinstance(node, (ast.Tuple, ast.List)):
        return len(node.elts) <= 256 and all(_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return len(node.keys) <= 256 and all(k is not None and _literal(k) for k in node.keys) and all(_literal(v) for v in node.values)
    return False


def _type_expression(node, depth=0):
    """A type as a kernel's annotation writes it: Warp's types by name (wp.float32, wp.array(dtype=
    float, ndim=2), wp.array[float], wp.types.vector(length=5, dtype=float)), Python's scalars,
    typing.Any, a name the script defines, or a string."""
    import ast

    if depth > 6:
        return False
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, (str, int))
    if isinstance(node, ast.Name):
        return True  # a name: a Warp type imported by name, a struct the script defines, Any
    if isinstance(node, ast.Attribute):
        base = node.value
        while isinstance(base, ast.Attribute):
            base = base.value
        return isinstance(base, ast.Name) and base.id in ("wp", "warp", "typing")
    if isinstance(node, ast.Subscript):
        return _type_expression(node.value, depth + 1) and _type_expression(node.slice, depth + 1)
    if isinstance(node, ast.Tuple):
        return all(_type_expression(e, depth + 1) for e in node.elts)
    if isinstance(node, ast.Call):
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Name, ast.Attribute))):
            return False
        owner = ast.unparse(func.value)
        if owner not in ("wp", "warp", "wp.types", "warp.types") or not (
                func.attr in _ARRAY_KINDS or func.attr in ("array1d", "array2d", "array3d", "array4d", "vector", "matrix")):
            return False
        values = list(node.args) + [k.value for k in node.keywords]
        return all(k.arg is not None for k in node.keywords) and len(values) <= 4 and all(
            _type_expression(v, depth + 1) for v in values)
    return False


def _constant_kind(node, constants):
    """'number' or 'other' for a constant of literals (a literal, a name bound to one, arithmetic
    on numbers, wp.constant of one, one of Warp's named types built from numbers); None otherwise."""
    import ast

    if _literal(node):
        return "number" if isinstance(node, (ast.Constant, ast.UnaryOp)) and not isinstance(
            getattr(node, "value", None), (str, bytes)) else "other"
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return "number" if _constant_kind(node.operand, constants) == "number" else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod)):
        both = (_constant_kind(node.left, constants), _constant_kind(node.right, constants))
        return "number" if both == ("number", "number") else None
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) <= 64:
        func = node.func
        if _warp_attribute(func, ("constant",)) and len(node.args) == 1:
            return _constant_kind(node.args[0], constants)
        if (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("wp", "warp")
                and _WARP_TYPE.match(func.attr) and all(_constant_kind(a, constants) == "number" for a in node.args)):
            return "other"
    return None


# -- names the data gives, resolved within the program ---------------------------------------------


def _resolve(module_name, qualname, root):
    """An object by its qualname in one of the program's modules ("module:qualname" names another)."""
    if ":" in qualname:
        module_name, qualname = qualname.split(":", 1)
    if not _DOTTED.match(qualname or ""):
        raise WarmupRefused(f"{qualname!r} is not a name this file looks up")
    obj = _entry_definitions(root) if module_name == "__main__" else _import(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _warp_name(name):
    """One of Warp's types by the name Warp exports (wp.float32, wp.vec3): never a function."""
    obj = getattr(wp, name, None) if isinstance(name, str) and _IDENTIFIER.match(name) else None
    if not isinstance(obj, type):
        raise WarmupRefused(f"wp.{name} is not one of Warp's types")
    return obj


def _warp_object(obj):
    """One of Warp's objects (a type, a @wp.struct, a @wp.func, a kernel), or an enumeration or its
    member: what a factory argument may refer to. Anything else, a function of the program's or of
    the standard library's among it, is never handed to a factory."""
    import enum

    if isinstance(obj, enum.Enum) or (isinstance(obj, type) and issubclass(obj, enum.Enum)):
        return True
    owner = obj if isinstance(obj, type) else type(obj)
    module = getattr(owner, "__module__", "") or ""
    return module == "warp" or module.startswith("warp.")


def _reference(ref, root):
    """A recorded reference: "warp:NAME" is a type of Warp's, "module:qualname" a name in one of the
    program's modules that is one of Warp's objects or an enumeration (_warp_object)."""
    module, _, qualname = str(ref).partition(":")
    if module == "warp":
        return _warp_name(qualname)
    obj = _resolve(module, module + ":" + qualname, root)
    if not _warp_object(obj):
        raise WarmupRefused(f"{_printable(ref, 200)} is not one of Warp's objects or an enumeration: never a factory's "
                            "argument")
    return obj


def _value(tagged, root, depth=0):
    """A factory argument from its recorded data: a literal, a float, a tuple or list of those, a
    flag value of one of the program's enums, or a reference (_reference)."""
    import enum

    if depth > 8 or not isinstance(tagged, dict):
        raise WarmupRefused("an argument that is not recorded as data")
    if set(tagged) == {"enum", "value"}:  # a combination of flags: the class called with its value
        cls = _reference(tagged["enum"], root)
        if not (isinstance(cls, type) and issubclass(cls, enum.Flag)) or type(tagged["value"]) is not int:
            raise WarmupRefused(f"{_printable(tagged['enum'], 200)} is not an enumeration of flags of the program's")
        # made by the enumeration's own machinery only: a class that makes its own members from a
        # value (_missing_, a metaclass's call) would run the program's code with the plan's number
        if type(cls).__call__ is not enum.EnumMeta.__call__ or getattr(cls._missing_, "__func__", None) is not \
                enum.Flag._missing_.__func__:
            raise WarmupRefused(f"{_printable(tagged['enum'], 200)} makes its members in code of its own: not rebuilt")
        return cls(tagged["value"])
    ((kind, value),) = tagged.items()
    if kind == "lit" and (value is None or type(value) in (bool, int, str)):
        return value
    if kind == "float":
        return float(value)
    if kind in ("tuple", "list") and isinstance(value, list):
        items = [_value(x, root, depth + 1) for x in value]
        return tuple(items) if kind == "tuple" else items
    if kind == "ref":
        return _reference(value, root)
    raise WarmupRefused(f"an argument recorded as {kind}: not data this file can rebuild")


def _type_of(spec, root):
    """An argument type of a generic instance, from its recorded data: Warp's by name, an array of
    one, a vector or matrix of a shape Warp has no name for, or a @wp.struct of the program."""
    if not isinstance(spec, dict):
        raise WarmupRefused("a type that is not recorded as data")
    if "array" in spec:
        kind, ndim = spec["array"], spec.get("ndim", 1)
        if kind not in _ARRAY_KINDS or type(ndim) is not int or not 1 <= ndim <= 4:
            raise WarmupRefused(f"an array type {kind!r} of {ndim!r} dimensions")
        return getattr(wp, kind)(dtype=_type_of(spec.get("dtype"), root), ndim=ndim)
    if "struct" in spec:
        struct = _reference(spec["struct"], root)
        if not isinstance(getattr(struct, "vars", None), dict):
            raise WarmupRefused(f"{spec['struct']} is not a @wp.struct")
        return struct
    if "shape" in spec:
        shape, scalar = spec["shape"], _type_of(spec.get("scalar"), root)
        if not (isinstance(shape, list) and 1 <= len(shape) <= 2 and all(type(n) is int and 0 < n <= 64 for n in shape)):
            raise WarmupRefused(f"a vector or matrix shape {shape!r}")
        if len(shape) == 1:
            return wp.types.vector(length=shape[0], dtype=scalar)
        return wp.types.matrix(shape=tuple(shape), dtype=scalar)
    name = spec.get("type")
    if name in ("float", "int", "bool"):
        return {"float": float, "int": int, "bool": bool}[name]
    if isinstance(name, str) and _WARP_TYPE.match(name):
        return _warp_name(name)
    raise WarmupRefused(f"a type {name!r} that is not Warp's")


def _made_by_factories(factories, root):
    """Calls each factory the run called (through the name its module exports, decorators
    included), a function of the program's, with the recorded arguments: what they return holds
    the kernels they made."""
    import types

    made = []
    for call in factories:
        where = f"{call['module']}.{call['qualname']}"
        if call["module"] == "__main__" and CELL:
            raise WarmupRefused("a factory defined in a notebook cell: this file calls only factories in files on disk")
        if call["module"].split(".")[0] == "warp":
            # Warp's own code, its tests and examples included, is never a factory this file calls
            raise WarmupRefused(f"{where} is Warp's own code: the file calls factories of the program and of installed "
                                "packages only")
        factory = _resolve(call["module"], call["qualname"], root)
        if not callable(factory) or isinstance(factory, type):
            raise WarmupRefused(f"{where} is not a function")
        # a function the program's file defines (through a decorator's wrapper, its own code): a
        # builtin, or a function of another module re-exported under the program's name, is not one
        inner = getattr(factory, "__wrapped__", factory)
        code = getattr(inner, "__code__", None)
        defined_in = os.path.realpath(code.co_filename) if code is not None else None
        if call["module"] != "__main__" and defined_in != _program_file(call["module"])[0]:
            raise WarmupRefused(f"{where} is not a function {call['module']} defines")
        # a kernel factory defines the kernel it returns: a function that defines no function is
        # not one, whatever a plan calls it
        if code is None or not any(isinstance(c, types.CodeType) and not c.co_name.startswith("<") for c in code.co_consts):
            raise WarmupRefused(f"{where} defines no function: not a kernel factory")
        args, kwargs = [], {}
        for name, kind, tagged in call["args"]:
            value = _value(tagged, root)
            if kind == "pos":
                args.append(value)
            elif kind == "star":
                args.extend(value)
            elif kind == "kw" and _IDENTIFIER.match(name):
                kwargs[name] = value
            else:
                raise WarmupRefused(f"an argument {name!r} passed as {kind!r}")
        made.append(factory(*args, **kwargs))
    return made


def _objects(made):
    """Everything the factories returned, nested containers opened."""
    pending = list(made)
    while pending:
        obj = pending.pop()
        yield obj
        if isinstance(obj, (tuple, list)):
            pending.extend(obj)
        elif isinstance(obj, dict):
            pending.extend(obj.values())


def _module_named(name, made):
    """The Warp module `name` among what the factories returned, else in Warp's registry."""
    for obj in _objects(made):
        module = getattr(obj, "module", None)
        if getattr(module, "name", None) == name:
            return module
    context = sys.modules.get("warp._src.context") or sys.modules.get("warp.context")
    registry = getattr(context, "user_modules", None)
    if isinstance(registry, dict) and name in registry:
        return registry[name]
    raise LookupError(f"the factory calls made no module {name}: the program's code or its arguments moved on since it was measured")


def _generic_kernel(instance, target, made, module, root):
    """The generic kernel an instance belongs to: by name in its module, or (made by a factory) by
    Warp's key among what the factories made and in its Warp module."""
    if instance["kernel"]:
        return _resolve(instance["module"] or target["module"], instance["kernel"], root)
    for obj in _objects(made):
        if getattr(obj, "key", None) == instance["key"] and hasattr(obj, "module"):
            return obj
    kernel = (getattr(module, "kernels", None) or {}).get(instance["key"])
    if kernel is None:
        raise LookupError(f"no generic kernel {instance['key']} in module {module.name}")
    return kernel


def _loaded_hash(module, device, block_dim):
    """The hash Warp loaded the module under on this device and block_dim (feature-detected)."""
    try:
        dev = wp.get_device(device)
        found = [e for e in getattr(module, "execs", {}).values() if getattr(e, "device", None) == dev]
        exact = [e for e in found if getattr(e, "block_dim", None) == block_dim]
        chosen = exact or found
        if len(chosen) == 1 and isinstance(getattr(chosen[0], "module_hash", None), (bytes, bytearray)):
            return bytes(chosen[0].module_hash).hex()
    except Exception:
        pass
    return None


def _config_refused(key, value):
    """Why CONFIG's `key` = `value` is not set (CONFIG_RULES, the rule warp-probe wrote the file by):
    a key that does not change a module's identity, a value of another type or out of range, a
    compiler flag that is not a code-generation flag. None when it may be set."""
    rule = CONFIG_RULES["properties"].get(key) if isinstance(key, str) else None
    if rule is None:
        return "not a wp.config key that changes a module's identity"
    kinds = {"boolean": (bool,), "integer": (int,), "string": (str,), "null": (type(None),)}
    types = rule.get("type", [])
    types = [types] if isinstance(types, str) else types
    if types and not any(isinstance(value, kinds[t]) and not (t == "integer" and isinstance(value, bool)) for t in types):
        return f"a {type(value).__name__}, not {' or '.join(types)}"
    if "enum" in rule and value not in rule["enum"]:
        return f"{value!r} is none of {rule['enum']}"
    if isinstance(value, int) and not isinstance(value, bool) and not rule.get("minimum", value) <= value <= rule.get("maximum", value):
        return f"{value} is out of range"
    if isinstance(value, str) and len(value) > rule.get("maxLength", len(value)):
        return "too long"
    if key == "cpu_compiler_flags" and isinstance(value, str):
        words = value.split()
        while words:
            word = words.pop(0)
            flag = "-mllvm=" + words.pop(0) if word == "-mllvm" and words else word
            if not any(re.fullmatch(p, flag) for p in CONFIG_RULES["flag_patterns"]):
                return f"{flag!r} is not a code-generation flag"
    return None


def _prepare(root, paths):
    """A worker's set-up: the program's import paths and its wp.config values (those the rule
    allows), then Warp."""
    for path in [root, *paths]:
        if path not in sys.path:
            sys.path.insert(0 if path == root else len(sys.path), path)
    for key, value in CONFIG.items():
        why = _config_refused(key, value)
        if why is not None:
            print(f"warp warm-up: wp.config.{key} not set: {why}", file=sys.stderr)
            continue
        setattr(wp.config, key, value)
    wp.init()


def _outcome(index, error=None):
    """What the file did for one target: its identity as planned, whether it built, under which
    hash, and why not."""
    t = TARGETS[index]
    return {"target": index, "warp_module": t["warp_module"], "hash": t["hash"], "device": t["device"],
            "block_dim": t["block_dim"], "built": False, "built_hash": None, "error": error, "notes": []}


def _current_hash(module, block_dim):
    """The hash the module has now (its kernels as this process imported and registered them),
    computed without building; None where this Warp offers no way to ask."""
    get = getattr(module, "get_module_hash", None)
    try:
        value = get(block_dim) if get is not None else None
    except Exception:
        return None
    return bytes(value).hex() if isinstance(value, (bytes, bytearray)) else None


def _cache_folder(module, module_name, hash_hex, block_dim):
    """The name of Warp's cache folder for one identity: the module's own answer where this Warp
    has one (it knows options such as strip_hash), else Warp's naming, wp_<module>_<hash7>."""
    ask = getattr(module, "get_module_identifier", None)
    if ask is not None:
        try:
            name = ask(block_dim=block_dim)
            if isinstance(name, str) and name:
                return name
        except Exception:
            pass
    return f"wp_{module_name}_{hash_hex[:7]}"


def _whole_elf(path):
    """True when an ELF file (a CPU object, a cubin) holds the section table its header points at:
    a file cut short (a copy interrupted, a full disk) is not loadable and is rebuilt."""
    import struct

    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(64)
        if len(head) < 52 or head[:4] != b"\x7fELF":
            return False
        little = head[5] == 1
        if head[4] == 2:  # 64-bit
            if len(head) < 64:
                return False
            shoff, = struct.unpack_from("<Q" if little else ">Q", head, 0x28)
            shentsize, shnum = struct.unpack_from("<HH" if little else ">HH", head, 0x3A)
        else:
            shoff, = struct.unpack_from("<I" if little else ">I", head, 0x20)
            shentsize, shnum = struct.unpack_from("<HH" if little else ">HH", head, 0x2E)
        return shoff + shentsize * shnum <= size
    except (OSError, ValueError):
        return False


def _cache_entry(folder_name, device):
    """The cache folder when Warp would load from it: a binary this device can load (a CPU object;
    for CUDA a cubin of the device's architecture, or PTX) that is whole, and the module's .meta,
    the file Warp writes last, readable. None otherwise (the identity is then built again)."""
    folder = os.path.join(str(wp.config.kernel_cache_dir), folder_name)
    if not os.path.isdir(folder) or os.path.islink(folder):
        return None
    if device.startswith("cpu"):
        wanted = lambda name: name.endswith(".o")
    else:
        arch = getattr(wp.get_device(device), "arch", None)
        wanted = lambda name: name.endswith(".ptx") or (name.endswith(".cubin") and (arch is None or f".sm{arch}" in name))
    names = os.listdir(folder)
    binaries = [os.path.join(folder, n) for n in names if wanted(n) and os.path.isfile(os.path.join(folder, n))]
    whole = [b for b in binaries if (b.endswith(".ptx") and os.path.getsize(b) > 0) or (not b.endswith(".ptx") and _whole_elf(b))]
    meta = os.path.join(folder, folder_name + ".meta")
    try:
        with open(meta, encoding="utf-8") as f:
            json.load(f)
    except (OSError, ValueError):
        return None
    return folder if whole else None


def _remove_partial(module, target, device):
    """Removes this identity's cache folder when it holds a build cut short (a binary whose end is
    missing, no readable .meta: a cache restored in part, a full disk): Warp loads a folder whose
    binary exists without checking it and fails, so the folder goes and the identity builds again.
    Only a real folder of exactly the name Warp gives this identity. Returns its name, or None."""
    now = _current_hash(module, target["block_dim"])
    folder = _cache_folder(module, target["warp_module"], now, target["block_dim"]) if now else None
    path = os.path.join(str(wp.config.kernel_cache_dir), folder) if folder else None
    if not path or os.path.islink(path) or not os.path.isdir(path) or _cache_entry(folder, device):
        return None
    shutil.rmtree(path)
    return folder


def _build(index, root, device, arch, mode="build", calls=True):
    """Registers what one identity held (factory calls, generic instances, options) on its module
    in this process, loads it, and builds it ahead of time for `arch`. Returns its outcome.
    mode "missing": first computes the module's hash as importing gives it now and loads it only
    when the cache lacks that identity; "dry-run": computes and compares, builds nothing.
    calls=False (a dry run): a factory is never called, since a library's may launch what it
    makes; an identity only a factory makes is then said to be unknown, not computed."""
    target = TARGETS[index]
    outcome = _outcome(index)
    started = time.perf_counter()
    if target["factories"] and not calls:
        outcome["unknown"] = ("made by a factory: a dry run calls none (a factory may launch what it makes), so only "
                              "building tells its identity")
        outcome["seconds"] = 0.0
        return outcome
    try:
        made = _made_by_factories(target["factories"], root)
        if target["kernel"]:
            module = _resolve(target["module"], target["kernel"], root).module
        else:
            module = _module_named(target["warp_module"], made)
        for instance in target["instances"]:
            kernel = _generic_kernel(instance, target, made, module, root)
            wp.overload(kernel, [_type_of(t, root) for t in instance["types"]])
        changed = {
            key: value
            for key, value in OPTIONS[target["options"]].items()
            if module.options.get(key) is not None and module.options.get(key) != value
        }
        if changed:
            wp.set_module_options(changed, module=module)
        target_device = device if device and target["device"].startswith("cuda") else target["device"]
        if mode != "build":
            now = _current_hash(module, target["block_dim"])
            outcome["current_hash"] = now
            outcome["changed"] = bool(now and now != target["hash"])
            outcome["folder"] = _cache_folder(module, target["warp_module"], now, target["block_dim"]) if now else None
            entry = _cache_entry(outcome["folder"], target_device) if now else None
            if entry or mode == "dry-run":
                # in the cache already (nothing to build), or only asked what a build would be
                outcome["in_cache"] = entry is not None
                outcome["seconds"] = round(time.perf_counter() - started, 3)
                return outcome
        partial = _remove_partial(module, target, target_device)
        if partial:
            outcome["notes"].append(f"removed {partial}, a build cut short (Warp would fail to load it, not rebuild it)")
        wp.force_load(device=target_device, modules=[module], block_dim=target["block_dim"], max_workers=0)
    except Exception as error:  # the program's code moved on since it was measured, or a name was refused
        outcome["error"] = f"{type(error).__name__}: {error}"[:1000]
        outcome["seconds"] = round(time.perf_counter() - started, 3)
        return outcome
    outcome["built"] = True
    outcome["built_hash"] = _loaded_hash(module, target_device, target["block_dim"])
    outcome["seconds"] = round(time.perf_counter() - started, 3)
    if not arch or not target_device.startswith("cuda"):
        return outcome
    aot = getattr(wp, "compile_aot_module", None)
    if aot is None:
        outcome["notes"].append("this Warp has no wp.compile_aot_module: nothing built ahead of time for " + str(arch))
        return outcome
    # compile_aot_module builds at the module's own block_dim: lend it the measured one
    before = module.options.get("block_dim")
    try:
        wp.set_module_options({"block_dim": target["block_dim"]}, module=module)
        aot(module, device=target_device, arch=arch)
    except Exception as error:
        outcome["notes"].append(f"{module.name} ahead of time for {arch}: {type(error).__name__}: {error}")
    finally:
        wp.set_module_options({"block_dim": before}, module=module)
    return outcome


def _serve(root, paths, device, arch, mode="build", project=None):
    """A worker process: builds the targets whose numbers arrive on its standard input, one at a
    time, and answers each on its standard output in one JSON line; Warp's own messages go to
    standard error. `project`: the folder the parent found, whose files are the program's."""
    _PROJECT_FOUND[0] = project
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    _prepare(root, paths)
    answers.write(json.dumps({"ready": str(wp.config.kernel_cache_dir)}) + "\n")
    for line in sys.stdin:
        answers.write(json.dumps(_build(int(line), root, device, arch, mode, calls=mode != "dry-run")) + "\n")


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
        built = self.forms.get(target["warp_module"])
        return built is None or built == target["form"] or built in target["follows"]

    def send(self, index):
        self.target = index
        self.forms[TARGETS[index]["warp_module"]] = TARGETS[index]["form"]
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


def _describe(index):
    t = TARGETS[index]
    return _printable(f"{t['warp_module']} {t['hash'][:7]} on {t['device']}" + (f" block_dim {t['block_dim']}" if t["block_dim"] else ""))


def _check_here(found, paths, device, arch, mode, outcomes):
    """--missing and --dry-run run as a script: each target's hash computed and looked up in this
    process (one import of Warp and the program, not one per worker), as far as its module's forms
    allow (a form that does not follow the one this process holds is left to a worker). Fills
    `outcomes` with what is settled here; returns the targets left for the workers."""
    _prepare(found, paths)
    forms, left = {}, []
    for i, target in enumerate(TARGETS):
        held = forms.get(target["warp_module"])
        if held is not None and held != target["form"] and held not in target["follows"]:
            left.append(i)
            continue
        forms[target["warp_module"]] = target["form"]
        outcome = _build(i, found, device, arch, mode="dry-run", calls=mode != "dry-run")
        if outcome.get("in_cache") or (mode == "dry-run" and not outcome["error"]):
            outcomes[i] = outcome
        else:
            left.append(i)  # to build (--missing), or to try again in a fresh process
    return left


def _cuda_cache(device):
    """The CUDA cache a build for `device` reads and fills: since 12.9 NVRTC keeps its compilations
    there (the driver's compute cache, CUDA_CACHE_PATH), so a kept one turns a module's rebuild into
    a read-back. None for a CPU build. Says where it is, whether the path is the default (a CI job
    keeps it only when it saves that folder), its size (counted for at most 2 s and 200,000
    entries, never following a link) and the limit it is evicted at, and what is wrong with a path
    that is not a folder or a limit that is not a number."""
    import stat

    if not str(device).startswith("cuda"):
        return None
    off = os.environ.get("CUDA_CACHE_DISABLE", "0").strip() not in ("", "0")
    chosen = os.environ.get("CUDA_CACHE_PATH")
    path = chosen or os.path.join(os.path.expanduser("~"), ".nv", "ComputeCache")
    size, problem, partial = 0, None, False
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISDIR(mode):
            problem = "is not a folder (" + ("a FIFO" if stat.S_ISFIFO(mode) else "a link" if stat.S_ISLNK(mode)
                                            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a file") + ")"
    except FileNotFoundError:
        problem = None  # empty: NVRTC makes it at its first compilation
    except OSError as error:
        problem = f"cannot be read ({error.strerror or error})"
    if problem is None and os.path.isdir(path):
        deadline, entries = time.monotonic() + 2.0, 0
        for folder, dirs, files in os.walk(path, onerror=lambda error: None):
            entries += len(dirs) + len(files)
            if entries > 200_000 or time.monotonic() > deadline:
                partial = True
                break
            for name in files:
                try:
                    size += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    pass
    limit = os.environ.get("CUDA_CACHE_MAXSIZE", "").strip()
    limit_bytes = int(limit) if re.fullmatch(r"[0-9]{1,19}", limit) else None
    return {"path": path, "default_path": not chosen, "disabled": off, "bytes": size, "limit_bytes": limit_bytes,
            "counted_in_part": partial, "problem": problem,
            "limit_problem": None if not limit or limit_bytes is not None else "is not a number of bytes"}


def _cuda_cache_lines(info, mode):
    if info is None:
        return []
    if info["disabled"]:
        return ["the CUDA cache is off (CUDA_CACHE_DISABLE): NVRTC compiles every module built here in full, "
                "also one it compiled before"]
    if info.get("problem"):
        return [f"the CUDA cache {_printable(info['path'])} {info['problem']}: NVRTC cannot keep its compilations there; "
                "set CUDA_CACHE_PATH to a folder"]
    held = f"{'at least ' if info.get('counted_in_part') else ''}{info['bytes'] / 1e6:.1f} MB"
    limit = info["limit_bytes"]
    lines = []
    if mode == "prune":
        lines.append(f"the CUDA cache {info['path']} ({held}) is the driver's, keyed by what NVRTC compiled, not by "
                     "Warp module: --prune leaves it as it is; CUDA_CACHE_MAXSIZE bounds it")
    else:
        lines.append(f"NVRTC's cache {info['path']} holds {held}"
                     + (f" of CUDA_CACHE_MAXSIZE {limit / 1e6:.1f} MB" if limit else " (the driver's default limit)")
                     + ": a module built here that NVRTC compiled before (same source, driver and NVRTC) is read back")
    if info.get("limit_problem"):
        lines.append(f"CUDA_CACHE_MAXSIZE {_printable(os.environ.get('CUDA_CACHE_MAXSIZE', ''), 40)} "
                     f"{info['limit_problem']}: the driver's default limit applies")
    if info["default_path"]:
        lines.append("CUDA_CACHE_PATH is not set: a CI job keeps NVRTC's cache only if it sets it to a folder it saves "
                     "with Warp's cache (references/ci.md, section 1)")
    if limit and info["bytes"] >= 0.9 * limit:
        lines.append("the CUDA cache is within 10% of CUDA_CACHE_MAXSIZE: the driver evicts older entries to make room; "
                     "raise it (up to 4 GiB)")
    return lines


def _output_refused(path):
    """Why `path` is no place to write an output ("" when it is): a symbolic link, a device, a FIFO,
    a folder or another user's file at the name, or a folder that is not there (warp-probe's rule)."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "" if os.path.isdir(os.path.dirname(os.path.abspath(path))) else "its folder does not exist"
    except OSError as error:
        return error.strerror or str(error)
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link: the output is written as a file at the name, never through a link"
    if not stat.S_ISREG(st.st_mode):
        return "a device, a FIFO or a folder, not a file"
    if st.st_uid != os.geteuid():
        return "a file of another user"
    return ""


def _write_output(path, text):
    """`text` into a new file beside `path`, renamed over it: never written through a link or into a
    FIFO or a device (_output_refused), never seen half written."""
    import tempfile

    why = _output_refused(path)
    if why:
        raise OSError(f"{why}")
    fd, temp = tempfile.mkstemp(prefix=".results-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temp, path)
    except BaseException:
        os.unlink(temp)
        raise


def _log_result(result, notes, mode, workers, cache, log):
    """What warm_up() did, as lines of this file's (each plan text escaped)."""
    for line in notes + _cuda_cache_lines(result["cuda_cache"], mode):
        log("warp warm-up: " + _printable(line, 1000))
    if mode != "build":
        log(f"warp warm-up: {len(result['in_cache'])} of {len(TARGETS)} module identities are in the cache {cache} already")
    for i in result["would_build"]:
        o = result["outcomes"][i]
        why = "changed since it was measured" if o.get("changed") else "not in the cache"
        paid = [p for p in TARGETS[i]["tests"] if p]  # "" is outside any test: a program, not a suite
        log(f"warp warm-up: would build {_describe(i)} ({why})"
            + (f": paid by {', '.join(_printable(p, 200) for p in paid[:3])}{' and more' if len(paid) > 3 else ''} when measured"
               if paid else ""))
    for i in result["unknown"]:
        log(f"warp warm-up: unknown without building: {_describe(i)}: {result['outcomes'][i]['unknown']}")
    if mode == "dry-run":
        log(f"warp warm-up: a run would build {len(result['would_build'])} of {len(TARGETS)} module identities "
            f"(nothing was built, nothing called that launches; {result['wall_s']:.2f} s to find out)"
            + (f"; {len(result['unknown'])} more only a factory makes, unknown without building" if result["unknown"] else ""))
    else:
        log(f"warp warm-up: built {len(result['built'])} of {len(TARGETS)} module identities as measured in "
            f"{result['wall_s']:.2f} s ({workers} worker processes) into {cache}" if workers else
            f"warp warm-up: nothing to build: every module identity is in the cache {cache} ({result['wall_s']:.2f} s to "
            "find out, in this process)")
    for i in result["other"]:
        if mode == "missing":
            # the point of --missing: a kept cache after a change builds what the change invalidated
            log(f"warp warm-up: built {_describe(i)} as the code gives it now ({result['outcomes'][i]['built_hash'][:7]}): "
                "changed since it was measured")
        else:
            log(f"warp warm-up: built under another hash ({result['outcomes'][i]['built_hash'][:7]}): {_describe(i)}: the "
                "program's code, options or Warp changed since it was measured; measure it again and write this file again")
    for i, why in result["failed"]:
        log(f"warp warm-up: not built: {_describe(i)}: {_printable(why, 1000)}")


_AS_MEASURED = object()


def warm_up(workers=None, root=None, device=_AS_MEASURED, arch=None, log=print, mode="build", check_here=False,
            trust_plan=None):
    """Builds the identities above into Warp's kernel cache (wp.config.kernel_cache_dir, or
    WARP_CACHE_PATH) in up to `workers` processes at a time (default: WORKERS, at most the CPUs this
    process may use). A target that fails fails alone. Returns a dict: built (identities built as
    measured), other (built under another hash: the program or its environment changed), failed
    (target, why), outcomes (one per target), wall_s. mode "missing" builds only what the cache
    lacks (each identity's hash computed as importing gives it now, its cache entry looked up);
    "dry-run" builds nothing and says what a run of the program would build, and which tests
    paid for it when it was measured. check_here (the file run as a script with --missing or
    --dry-run): the hashes are computed in this process first, and workers start only for what is
    left to build; a program calling warm_up() keeps its own process as it is. trust_plan: see
    check_trust (a plan warp-probe wrote on this machine needs none)."""
    _ensure_plan()
    check_trust(trust_plan, log)
    if not TARGETS:
        # warp-probe writes this plan rather than no file, so that a CI step that runs the file
        # still runs: it says so, and leaves every build to the program
        count = MEASURED_IDENTITIES if isinstance(MEASURED_IDENTITIES, int) else "the"
        log(f"warp warm-up: this plan builds nothing: warp-probe warmup could build none of the {count} module "
            "identities the measured run built (the plan's measured.not_built says why for each); the program builds "
            "them itself when it runs")
        return {"built": [], "other": [], "failed": [], "in_cache": [], "unknown": [], "would_build": [], "outcomes": [],
                "wall_s": 0.0, "workers": 0, "root": None, "cache": None, "mode": mode, "cuda_cache": None}
    device = DEVICE if device is _AS_MEASURED else device
    arch = ARCH if arch is None else arch
    started = time.perf_counter()
    found, project = find_root(root)
    if found is None:
        raise FileNotFoundError(
            f"cannot find the program from here: no folder from {os.path.dirname(os.path.abspath(__file__))} or "
            f"{os.getcwd()} up, nor {PROJECT}, holds {os.path.join(IMPORT_ROOT, '')} with "
            f"{', '.join(ROOT_PACKAGES) or ENTRY_SCRIPT}; give --root, the folder the program imports its modules from")
    paths = _import_paths(project)
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    workers = max(1, min(workers or WORKERS, usable, len(TARGETS) or 1))
    env = dict(os.environ)
    chosen = getattr(wp.config, "kernel_cache_dir", None)
    if chosen:  # set by the program that calls warm_up(), or by wp.init()
        # Warp adds its version folder to WARP_CACHE_PATH: the workers get the folder above it, so
        # that they build into the program's cache, not into <cache>/<version>/<version>
        chosen = os.path.normpath(str(chosen))
        if os.path.basename(chosen) == str(getattr(wp.config, "version", "")):
            chosen = os.path.dirname(chosen)
        env["WARP_CACHE_PATH"] = chosen
    command = [sys.executable, os.path.abspath(__file__), "--serve",
               json.dumps([found, paths, device, list(arch or ()), mode, project]), "--plan", _PLAN_PATH[0],
               "--trust-plan=" + _PLAN_DIGEST[0]]
    events = queue.Queue()
    pending = list(range(len(TARGETS)))  # the longest modules first, each module's forms in order
    outcomes = {}
    crew, notes, cache = [], [], None
    if check_here and mode != "build":
        pending = _check_here(found, paths, device, arch, mode, outcomes)
        cache = str(wp.config.kernel_cache_dir)
        workers = min(workers, len(pending))  # none started when nothing is left to build
    try:
        crew = [_Worker(command, env, events) for _ in range(min(workers, len(pending)))]
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
                    for i in pending + ([worker.target] if worker.target is not None else []):
                        outcomes[i] = _outcome(i, f"no worker process started (exit code {code}): see the lines above")
                    pending.clear()
                elif worker.target is not None:
                    outcomes[worker.target] = _outcome(worker.target, f"its worker process ended (exit code {code})")
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
            outcomes[answer["target"]] = answer
            notes.extend(n for n in answer["notes"] if n not in notes)
    finally:
        for worker in crew:
            worker.stop()
    result = {"built": [], "other": [], "failed": [], "in_cache": [], "unknown": [], "would_build": [],
              "outcomes": [outcomes.get(i) for i in range(len(TARGETS))],
              "wall_s": round(time.perf_counter() - started, 3), "workers": workers, "root": found, "cache": cache,
              "mode": mode}
    for i, o in enumerate(result["outcomes"]):
        if o is None:
            o = result["outcomes"][i] = _outcome(i, "not built (the warm-up stopped first)")
        if o.get("in_cache"):
            result["in_cache"].append(i)
            continue
        if o.get("unknown"):
            result["unknown"].append(i)
            continue
        if mode == "dry-run" and not o["error"]:
            result["would_build"].append(i)
            continue
        if not o["built"]:
            result["failed"].append((i, o["error"] or "not built"))
        elif o["built_hash"] and o["built_hash"] != TARGETS[i]["hash"]:
            result["other"].append(i)
        else:
            result["built"].append(i)
    result["cuda_cache"] = _cuda_cache(device)
    _log_result(result, notes, mode, workers, cache, log)
    return result


def prune(dry_run=False, log=print, workers=None, root=None, trust_plan=None):
    """Removes the module folders of Warp's kernel cache (this Warp's version folder) that the code
    as it is now does not use: a cache kept between CI runs grows by every change's identities
    otherwise. The code's current identities are computed the way --dry-run computes them
    (importing, building nothing): a folder a change just built stays, the one it made stale goes.
    A module whose identity this file cannot compute (not in TARGETS, or not computable now) keeps
    all its folders. Only folders named as Warp names them (wp_...); with dry_run, lists them."""
    check_trust(trust_plan, log)
    now = warm_up(workers, root, mode="dry-run", log=lambda line: None, check_here=True, trust_plan=_PLAN_DIGEST[0])
    cache = str(wp.config.kernel_cache_dir)
    keep = {o["folder"] for o in now["outcomes"] if o and o.get("folder")}
    unknown = [i for i, o in enumerate(now["outcomes"]) if not (o and o.get("folder"))]
    if unknown:
        # an identity whose hash could not be computed now: its module's folders may be in use
        log(f"warp warm-up: {len(unknown)} identity(ies) could not be computed now; their modules' folders stay")
    # Only folders named exactly as Warp names a build of a module this file knows (wp_<module>_
    # <7 hex>): a folder of any other name in the cache is not this file's to remove.
    used = [(str(module), str(hash7)[:7]) for module, hash7 in USED]
    known = {t["warp_module"] for t in TARGETS} | {module for module, _ in used}
    stays = {TARGETS[i]["warp_module"] for i in unknown}
    # a module the file does not build (its identity is in USED, not in TARGETS) may have another
    # hash now that nothing here computes: its folders stay too
    planned = {(t["warp_module"], t["hash"][:7]) for t in TARGETS}
    stays |= {module for module, hash7 in used if (module, hash7) not in planned}
    warp_form = re.compile(r"wp_(.+)_[0-9a-f]{7}\Z")  # how Warp names a module's cache folder (_cache_folder)

    def owned(name):
        form = warp_form.match(name)
        path = os.path.join(cache, name)
        return (form is not None and form.group(1) in known and form.group(1) not in stays and name not in keep
                and os.path.isdir(path) and not os.path.islink(path))

    def size_of(folder):
        total = 0
        for d, _, files in os.walk(folder):
            for f in files:
                try:
                    total += os.lstat(os.path.join(d, f)).st_size  # a link (even a dangling one) is its own size
                except OSError:
                    pass
        return total

    try:
        entries = os.listdir(cache)
    except OSError as error:
        log(f"warp warm-up: cannot read the cache {cache}: {error}")
        return 1
    # the whole list is decided first, then removed
    unused = sorted(n for n in entries if owned(n))
    freed = sum(size_of(os.path.join(cache, n)) for n in unused)
    failed = []
    if not dry_run:
        for name in unused:
            problems = []
            shutil.rmtree(os.path.join(cache, name), onerror=lambda fn, path, info: problems.append(f"{path}: {info[1]}"))
            if problems:
                failed.append(f"{name} ({problems[0]})")
    kept = len(keep & set(entries))
    log(f"warp warm-up: {'would remove' if dry_run else 'removed'} {len(unused) - len(failed)} module folder(s) the code as "
        f"it is now does not use ({freed / 1e6:.1f} MB) from {cache}; {kept} in use stay; only folders named as Warp "
        f"names a build of the program's modules are touched")
    for name in unused[:20]:
        log(f"warp warm-up:   {_printable(name)}")
    if len(unused) > 20:
        log(f"warp warm-up:   and {len(unused) - 20} more")
    for line in failed:
        log(f"warp warm-up: could not remove {_printable(line, 1000)}")
    for line in _cuda_cache_lines(_cuda_cache(DEVICE), "prune"):
        log("warp warm-up: " + _printable(line, 1000))
    return 1 if failed else 0


def _main():
    parser = argparse.ArgumentParser(description="Build the measured Warp modules into the kernel cache.")
    parser.add_argument("--workers", type=int, default=None,
                        help="builds at a time (default: the plan's workers, at most the CPUs this process may use)")
    parser.add_argument("--root", help="the folder the program's modules are imported from (default: found from this "
                                       "file's folder, the current folder, then the measured project's)")
    parser.add_argument("--plan", help="the plan to build (default: the .json beside this file, of its name)")
    parser.add_argument("--device", default=_AS_MEASURED, help="build for this CUDA device instead of the measured one")
    parser.add_argument("--arch", type=int, action="append", help="also build ahead of time for this CUDA architecture")
    parser.add_argument("--results", help="write what each target did as JSON to this file")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target was not built as measured")
    parser.add_argument("--missing", action="store_true",
                        help="build only what the cache lacks: each identity's hash as importing gives it now, looked up "
                             "in the cache (a kept CI cache after a change: only what the change invalidated builds)")
    parser.add_argument("--dry-run", action="store_true",
                        help="build nothing: say which identities a run would build (changed, or not in the cache) and "
                             "which tests paid for them when measured")
    parser.add_argument("--prune", action="store_true",
                        help="remove from the cache the module folders the code as it is now does not use (a module the file "
                             "cannot compute keeps its folders), and exit (with --dry-run: list them)")
    parser.add_argument("--trust-plan", nargs="?", const=True, default=None, metavar="SHA256",
                        help="build a plan warp-probe did not write on this machine (its ledger does not list it): as it "
                             "is, or only the plan of this SHA-256; without it such a plan is shown, not built")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # a worker process of warm_up(): [root, paths, device, arch]
    args = parser.parse_args()
    if args.results:
        why = _output_refused(args.results)
        if why:  # refused before anything is built
            print(f"warp warm-up: the results could not be written to {_printable(args.results)}: {why}; nothing was built",
                  file=sys.stderr)
            sys.exit(2)
    load_plan(args.plan)
    try:
        if args.serve:
            check_trust(args.trust_plan, lambda line: print(line, file=sys.stderr))  # the digest the parent read
            _serve(*json.loads(args.serve))
            sys.exit(0)
        if args.prune:
            sys.exit(prune(dry_run=args.dry_run, workers=args.workers, root=args.root, trust_plan=args.trust_plan))
        mode = "dry-run" if args.dry_run else "missing" if args.missing else "build"
        result = warm_up(args.workers, args.root, args.device, args.arch or None, mode=mode, check_here=True,
                         trust_plan=args.trust_plan)
    except PlanNotTrusted as refused:
        print(refused, file=sys.stderr)
        sys.exit(3)
    except FileNotFoundError as error:
        print(f"warp warm-up: {_printable(error)}", file=sys.stderr)
        sys.exit(2)
    if args.results:
        try:
            _write_output(args.results, json.dumps({"contract": PLAN_CONTRACT, **{k: v for k, v in result.items()}}))
        except OSError as error:
            # the builds are done and in the cache; only what they were could not be written
            print(f"warp warm-up: the builds are in the cache, but the results could not be written to "
                  f"{_printable(args.results)}: {_printable(error.strerror or error)}", file=sys.stderr)
            sys.exit(2)
    # --strict: each target as measured; with --missing a changed one built as the code is now is the aim
    changed_is_fine = mode == "missing"
    sys.exit(1 if args.strict and (result["failed"] or (result["other"] and not changed_is_fine)) else 0)


if __name__ == "__main__":
    _main()
