"""Whose code it is, by where a file comes from (real Warp on the CPU, the real CLI): the user's
project is the command's entry's tree (the nearest pyproject.toml, setup.cfg, setup.py or
version-control root above it), the current directory's and the editable installs'; an
installed distribution's files are the ones its RECORD lists, wherever it lies. Each layout a user
runs is measured as it is run, and each finding's owner, fix's patch and the warm-up's coverage
follow from the owner, not from the folder the probe started in."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, TARGETS, VENV_PYTHON, run_ok, validate_report

OWNED = TARGETS / "owned"  # pyproject.toml, sim.py and src/simpkg/ (python -m simpkg)
SITE = Path(subprocess.run([str(VENV_PYTHON), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           capture_output=True, text=True, check=True).stdout.strip())


@pytest.fixture
def layout(tmp_path):
    """A copy of the project, a folder outside it, and the probe run from any folder."""
    project = tmp_path / "my proj"  # a space: a path is a path, never two words
    shutil.copytree(OWNED, project, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    temp = tmp_path / "probe-tmp"
    temp.mkdir()

    class Layout:
        root = project
        outside = elsewhere
        env = dict(os.environ, TMPDIR=str(temp))

        def probe(self, *args, cwd, env=None, timeout=600):
            return subprocess.run([str(PROBE), *[str(a) for a in args]], capture_output=True, text=True, cwd=cwd,
                                  env=dict(self.env, **(env or {})), timeout=timeout)

        def measure(self, *command, cwd, env=None, name="run"):
            out = tmp_path / f"{name}.json"
            done = self.probe("measure", "--samples", "1", "--json", out, "--", *command, cwd=cwd, env=env)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
            report = json.loads(out.read_text())
            validate_report(report)
            return out, report, done.stdout

        def fix(self, report_path, name="fix"):
            out = tmp_path / f"{name}.json"
            patches = tmp_path / f"{name}-patches"
            done = self.probe("fix", report_path, "--out", patches, "--json", out, cwd=self.outside)
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
            return json.loads(out.read_text())["fixes"]

    return Layout()


def finding(report, mechanism):
    (found,) = [f for f in report["findings"] if f["mechanism"] == mechanism]
    return found


def assert_the_users(report, text, file, root):
    """CS-1 located in `file` is the user's project's, with the root that decided it."""
    cs1 = finding(report, "CS-1")
    assert os.path.normpath(cs1["location"]["file"]) == str(file), cs1["location"]
    assert cs1["owner"]["kind"] == "project" and cs1["owner"]["evidence"].startswith(str(root)), cs1["owner"]
    assert cs1["library"] is False and "library code" not in cs1["recommendation"]
    assert report["ownership"]["project"][0]["path"] == str(root), report["ownership"]["project"]
    assert "[library code]" not in text and f"whose:    your project ({root}, " in text


def assert_patched(fixes, file_name):
    (cs1,) = [f for f in fixes if f["mechanism"] == "CS-1"]
    assert cs1["verdict"] == "not-verified" and cs1["patch"], cs1
    assert any(Path(f).name == file_name for f in cs1["files"]), cs1["files"]


@pytest.mark.quick
def test_a_script_run_by_its_path_from_another_folder_is_the_users_and_fix_patches_it(layout):
    path, report, text = layout.measure(VENV_PYTHON, layout.root / "sim.py", cwd=layout.outside)
    assert_the_users(report, text, layout.root / "sim.py", layout.root)
    assert "pyproject.toml above the command's entry" in report["ownership"]["project"][0]["why"]
    # the folder the probe started in is the user's too, and named as such
    assert {"path": str(layout.outside), "why": "the current directory"} in report["ownership"]["project"]
    assert_patched(layout.fix(path), "sim.py")


def test_cd_build_then_python_dot_dot_sim(layout):
    build = layout.root / "build"
    build.mkdir()
    path, report, text = layout.measure(VENV_PYTHON, "../sim.py", cwd=build)
    assert_the_users(report, text, layout.root / "sim.py", layout.root)
    assert_patched(layout.fix(path), "sim.py")


def test_python_m_a_package_from_src(layout):
    path, report, text = layout.measure(VENV_PYTHON, "-m", "simpkg", cwd=layout.root / "src")
    assert_the_users(report, text, layout.root / "src" / "simpkg" / "kern.py", layout.root)
    assert_patched(layout.fix(path), "kern.py")


def test_an_editable_install_run_from_elsewhere_is_the_users(layout, tmp_path):
    # a venv of its own whose only package is the project, installed with pip install -e; Warp
    # and numpy come from the suite's venv through a .pth (what a conda env layering does)
    venv = tmp_path / "venv"
    run_ok(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv])  # Debian's setuptools and wheel build it
    python = venv / "bin" / "python3"
    site = Path(run_ok([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    (site / "suite_warp.pth").write_text(str(SITE) + "\n")
    run_ok([python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--no-index", "-e", layout.root],
           env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    path, report, text = layout.measure(python, "-m", "simpkg", cwd=layout.outside)
    assert_the_users(report, text, layout.root / "src" / "simpkg" / "kern.py", layout.root)
    # the install points back at the user's tree (its .pth adds src/; direct_url.json names the
    # project, which the entry's pyproject.toml found first)
    editable = [r for r in report["ownership"]["project"] if "editable install" in r["why"]]
    assert editable and editable[0]["path"] == str(layout.root / "src"), report["ownership"]["project"]
    assert_patched(layout.fix(path), "kern.py")


@pytest.fixture
def target_site(tmp_path):
    """Warp and numpy laid out as `pip install --target SITE` lays them out (each package's folder
    and its .dist-info with its RECORD side by side), hard-linked from the suite's venv."""
    site = tmp_path / "site"
    site.mkdir()
    for entry in SITE.iterdir():
        if entry.name.split("-")[0] in ("warp", "warp_lang", "numpy", "numpy.libs"):
            if subprocess.run(["cp", "-al", str(entry), str(site / entry.name)], capture_output=True).returncode != 0:
                shutil.copytree(entry, site / entry.name, symlinks=True)
    return site


def test_warps_own_tests_from_a_pip_target_folder_are_warps_and_the_warm_up_covers_them(layout, target_site):
    # Debian's own Python, with Warp only on PYTHONPATH (Docker images, Bazel and Nix lay it out so)
    env = {"PYTHONPATH": str(target_site), "XWARP_HISTORY": str(layout.outside / "history.sqlite3")}
    command = ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "warp.tests.test_intersect",
               "warp.tests.test_vec_lite", "-k", "TestIntersect or TestVecLite"]
    path, report, _ = layout.measure(*command, cwd=layout.outside, env=env)
    files = {f["file"]: f for f in report["ownership"]["files"]}
    test_file = str(target_site / "warp" / "tests" / "test_intersect.py")
    assert files[test_file]["kind"] == "warp" and files[test_file]["version"] == "1.19.0", files[test_file]
    pytest_main = next(f for name, f in files.items() if name.endswith("pytest/__main__.py"))
    assert pytest_main["kind"] == "installed" and pytest_main["distribution"] == "pytest", pytest_main
    for f in report["findings"]:
        if f.get("owner"):
            assert f["owner"]["kind"] == "warp" and f["library"], f
    # the warm-up imports Warp's test modules as an installed distribution's: it covers both
    plan = layout.outside / "plan.json"
    done = layout.probe("warmup", path, "-o", layout.outside / "warp_warmup.py", "--json", plan, "--verify",
                        "--samples", "1", cwd=layout.outside, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    checked = json.loads(plan.read_text())
    assert [t["covered"] for t in checked["targets"]] == [True, True], checked["targets"]
    assert "the file built 2 of its 2 identities as measured" in done.stdout, done.stdout


def test_a_module_in_no_distribution_and_outside_the_project_is_refused_by_the_warm_up(layout, tmp_path):
    # kernels imported from a folder on PYTHONPATH that no distribution installed and no project holds
    lib = tmp_path / "stray"
    lib.mkdir()
    (lib / "straykern.py").write_text((OWNED / "src" / "simpkg" / "kern.py").read_text())
    (layout.root / "use_stray.py").write_text(
        "import warp as wp\nfrom straykern import run\n\n\n@wp.kernel\ndef own(a: wp.array(dtype=float)):\n"
        "    a[wp.tid()] = 1.0\n\n\nwp.launch(own, dim=4, inputs=[wp.zeros(4, dtype=float)])\nrun()\n")
    env = {"PYTHONPATH": str(lib), "XWARP_HISTORY": str(layout.outside / "history.sqlite3")}
    path, report, text = layout.measure(VENV_PYTHON, layout.root / "use_stray.py", cwd=layout.root, env=env)
    cs1 = finding(report, "CS-1")
    assert cs1["owner"]["kind"] == "elsewhere" and not cs1["library"], cs1["owner"]
    assert "is not in an installed package and not in this project" in cs1["recommendation"]
    assert "whose:    not in an installed package and not in this project (not under the project (" in text
    (cs1_fix,) = [f for f in layout.fix(path) if f["mechanism"] == "CS-1"]
    assert cs1_fix["verdict"] == "no-patch" and "not in an installed package and not in this project" in cs1_fix["reason"]
    plan = layout.outside / "plan.json"
    script = layout.outside / "warp_warmup.py"
    done = layout.probe("warmup", path, "-o", script, "--json", plan, cwd=layout.root, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    stray = [t for t in json.loads(plan.read_text())["targets"] if t["module"] == "straykern"]
    assert stray and all(not t["covered"] and "not in an installed package and not in this project" in t["why_not"]
                         for t in stray), stray
    # the runtime refuses it too, whatever a plan says: the two checks it made, and where it looked
    check = ("import sys, warp_warmup as w\n"
             "w.load_plan(sys.argv[1]); w.PACKAGES.append('straykern'); w._PROJECT_FOUND[0] = sys.argv[2]\n"
             "try:\n    w._program_file('straykern')\nexcept w.WarmupRefused as e:\n    print('REFUSED', e)\n")
    refused = run_ok([VENV_PYTHON, "-c", check, script.with_suffix(".json"), layout.root], cwd=layout.outside,
                     env=dict(os.environ, PYTHONPATH=f"{layout.outside}:{lib}"))
    assert "REFUSED module straykern" in refused.stdout, refused.stdout
    assert f"neither in the project ({layout.root}) nor listed by an installed distribution's RECORD" in refused.stdout


def run_in_kernel(cells, folder, errors=None):
    """The cells as a notebook in `folder`, executed by the xwarp kernel over the real protocol;
    what they printed. `errors`: a list that collects the cells' errors (else one fails the test)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    from conftest import BUILD, execute_notebook

    os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
    nb = new_notebook(cells=[new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "xwarp", "display_name": "xwarp", "language": "python"}
    execute_notebook(nb, "xwarp", folder, timeout=600, allow_errors=errors is not None)
    text = []
    for n, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error" and errors is None:
                raise AssertionError(f"a cell failed: {out['ename']}: {out['evalue']}")
            if out.get("output_type") == "error":
                errors.append((n, out["ename"], out["evalue"]))
            if out.get("output_type") == "stream":
                text.append(out["text"])
    return "".join(text)


OWNERS_CELL = ('import json\nprint("OWNERS", json.dumps([[f["mechanism"], os.path.normpath(f["location"]["file"]), '
               'f["owner"]["kind"]] for f in r["findings"] if f.get("owner")]))')


def owners_printed(text):
    (line,) = [l for l in text.splitlines() if l.startswith("OWNERS ")]
    return json.loads(line[len("OWNERS "):])


def test_a_notebook_in_notebooks_probing_a_script_in_dot_dot_src(layout):
    (layout.root / "src" / "sim.py").write_text((layout.root / "sim.py").read_text())
    notebooks = layout.root / "notebooks"
    notebooks.mkdir()
    text = run_in_kernel(["import os, shlex, sys",
                          'get_ipython().run_line_magic("warp_probe", f"--samples 1 -o r -- {shlex.quote(sys.executable)} '
                          '../src/sim.py")',
                          OWNERS_CELL], notebooks)
    assert ["CS-1", str(layout.root / "src" / "sim.py"), "project"] in owners_printed(text), text[-2000:]


@pytest.mark.parametrize("named", [True, False], ids=["a program named by its path", "the stand-in"])
def test_the_own_program_lesson_calls_a_program_of_yours_yours(layout, named, tmp_path):
    import nbformat

    lesson = nbformat.read(ROOT / "notebooks" / "own_script.ipynb", as_version=4)
    cells = [c.source for c in lesson.cells if c.cell_type == "code"]
    program = layout.root / "sim.py"  # in "my proj", outside the notebook's folder
    if named:
        assert 'PROGRAM = ""' in cells[0]
        cells[0] = cells[0].replace('PROGRAM = ""', f"PROGRAM = {str(program)!r}", 1)
    folder = tmp_path / "lesson"
    folder.mkdir()
    assert "shutil.rmtree(stand_in)" in cells[-1]  # the stand-in's folder goes with the lesson's last cell
    load_lines = next(c for c in cells if 'cold.get("module_loads", [])' in c)  # Warp's shape, from the recorder
    text = run_in_kernel([*cells[:2], OWNERS_CELL.replace("r[", "mine["), load_lines, cells[-1]], folder)
    printed = re.findall(r"^Module (\S+) [0-9a-f]{7} load on device 'cpu' took [\d.]+ ms \((compiled|cached)\)$", text, re.M)
    assert len(printed) >= 2 and all(status == "compiled" for _, status in printed), text[-3000:]  # CS-1: two builds
    owners = owners_printed(text)
    assert owners and all(kind == "project" for _, _, kind in owners), owners
    if named:
        assert ["CS-1", str(program), "project"] in owners, owners
    assert "library" not in text


def test_the_own_program_lesson_ends_on_a_program_that_never_ends_and_its_later_cells_say_so(tmp_path):
    """own_script with a FIFO as the program (python waits on it for ever): the probe cell ends at
    its --timeout and says so; the cells after it say there is nothing to show, never a TypeError."""
    import nbformat

    lesson = nbformat.read(ROOT / "notebooks" / "own_script.ipynb", as_version=4)
    cells = [c.source for c in lesson.cells if c.cell_type == "code"]
    fifo = tmp_path / "never ends.py"
    os.mkfifo(fifo)
    cells[0] = cells[0].replace('PROGRAM = ""', f"PROGRAM = {str(fifo)!r}", 1)
    assert "--timeout 600" in cells[1] and "--timeout 600" in cells[-2]
    cells = [c.replace("--timeout 600", "--timeout 5") for c in cells]
    folder = tmp_path / "lesson"
    folder.mkdir()
    errors = []
    text = run_in_kernel(cells, folder, errors)
    assert [n for n, _, _ in errors] == [1], errors  # the probe's own error, and no other cell's
    assert "timed out" in errors[0][2] or "timed out" in text, (errors, text[-2000:])
    assert "no budget: the probe above measured no run of the program" in text, text[-2000:]
