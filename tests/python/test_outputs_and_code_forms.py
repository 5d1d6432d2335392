"""What reaches a file and what reaches generated code, against hostile input (no Warp run).

Outputs: every file warp-probe writes is written as a file: beside its name and renamed over it,
only where the name is free or a regular file of the user's; a symbolic link, a device, a FIFO
(with or without a reader), a folder or another user's file at the name is refused at once (73)
and left as it was; standard output that cannot be written (a full disk) is exit 74, not 0
behind a truncated output.

Code forms: the fixer is run directly on requests carrying report text in every field that
reaches generated code (module names, option keys, kernel names, types, comments). The patched
file parsed with `ast` holds only the statements the code form intends, or the fix is refused
with why; a FIFO or an oversized source is refused without losing the other fixes."""

import ast
import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import PROBE, ROOT

FIXER = ROOT / "runtime" / "fixer" / "xwarp_fix.py"
REPORT = ROOT / "tests" / "fixtures" / "gpu-nvrtc-trace-report.json"


@pytest.mark.quick
def test_an_output_is_written_as_a_file_never_through_a_link_a_fifo_or_a_device(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = {}

    def read():  # a reader waiting on the FIFO: still nothing is written into it
        with open(fifo, "rb") as f:
            got["data"] = f.read()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    (tmp_path / "to-victim").symlink_to(victim)
    (tmp_path / "to-null").symlink_to("/dev/null")
    (tmp_path / "to-stdout").symlink_to("/proc/self/fd/1")
    (tmp_path / "folder").mkdir()
    cases = {"to-victim": "a symbolic link", "to-null": "a symbolic link", "to-stdout": "a symbolic link",
             "pipe": "a FIFO", "folder": "a folder", "no-such-folder/out": "does not exist"}
    for name, said in cases.items():
        for fmt in ("json", "text", "html"):
            with open(tmp_path / "stdout.txt", "w") as out:  # standard output a file, as root's cron job has it
                proc = subprocess.run([str(PROBE), "report", str(REPORT), "--format", fmt, "-o", str(tmp_path / name)],
                                      stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
            assert proc.returncode == 73 and said in proc.stderr, (name, fmt, proc.stderr)
    proc = subprocess.run([str(PROBE), "report", str(REPORT), "--format", "json", "-o", "/dev/null"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 73 and "a device, not a file" in proc.stderr, proc.stderr
    assert victim.read_text() == "precious\n" and (tmp_path / "stdout.txt").read_text() == ""
    assert [os.readlink(tmp_path / n) for n in ("to-victim", "to-null", "to-stdout")] == [
        str(victim), "/dev/null", "/proc/self/fd/1"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    with open(fifo, "wb"):
        pass  # the reader ends
    reader.join(10)
    assert got.get("data") == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "pipe", "stdout.txt", "to-null", "to-stdout",
                                                         "to-victim", "victim.txt"]
    # a regular file of this user is replaced whole
    mine = tmp_path / "out.json"
    mine.write_text("old")
    proc = subprocess.run([str(PROBE), "report", str(REPORT), "--format", "json", "-o", str(mine)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(mine.read_text())["tool"] == "warp-probe", proc.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="another user's file is written over only by root")
def test_as_root_another_users_file_and_the_warm_up_on_dev_null_are_refused(tmp_path):
    theirs = tmp_path / "theirs.json"
    theirs.write_text("theirs\n")
    os.chown(theirs, 65534, 65534)
    proc = subprocess.run([str(PROBE), "report", str(REPORT), "--format", "json", "-o", str(theirs)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 73 and "a file of another user" in proc.stderr, proc.stderr
    assert theirs.read_text() == "theirs\n" and theirs.stat().st_uid == 65534
    # the warm-up writes two files: neither when the first name is a device
    before = set(os.listdir("/dev"))
    proc = subprocess.run([str(PROBE), "warmup", str(REPORT), "-o", "/dev/null", "--history", "off", "-q"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 73 and "a device, not a file" in proc.stderr, proc.stdout + proc.stderr
    assert set(os.listdir("/dev")) == before and stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.quick
@pytest.mark.parametrize("args", [["mechanisms"], ["mechanisms", "--json"], ["report", str(REPORT)],
                                  ["report", str(REPORT), "--format", "json"]])
def test_standard_output_on_a_full_disk_is_exit_74(args):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([str(PROBE), *args], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 74 and "cannot write standard output" in proc.stderr, (proc.returncode, proc.stderr)


# -- the fixer on hostile report text --------------------------------------------------------

PROGRAM = '''"""A program."""
import warp as wp


def make(module="unique"):
    @wp.kernel(module=module)
    def k(a: wp.array(dtype=float)):
        a[wp.tid()] = 1.0

    return k


@wp.kernel
def g(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0


wp.config.cache_kernels = False
x = wp.zeros(4, dtype=float)
wp.launch(make(), dim=4, inputs=[x])
'''

PAYLOADS = [
    'x")\nimport os; os.system("id")  #',
    "x\nimport os",
    "__import__('os').system('id')",
    "a.b; import os",
    "k\u202e",
    "k\x1b[2J",
    "wp.config.mode = 'debug'\n",
    "\ud83d\ude80",
    "",
    "1abc",
]


def run_fixer(tmp_path, fixes, files=None):
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "app.py").write_text(PROGRAM)
    for name, text in (files or {}).items():
        (project / name).write_text(text)
    request = {"protocol": 2, "root": str(project), "entry": str(project / "app.py"), "kernel_modules": [],
               "launch_sites": [], "fixes": fixes}
    (tmp_path / "request.json").write_text(json.dumps(request))
    proc = subprocess.run([sys.executable, str(FIXER), str(tmp_path / "request.json"), str(tmp_path / "response.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return {f["id"]: f for f in json.loads((tmp_path / "response.json").read_text())["fixes"]}, project


def statements_added(patch):
    """The added lines of a patch as Python statements (each parsed alone, dedented)."""
    out = []
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            code = line[1:].strip()
            if code:
                out.extend(ast.parse(code).body)
    return out


def hostile_fixes(payload, project):
    app = str(project / "app.py")
    return [
        {"id": "config", "ops": [{"op": "config_at_entry", "key": payload, "value": False, "why": payload}]},
        {"id": "config-why", "ops": [{"op": "config_at_entry", "key": "enable_backward", "value": False, "why": payload}]},
        {"id": "options", "ops": [{"op": "module_options", "file": app, "options": {payload: True}}]},
        {"id": "option-value", "ops": [{"op": "module_options", "file": app, "options": {"mode": payload}}]},
        {"id": "named", "ops": [{"op": "named_module", "name": payload, "places": [{"file": app, "line": 5}]}]},
        {"id": "preload", "ops": [{"op": "preload", "workers": 2,
                                    "groups": [{"device": "cpu", "block_dim": 1, "modules": [payload]}]}]},
        {"id": "preload-device", "ops": [{"op": "preload", "workers": 2,
                                           "groups": [{"device": payload, "block_dim": 1, "modules": ["m"]}]}]},
        {"id": "overloads", "ops": [{"op": "overloads", "file": app, "kernel": "g",
                                      "instances": [[{"array": payload, "dtype": {"type": "float32"}, "ndim": 1}],
                                                    [{"array": "array", "dtype": {"type": payload}, "ndim": 1}],
                                                    [{"array": "array", "dtype": {"type": "float32"}, "ndim": payload}]]}]},
        {"id": "remove", "ops": [{"op": "remove_statements", "places": [{"file": app, "line": 18, "what": payload}]}]},
    ]


ALLOWED = {
    # each code form's statements: an import of warp, a wp.config assignment, a call of one of
    # Warp's functions, a module's default renamed in place (the line keeps its def), pass
    "config": {"Import", "Assign"}, "config-why": {"Import", "Assign"}, "options": {"Import", "Expr"},
    "option-value": {"Import", "Expr"}, "named": set(), "preload": {"Expr"}, "preload-device": {"Expr"},
    "overloads": {"Expr"}, "remove": {"Pass"},
}


@pytest.mark.parametrize("payload", PAYLOADS, ids=[repr(p)[:20] for p in PAYLOADS])
def test_report_text_never_becomes_a_statement_of_its_own(tmp_path, payload):
    _, project = run_fixer(tmp_path, [])
    answers, _ = run_fixer(tmp_path, hostile_fixes(payload, project))
    for fix_id, answer in answers.items():
        patch = answer.get("patch", "")
        assert all(0x20 <= ord(c) < 0x7F or c in "\n\t" for c in patch), (fix_id, patch)
        if not patch:
            assert answer.get("reason"), answer
            continue
        # (named rewrites the def line's default in place: checked on the whole file below)
        for stmt in statements_added(patch) if fix_id != "named" else ():
            assert type(stmt).__name__ in ALLOWED[fix_id], (fix_id, ast.dump(stmt))
            if isinstance(stmt, ast.Expr):
                assert isinstance(stmt.value, ast.Call), (fix_id, ast.unparse(stmt))
                assert ast.unparse(stmt.value.func).startswith("wp."), (fix_id, ast.unparse(stmt))
            if isinstance(stmt, ast.Assign):
                assert ast.unparse(stmt.targets[0]).startswith("wp.config."), (fix_id, ast.unparse(stmt))
                assert isinstance(stmt.value, ast.Constant), (fix_id, ast.unparse(stmt))
        # the whole patched file still parses, and nothing the payload said runs as code
        patched = apply_patch(project, patch, tmp_path)
        tree = ast.parse(patched)
        assert len(tree.body) == len(ast.parse(PROGRAM).body) + len(statements_added(patch) if fix_id != "named" else ()) \
            - (1 if fix_id == "remove" else 0), (fix_id, patched)
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        assert "os" not in names and "__import__" not in names, (fix_id, patched)


def apply_patch(project, patch, tmp_path):
    copy = tmp_path / "copy"
    subprocess.run(["rm", "-rf", str(copy)], check=True)
    subprocess.run(["cp", "-r", str(project), str(copy)], check=True)
    proc = subprocess.run(["patch", "-p1", "--quiet"], input=patch, cwd=copy, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return (copy / "app.py").read_text()


def test_a_fifo_or_an_oversized_source_is_refused_and_the_other_fixes_are_kept(tmp_path):
    _, project = run_fixer(tmp_path, [])
    os.mkfifo(project / "pipe.py")
    (project / "huge.py").write_text("x = 1\n" * 1_000_000)  # 6 MB
    fixes = [
        {"id": "fifo", "ops": [{"op": "module_options", "file": str(project / "pipe.py"), "options": {"fast_math": True}}]},
        {"id": "huge", "ops": [{"op": "module_options", "file": str(project / "huge.py"), "options": {"fast_math": True}}]},
        {"id": "good", "ops": [{"op": "module_options", "file": str(project / "app.py"), "options": {"fast_math": True}}]},
    ]
    answers, _ = run_fixer(tmp_path, fixes)
    assert "not a regular file" in answers["fifo"]["reason"]
    assert "KiB" in answers["huge"]["reason"]
    assert "set_module_options({'fast_math': True})" in answers["good"]["patch"]


WARMUP_HARNESS = """
import hashlib, os, sys
body = {"__name__": "warmup_body"}  # the runtime as a module, not run as a script
exec(compile(open(sys.argv[1]).read(), "warmup_body", "exec"), body)
code = sys.stdin.read().encode()
with open(os.path.join(sys.argv[2], "plan_cell.py"), "wb") as f:  # as warp-probe writes a cell's code beside its plan
    f.write(code)
body["_PLAN_PATH"][0] = os.path.join(sys.argv[2], "plan.json")
body.update(CELL=hashlib.sha256(code).hexdigest(), IMPORT_ROOT=".")  # as a plan of a cell sets them
ns = body["_entry_definitions"](sys.argv[2])
print("defined", sorted(k for k in vars(ns) if not k.startswith("__")))
"""


def test_the_warmup_keeps_a_cells_definitions_and_runs_none_of_its_calls(tmp_path, venv_python):
    """A notebook cell (or script) travels beside the warm-up's plan; only its definitions run there:
    imports, defs, constants made of literals and Warp's constructors. A call of anything else,
    in an assignment or alone, is the program's work and never runs."""
    marker = tmp_path / "ran"
    cell = "\n".join([
        "import os",
        "import warp as wp",
        "N = 4",
        "SCALE = wp.constant(2.0)",
        "AXIS = wp.vec3(1.0, 0.0, 0.0)",
        "SIZES = (N, 2 * N)",
        "FIRST = SIZES[0]",
        f"handle = open({str(marker)!r}, 'w')",
        f"os.system('touch {marker}')",
        f"pathlib_touch = __import__('pathlib').Path({str(marker)!r}).touch()",
        "label = '\U0001f680'",
        "@wp.kernel",
        "def k(a: wp.array(dtype=float)):",
        "    a[wp.tid()] = SCALE",
    ])
    harness = tmp_path / "harness.py"
    harness.write_text(WARMUP_HARNESS)
    proc = subprocess.run([str(venv_python), str(harness), str(ROOT / "runtime" / "warmup" / "warmup_body.py"), str(tmp_path)],
                          input=cell, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not marker.exists(), "the warm-up ran a call of the cell"
    # references/cli.md's rules: Warp's import and literal constants stay; `import os` (not a pure
    # standard module) and values built from other names (a tuple of them, a subscript) are left
    # out, the first of them named, and every call
    assert "defined ['AXIS', 'N', 'SCALE', 'k', 'label', 'wp']" in proc.stdout, proc.stdout
    assert "left out line 1 of the command's script: an import of os" in proc.stderr, proc.stderr
    assert "left out line 6 of the command's script: a value that is not a constant of literals" in proc.stderr
