"""warp-probe fix on real Warp (CPU): each lesson's broken program gets a patch that a clean copy
accepts with `git apply --check` and `patch -p1`, that --verify proves on a copy of the project
(the program's own files untouched), and whose saving agrees with the lesson's solved form; the
factory with a hidden module="unique" default whose kernels come between launches gets both
changes; a kernel in an installed package gets no patch and the library sentence; --apply writes
only verified patches."""

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, TARGETS

DIAG = TARGETS / "diagnose"


def digest(folder):
    h = hashlib.sha256()
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix == ".py":
            h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def project(tmp_path, venv_python):
    """A folder of the lesson programs (not a git work tree: fix copies it without caches), and
    a way to measure one and fix it."""
    folder = tmp_path / "project"
    folder.mkdir()
    for name in ("cs1_late.py", "cs3_option.py", "cs6_generic.py", "cs2_nocache.py", "option_late.py", "lib_heavy.py",
                 "cs1_late_fixed.py", "cs6_generic_fixed.py", "cs3_option_fixed.py"):
        shutil.copy2(DIAG / name, folder / name)
    shutil.copy2(TARGETS / "fix" / "pipeline.py", folder / "pipeline.py")
    shutil.copy2(ROOT / "demo" / "particles_churn.py", folder / "particles_churn.py")
    shutil.copy2(ROOT / "demo" / "particles_fixed.py", folder / "particles_fixed.py")
    tmp = tmp_path / "probe-tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))

    class Project:
        path = folder
        temp = tmp

        def measure(self, script, samples=1, name=None):
            out = tmp_path / f"{name or Path(script).stem}.json"
            proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", str(samples), "--json",
                                   str(out), "--cwd", str(folder), "--", str(venv_python), script],
                                  capture_output=True, text=True, env=env, timeout=600)
            assert proc.returncode == 0, proc.stderr[-3000:]
            return out

        def fix(self, report, *args, extra_env=None):
            out = tmp_path / f"fix-{report.stem}.json"
            proc = subprocess.run([str(PROBE), "fix", str(report), "-q", "--json", str(out), *args],
                                  capture_output=True, text=True, env=dict(env, **(extra_env or {})), cwd=tmp_path,
                                  timeout=900)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            return json.loads(out.read_text()), proc.stdout

    return Project()


def fix_of(result, mechanism):
    matches = [f for f in result["fixes"] if f["mechanism"] == mechanism]
    assert len(matches) == 1, [(f["mechanism"], f["verdict"]) for f in result["fixes"]]
    return matches[0]


def applies_cleanly(patch_file, folder, tmp_path):
    """The patch applies to a clean copy of the folder with git apply and with patch -p1."""
    for tool, args in (("git", ["apply", "--check"]), ("patch", ["-p1", "--dry-run", "-i"])):
        clean = tmp_path / f"clean-{tool}"
        shutil.rmtree(clean, ignore_errors=True)
        shutil.copytree(folder, clean, ignore=shutil.ignore_patterns("__pycache__"))
        proc = subprocess.run([tool, *args, str(patch_file)], cwd=clean, capture_output=True, text=True)
        assert proc.returncode == 0, f"{tool}: {proc.stdout}{proc.stderr}"


@pytest.mark.quick
def test_a_late_option_gets_a_patch_that_verifies_and_the_program_is_untouched(project, tmp_path):
    before = digest(project.path)
    report = project.measure("cs3_option.py")
    result, text = project.fix(report, "--finding", "CS-3", "--verify", "--samples", "2", "--out", str(tmp_path / "out"))
    f = fix_of(result, "CS-3")
    # the module no longer builds twice: counted, whatever the clock's noise (the time is beside it)
    assert f["verdict"] == "verified" and f["cold_builds_after"] < f["cold_builds_before"], f
    assert f["finding_gone"] is True and f["band_ms"] > 0 and f["samples"] == 2, f
    assert f["files"] == ["cs3_option.py"] and "set_module_options" in f["patch"]
    assert Path(f["patch_file"]).read_text() == f["patch"]
    applies_cleanly(f["patch_file"], project.path, tmp_path)
    assert digest(project.path) == before, "fix changed the program's own files"
    assert list(project.temp.iterdir()) == [], "temporary copies were left behind"
    assert "CS-3 #1" in text and "verified" in text


# Each lesson's broken program: the finding it teaches gets a verified patch.
LESSONS = [
    ("cs1_late.py", "CS-1", "cs1_late_fixed.py"),
    ("particles_churn.py", "CS-1", "particles_fixed.py"),
    ("cs6_generic.py", "CS-6", "cs6_generic_fixed.py"),
    ("cs2_nocache.py", "CS-2", None),
    ("option_late.py", "option-not-arrived", None),
]


@pytest.mark.parametrize("program,mechanism,solved", LESSONS, ids=[f"{p}:{m}" for p, m, _ in LESSONS])
def test_each_lessons_broken_program_gets_a_patch_that_does_what_the_solution_does(project, tmp_path, program, mechanism,
                                                                                   solved):
    report = project.measure(program)
    if solved is not None:
        # a saving of a few hundred ms, whose verdict noise can flip on a busy machine: the patch is
        # held against the lesson's solved form below, structure for structure (verification itself
        # is checked where a whole module's rebuild makes its verdict certain)
        result, _ = project.fix(report, "--finding", mechanism, "--out", str(tmp_path / "out"))
        f = fix_of(result, mechanism)
        assert f["verdict"] == "not-verified", f
    else:
        result, _ = project.fix(report, "--finding", mechanism, "--verify", "--samples", "2", "--out", str(tmp_path / "out"))
        f = fix_of(result, mechanism)
        assert f["samples"] == 2, f
    applies_cleanly(f["patch_file"], project.path, tmp_path)
    if solved is None:
        # a whole module's rebuild (CS-2's warm pass, an option that never arrived): far beyond
        # any noise band, so the verdict itself is the check
        assert f["verdict"] == "verified", f
        return
    # A saving of a few hundred ms is a verdict noise can flip on a busy machine: what the patch
    # did is held against the lesson's solved form instead, structure for structure.
    # The patched program builds what the lesson's solved form builds, for the same launches:
    # the saving the fix verified is the solved form's (a timing of two samples could not say
    # that more precisely than the structure does).
    patched = tmp_path / "patched"
    shutil.copytree(project.path, patched, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["patch", "-p1", "-i", f["patch_file"]], cwd=patched, check=True, capture_output=True)
    shutil.copy2(patched / program, project.path / ("patched_" + program))
    a = project.measure(solved, name="solved")
    b = project.measure("patched_" + program, name="patched")
    compare = subprocess.run([str(PROBE), "compare", str(a), str(b), "--history", "off", "--json", str(tmp_path / "c.json")],
                             capture_output=True, text=True)
    c = json.loads((tmp_path / "c.json").read_text())
    assert c["workload"]["status"] == "same", compare.stdout
    rows = {row["name"]: (row["before"], row["after"]) for row in c["structure"]}
    for name in ("identities", "modules", "builds (compiled loads)"):
        assert rows[name][0] == rows[name][1], (name, compare.stdout)


def test_a_factory_with_a_hidden_unique_default_and_kernels_between_launches_gets_both_changes(project, tmp_path):
    report = project.measure("pipeline.py")
    finding = next(f for f in json.loads(report.read_text())["findings"] if f["mechanism"] == "CS-9")
    assert finding["cause"]["created_between_launches"] is True
    assert "the fix is two changes" in finding["recommendation"]
    result, _ = project.fix(report, "--finding", "CS-9", "--verify", "--samples", "2", "--out", str(tmp_path / "out"))
    f = fix_of(result, "CS-9")
    # three modules become one: counted, so the verdict stands whatever the clock's noise
    assert f["verdict"] == "verified" and f["cold_builds_after"] < f["cold_builds_before"], f
    assert f["finding_gone"] is True, f
    # the default renamed after the file that holds the group (one module per file's group)
    assert 'module="pipeline_kernels"' in f["patch"] and '-def make_stage(gain, damping, module="unique"):' in f["patch"]
    moved = [line for line in f["patch"].splitlines() if line.startswith("+") and " = make_stage(" in line]
    assert len(moved) == 2, f["patch"]  # the two late creations, before the first launch
    applies_cleanly(f["patch_file"], project.path, tmp_path)


def test_a_kernel_in_an_installed_package_gets_no_patch_and_the_library_sentence(project, tmp_path, venv_python):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "engine"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(
        "import warp as wp\n\n"
        + "".join(f"\n@wp.kernel(module=\"unique\")\ndef k{i}(a: wp.array(dtype=float)):\n    a[wp.tid()] = a[wp.tid()] * {i}.0 + 1.0\n"
                  for i in range(4))
    )
    (project.path / "app.py").write_text(
        "import warp as wp\nimport engine\n\na = wp.zeros(16, dtype=float)\n"
        "for k in (engine.k0, engine.k1, engine.k2, engine.k3):\n    wp.launch(k, dim=16, inputs=[a])\n"
    )
    out = tmp_path / "app.json"
    proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(out), "--cwd",
                           str(project.path), "--", str(venv_python), "app.py"],
                          capture_output=True, text=True, timeout=600, env=dict(os.environ, PYTHONPATH=str(site.parent)))
    assert proc.returncode == 0, proc.stderr
    finding = next(f for f in json.loads(out.read_text())["findings"] if f["mechanism"] == "CS-9")
    assert finding["library"] is True
    assert finding["recommendation"].startswith("This is library code (")
    result, _ = project.fix(out, "--finding", "CS-9")
    f = fix_of(result, "CS-9")
    assert f["verdict"] == "no-patch" and f["patch"] == "" and "library code" in f["reason"]


def test_apply_writes_only_verified_patches(project, tmp_path):
    # every finding of the demo, each verdict what the noise made it: what is applied is exactly
    # what verified, and the file holds exactly those edits
    report = project.measure("particles_churn.py")
    before = (project.path / "particles_churn.py").read_text()
    result, text = project.fix(report, "--verify", "--apply", "--samples", "2", "--out", str(tmp_path / "out"))
    applied = {f["mechanism"] for f in result["fixes"] if f["applied"]}
    verified = {f["mechanism"] for f in result["fixes"] if f["verdict"] == "verified"}
    assert applied == verified, result["fixes"]
    source = (project.path / "particles_churn.py").read_text()
    assert (source != before) == bool(applied)
    if "CS-1" in applied:
        assert source.index("def collide") < source.index("wp.launch(integrate")  # the hoist is in the file now
    for f in result["fixes"]:
        if f["verdict"] != "verified" and "use_precompiled_headers" in f["patch"]:
            assert "use_precompiled_headers" not in source  # a patch that did not verify stays out
    # a whole module's rebuild is far beyond the noise: CS-3's patch verifies and is applied
    report = project.measure("cs3_option.py")
    result, _ = project.fix(report, "--finding", "CS-3", "--verify", "--apply", "--samples", "2", "--out",
                            str(tmp_path / "out3"))
    assert [f["applied"] for f in result["fixes"]] == [True], result["fixes"]
    assert "set_module_options({'fast_math': True})" in (project.path / "cs3_option.py").read_text().split("@wp.func")[0]


def test_apply_refuses_a_file_that_changed_while_its_patch_was_verified(project, tmp_path):
    """The verified patch is the one applied: a source edited during verification (here by the
    verification's own runs, through an absolute path) is left alone, and the output says so."""
    program = project.path / "cs3_touch.py"
    program.write_text((project.path / "cs3_option.py").read_text() + (
        "import os\n"
        "if os.environ.get('XWARP_TEST_TOUCH') and 'XWARP_WHATIF' not in os.environ:\n"
        "    with open(os.environ['XWARP_TEST_TOUCH'], 'a') as f:\n"
        "        f.write('# edited while fix was verifying\\n')\n"))
    report = project.measure("cs3_touch.py")
    result, text = project.fix(report, "--finding", "CS-3", "--verify", "--apply", "--samples", "1",
                               "--out", str(tmp_path / "out"), extra_env={"XWARP_TEST_TOUCH": str(program)})
    assert [f["applied"] for f in result["fixes"]] == [False], result["fixes"]
    assert any("changed while the patches were verified: nothing was applied" in w for w in result["warnings"]), result["warnings"]
    assert "set_module_options({'fast_math': True})" not in program.read_text().split("@wp.func")[0]


def test_apply_without_verify_is_refused(project, tmp_path):
    report = project.measure("cs3_option.py")
    proc = subprocess.run([str(PROBE), "fix", str(report), "--apply", "--history", "off"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 64 and "--apply applies only verified patches" in proc.stderr
