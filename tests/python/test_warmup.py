"""warp-probe warmup on real Warp (CPU): the file built from a measured run of a three-module
package (a generic kernel at two dtypes, a module at two block_dims) builds every identity the
run built, so that the program on that cache builds nothing (its timings are bench/'s to judge);
a factory's kernel is made again by calling the factory, and one made from an object is named
as not covered with its time and is exactly what still builds; kernels in the command's own
script are built from its definitions; the file compiles and runs with only Warp, and ci.md's
container stage runs as written."""

import json
import os
import py_compile
import re
import shutil
import subprocess
import time
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import PROBE, ROOT, TARGETS

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_history import fenced_block  # noqa: E402  (the recipes' blocks, as the fleet test reads them)

PACKAGE = TARGETS / "warmup"


@pytest.fixture
def project(tmp_path, venv_python):
    """A copy of the package (the program's own folder is never written), and a way to measure
    a script in it and to write its warm-up."""
    folder = tmp_path / "project"
    shutil.copytree(PACKAGE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "demo" / "particles_fixed.py", folder / "particles_fixed.py")
    tmp = tmp_path / "probe-tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))

    class Project:
        path = folder
        temp = tmp

        def measure(self, script, samples=1):
            out = tmp_path / f"{Path(script).stem}.json"
            proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", str(samples), "--json", str(out),
                                   "--cwd", str(folder), "--", str(venv_python), script],
                                  capture_output=True, text=True, env=env, timeout=600)
            assert proc.returncode == 0, proc.stderr[-3000:]
            return out

        def warmup(self, report, *args):
            out = tmp_path / f"warmup-{report.stem}.report.json"
            script = tmp_path / f"warmup-{report.stem}.py"  # its plan beside it: warmup-{stem}.json
            proc = subprocess.run([str(PROBE), "warmup", str(report), "-q", "-o", str(script), "--json", str(out), *args],
                                  capture_output=True, text=True, env=env, timeout=900)
            plan = json.loads(out.read_text()) if out.exists() else None
            return proc, plan, script

    return Project()


def copy_warmup(script, to):
    """The runtime and its plan, which travel together: the plan beside the runtime, of its name."""
    shutil.copy2(script, to)
    shutil.copy2(script.with_suffix(".json"), to.with_suffix(".json"))


def identity(target):
    return target["module"] + " " + target["hash"][:7]


@pytest.mark.quick
def test_the_warmup_of_a_package_leaves_no_build_at_run_time(project):
    report = project.measure("app.py")
    measured = json.loads(report.read_text())
    proc, plan, script = project.warmup(report, "--verify", "--samples", "1", "--workers", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # every identity of the run: two forms of the generic module (one instance, then two), the
    # block_dim module at 64 and 128, the plain module
    assert plan["covered"] == 5 and plan["uncovered"] == 0, proc.stdout
    assert sorted((t["module"], t["block_dim"]) for t in plan["targets"]) == sorted(
        [("wpkg.generic_ops", 1), ("wpkg.generic_ops", 1), ("wpkg.blocks", 64), ("wpkg.blocks", 128), ("wpkg.reduce", 1)])
    generic = [t for t in plan["targets"] if t["module"] == "wpkg.generic_ops"]
    assert [len(t["overloads"]) for t in generic] == [1, 2] and [t["stage"] for t in generic] == [1, 2]
    built = {(l["module"], l["hash"]) for l in measured["samples"][0]["cold"]["module_loads"] if l["status"] == "compiled"}
    assert {(t["module"], t["hash"]) for t in plan["targets"]} == built

    check = plan["check"]
    assert check["verdict"] == "verified", proc.stdout
    assert check["warmup_builds"] == 5
    assert check["covered_built"] == [] and check["uncovered_built"] == [] and check["new_built"] == []
    assert "builds left at run time: 0" in proc.stdout
    # the timings are reported, not asserted (a busy machine moves them): bench/warmup_parallel.py
    # measures the parallel build against the serial one and the primed wall against the warm one
    assert check["warmup_build_ms"]["median"] > 0 and check["serial_cold_build_ms"] > 0
    assert check["wall_gap_ms"] is not None and check["band_ms"] > 0
    py_compile.compile(str(script), doraise=True)
    assert not list(project.temp.iterdir()), "the probe left temporary files behind"


def test_a_factory_kernel_is_made_again_and_one_it_cannot_remake_is_named_and_is_all_that_builds(project):
    report = project.measure("factory_app.py")
    proc, plan, _ = project.warmup(report, "--verify", "--samples", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    by_module = {t["module"].split("_")[0] if t["module"].startswith("make_scaled") else t["module"]: t for t in plan["targets"]}
    # make_offset(2.0): plain arguments, the file calls the factory again
    offset = by_module["__main__"]
    assert offset["covered"] and offset["factories"][0]["qualname"] == "make_offset", offset
    # make_scaled(Settings(3.0)): an object the file cannot re-create, named with its time
    missed = [t for t in plan["targets"] if not t["covered"]]
    assert len(missed) == 1 and "argument settings is a Settings object" in missed[0]["why_not"], plan["targets"]
    assert missed[0]["build_ms"] > 0
    assert re.search(r"NOT +make_scaled\w+ \w{7} on cpu block_dim 1 \(\d+(\.\d+)? m?s\): kernel \w*scaled", proc.stdout), proc.stdout
    check = plan["check"]
    assert check["covered_built"] == [] and check["new_built"] == []
    assert [b.split(" (")[0] for b in check["uncovered_built"]] == [
        f"{missed[0]['module']} {missed[0]['hash'][:7]} on cpu block_dim 1"]


def test_kernels_in_the_command_script_are_built_from_its_definitions(project):
    report = project.measure("particles_fixed.py")
    proc, plan, script = project.warmup(report, "--verify", "--samples", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert plan["entry_script"] == "particles_fixed.py" and plan["uncovered"] == 0
    assert {t["module"] for t in plan["targets"]} == {"__main__"}
    assert plan["check"]["verdict"] == "verified" and plan["check"]["covered_built"] == []


def test_the_file_runs_with_only_warp_and_the_container_stage_runs_as_written(project, venv_python, tmp_path):
    """The user's path: the file beside the program, ci.md's build stage run as a shell script
    with only Warp's Python on PATH, then the program on that cache adds no build to it."""
    report = project.measure("app.py")
    proc, plan, script = project.warmup(report)
    assert proc.returncode == 0 and plan["check"] is None, proc.stderr
    copy_warmup(script, project.path / "warp_warmup.py")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{venv_python}" "$@"\n')  # the image's Python: Warp only
    (bin_dir / "python3").chmod(0o755)
    cache = tmp_path / "image-cache"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "WARP_CACHE_PATH": str(cache),
           "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(project.temp)}
    stage = subprocess.run(["sh", "-c", fenced_block("ci.md", "ci:warmup-stage")], cwd=project.path, env=env,
                           capture_output=True, text=True, timeout=600)
    assert stage.returncode == 0, stage.stdout + stage.stderr
    assert "warp warm-up: built 5 of 5 module identities as measured" in stage.stdout, stage.stdout
    before = sorted(p.name for p in cache.rglob("wp_*") if p.is_dir())
    assert len([n for n in before if n.startswith("wp_wpkg")]) == 5, before
    run = subprocess.run([str(venv_python), "app.py"], cwd=project.path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and "\nok " in run.stdout, run.stderr[-2000:]
    # Warp's own log says where each load came from
    assert run.stdout.count("(cached)") == 5 and "(compiled)" not in run.stdout, run.stdout
    assert sorted(p.name for p in cache.rglob("wp_*") if p.is_dir()) == before, "the program built a module the warm-up had built"
    shutil.rmtree(project.temp)
    project.temp.mkdir()


def test_the_other_recipes_parse():
    import yaml

    steps = yaml.safe_load(fenced_block("ci.md", "ci:warmup-actions"))
    assert any("warp_warmup.py" in str(s.get("run", "")) for s in steps)
    plugin = yaml.safe_load(fenced_block("ci.md", "ci:plugin"))
    assert any("--warp-builds" in str(s.get("run", "")) for s in plugin)
    kept_job = yaml.safe_load(fenced_block("ci.md", "ci:kept-cache-actions"))["tests"]
    assert kept_job["runs-on"] == "ubuntu-latest" and "CUDA_CACHE_PATH" not in str(kept_job)  # no GPU: no CUDA cache
    kept = kept_job["steps"]
    runs = [str(s.get("run", "")) for s in kept]
    assert any("--dry-run" in r for r in runs) and any("--prune" in r for r in runs), runs
    gitlab = yaml.safe_load(fenced_block("ci.md", "ci:kept-cache-gitlab"))["tests"]["script"]
    assert any("--missing" in line for line in gitlab) and any("--prune" in line for line in gitlab), gitlab
    # the first recipes keep both caches, Warp's and the CUDA cache (NVRTC's compilations), keyed on
    # the driver and NVRTC versions
    actions = yaml.safe_load(fenced_block("ci.md", "ci:cache"))
    assert "CUDA_CACHE_PATH" in actions["env"] and "CUDA_CACHE_PATH" in str(actions["steps"])
    key = [s for s in actions["steps"] if "cache@" in str(s.get("uses", ""))][0]["with"]["key"]
    assert "driver" in key and "nvrtc" in key and "warp" in key, key
    gitlab_cache = yaml.safe_load(fenced_block("ci.md", "ci:cache-gitlab"))["tests"]
    assert {".warp-cache", ".cuda-cache"} <= set(gitlab_cache["cache"]["paths"]), gitlab_cache
    assert "CUDA_CACHE_PATH" in yaml.safe_load(fenced_block("ci.md", "ci:kept-cache-gitlab"))["tests"]["variables"]
    slurm = subprocess.run(["sh", "-n", "-c", fenced_block("ci.md", "ci:warmup-slurm")], capture_output=True, text=True)
    assert slurm.returncode == 0, slurm.stderr


def test_a_run_that_built_nothing_is_a_usage_error_and_writes_no_file(project, tmp_path):
    """A report whose run built nothing has nothing to warm up: exit 64 and why, no file."""
    empty = tmp_path / "empty.py"
    empty.write_text("import warp as wp\nwp.init()\nprint('ok')\n")
    report = project.measure(str(empty))
    proc, plan, script = project.warmup(report)
    assert proc.returncode == 64 and "built no module" in proc.stderr, proc.stderr
    assert not script.exists() and plan is None


def test_generic_instances_of_the_programs_own_struct_and_an_unnamed_vector_are_built_by_the_warmup(project):
    """A generic kernel instantiated with a @wp.struct of the program (and an array of it), and
    one with a vector of a length Warp has no name for: the file names the struct by where it
    lives (the worker imports it) and the vector by its shape."""
    (project.path / "shapes.py").write_text(
        "from typing import Any\n\nimport warp as wp\n\n\n@wp.struct\nclass Disc:\n    r: float\n\n\n"
        "@wp.kernel\ndef area(s: Any, discs: wp.array(dtype=Any), out: wp.array(dtype=float)):\n"
        "    out[0] = 3.0 * s.r * s.r + discs[0].r\n\n\nV5 = wp.types.vector(length=5, dtype=float)\n\n\n"
        "@wp.kernel\ndef ends(v: Any, out: wp.array(dtype=float)):\n    out[0] = v[0] + v[4]\n")
    (project.path / "shapes_app.py").write_text(
        "import warp as wp\n\nimport shapes\n\nd = shapes.Disc()\nd.r = 2.0\n"
        "discs = wp.array([d], dtype=shapes.Disc)\nout = wp.zeros(1, dtype=float)\n"
        "wp.launch(shapes.area, dim=1, inputs=[d, discs, out])\n"
        "wp.launch(shapes.ends, dim=1, inputs=[shapes.V5(1.0, 2.0, 3.0, 4.0, 5.0), out])\nprint(out.numpy()[0])\n")
    report = project.measure("shapes_app.py")
    proc, plan, _ = project.warmup(report, "--verify", "--samples", "1", "--workers", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    target = next(t for t in plan["targets"] if t["module"] == "shapes")
    assert target["covered"], target["why_not"]
    assert target["overloads"][0]["types"][:2] == [{"struct": "shapes:Disc"},
                                                   {"array": "array", "dtype": {"struct": "shapes:Disc"}, "ndim": 1}], target
    last = [t for t in plan["targets"] if t["module"] == "shapes"][-1]  # the form that holds both instances
    assert last["covered"] and [{"shape": [5], "scalar": {"type": "float32"}}] in [o["types"][:1] for o in last["overloads"]], last
    assert plan["check"]["verdict"] == "verified", proc.stdout
    assert not list(project.temp.iterdir())


def test_a_kept_cache_builds_only_what_a_change_invalidated_and_names_the_tests_that_pay(project, venv_python, tmp_path):
    """ci.md section 6 on a real suite: the warm-up file of a measured unittest suite, on a cache
    kept between runs. --missing builds what the cache lacks and nothing once it holds all;
    after a change to one module, --dry-run names that module and the test that paid for it
    without building, --missing builds only it, --prune removes the folder the change made
    stale and keeps the rest, and the suite then builds nothing (Warp's own log)."""
    (project.path / "test_app.py").write_text(
        "import unittest\n\nimport warp as wp\n\nfrom wpkg import blocks, reduce\n\nwp.config.enable_cpu_blocks = True\n\n\n"
        "class TestApp(unittest.TestCase):\n"
        "    def test_reduce(self):\n        a = wp.ones(64, dtype=wp.float32)\n        wp.launch(reduce.square, dim=64, inputs=[a])\n"
        "        self.assertTrue(a.numpy()[0] > 0)\n\n"
        "    def test_blocks(self):\n        a = wp.ones(64, dtype=wp.float32)\n        blocks.run(a, 64)\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n")
    out = tmp_path / "suite.json"
    env = dict(os.environ, TMPDIR=str(project.temp))
    proc = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(out), "--cwd", str(project.path),
                           "--", str(venv_python), "-m", "unittest", "test_app"], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc, plan, script = project.warmup(out)
    assert proc.returncode == 0 and plan["covered"] == 2, proc.stdout + proc.stderr
    paid = {t["module"]: t["tests"] for t in plan["targets"]}
    assert any("test_reduce" in name for name in paid["wpkg.reduce"]), paid
    file = project.path / "warp_warmup.py"
    copy_warmup(script, file)
    cache = tmp_path / "kept-cache"
    run_env = dict(os.environ, WARP_CACHE_PATH=str(cache), TMPDIR=str(project.temp), PYTHONDONTWRITEBYTECODE="1")

    contract = json.loads((ROOT / "contracts" / "warmup_targets.schema.json").read_text())
    results_rule = jsonschema.Draft202012Validator({"$defs": contract["$defs"], "$ref": "#/$defs/results"})
    results = tmp_path / "results.json"
    modes = set()

    def warmup(*args):
        with_results = [] if "--prune" in args else ["--results", str(results)]
        done = subprocess.run([str(venv_python), str(file), "--workers", "2", *args, *with_results], cwd=project.path,
                              env=run_env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        if with_results:
            # what the file says it did is inside its contract (warmup --verify reads it back)
            written = json.loads(results.read_text())
            results_rule.validate(written)
            assert written["contract"] == contract["x-contract-version"] and len(written["outcomes"]) == 2, written
            modes.add(written["mode"])
        return done.stdout

    def folders():
        return sorted(p.name for p in cache.rglob("wp_wpkg*") if p.is_dir() and not p.is_symlink())

    first = warmup("--missing")
    assert "0 of 2 module identities are in the cache" in first and "built 2 of 2 module identities as measured" in first, first
    again = warmup("--missing")
    # checked in the file's own process: no worker starts when nothing is left to build
    assert "2 of 2 module identities are in the cache" in again and "nothing to build" in again, again
    assert "in this process" in again, again
    before = folders()
    assert len(before) == 2, before
    # a binary cut short (a CI cache restored in part) is not in the cache: --missing builds it again
    (binary,) = [p for p in (cache.rglob("wp_wpkg.reduce_*/*.o")) if p.is_file()]
    whole = binary.read_bytes()
    binary.write_bytes(whole[: len(whole) // 2])
    cut = warmup("--missing")
    assert "1 of 2 module identities are in the cache" in cut and "built 1 of 2" in cut, cut
    assert f"removed {binary.parent.name}, a build cut short" in cut, cut
    assert binary.stat().st_size > len(whole) // 2
    assert folders() == before

    reduce = project.path / "wpkg" / "reduce.py"
    reduce.write_text(reduce.read_text().replace("range(12)", "range(13)"))
    dry = warmup("--dry-run")
    assert folders() == before, "--dry-run built something"
    would = [line for line in dry.splitlines() if "would build" in line and "a run would" not in line]
    assert len(would) == 1 and "wpkg.reduce" in would[0] and "changed since it was measured" in would[0], dry
    assert "paid by" in would[0] and "test_reduce" in would[0] and "test_blocks" not in would[0], would
    assert "a run would build 1 of 2 module identities" in dry, dry

    rebuilt = warmup("--missing")
    assert "1 of 2 module identities are in the cache" in rebuilt and "as the code gives it now" in rebuilt, rebuilt
    after = folders()
    assert len(after) == 3 and set(before) < set(after), after
    stale = [n for n in before if n.startswith("wp_wpkg.reduce_")]

    # what --prune does not own stays: a folder of another name, one of a module the file does not
    # know, a link named as Warp names a folder (to a folder outside the cache) and a dangling one
    version = binary.parent.parent
    outside = tmp_path / "not-the-cache"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    (version / "wp_notes").mkdir()
    (version / "wp_other.module_abcdef0").mkdir()
    (version / "wp_wpkg.reduce_0000000").symlink_to(outside)
    (version / "wp_wpkg.reduce_1111111").symlink_to(tmp_path / "gone")
    foreign = sorted(p.name for p in version.iterdir() if not p.name.startswith("wp_wpkg") or p.is_symlink())
    listed = warmup("--prune", "--dry-run")
    assert "would remove 1 module folder" in listed and stale[0] in listed, listed
    assert folders() == after
    warmup("--prune")
    assert folders() == sorted(set(after) - set(stale)), folders()
    assert sorted(p.name for p in version.iterdir() if not p.name.startswith("wp_wpkg") or p.is_symlink()) == foreign
    assert (outside / "keep.txt").read_text() == "mine"

    assert modes == {"missing", "dry-run"}, modes
    suite = subprocess.run([str(venv_python), "-m", "unittest", "test_app"], cwd=project.path,
                           env=run_env, capture_output=True, text=True, timeout=600)
    log = suite.stdout + suite.stderr
    assert suite.returncode == 0, log[-2000:]
    assert "(compiled)" not in log and log.count("(cached)") == 2, log[-2000:]
    assert not list(project.temp.iterdir())


def test_a_warmup_that_could_build_nothing_writes_a_file_that_says_so_and_says_why(project, tmp_path, venv_python):
    """Every identity out of reach (its only kernel made from an object): exit 1 with each NOT
    line and the reason, nothing run by --verify, and a file that builds nothing and says so when
    run (exit 0), so that the CI step that runs it still runs."""
    (project.path / "object_only.py").write_text(
        "import warp as wp\n\n\nclass Settings:\n    def __init__(self, gain):\n        self.gain = gain\n\n\n"
        "def make_scaled(settings):\n    g = settings.gain\n\n    @wp.kernel(module=\"unique\")\n"
        "    def scaled(a: wp.array(dtype=wp.float32)):\n        a[wp.tid()] = a[wp.tid()] * g\n\n    return scaled\n\n\n"
        "a = wp.ones(8, dtype=wp.float32)\nwp.launch(make_scaled(Settings(3.0)), dim=8, inputs=[a])\nprint('ok')\n")
    report = project.measure("object_only.py")
    for args in ((), ("--verify", "--samples", "1")):
        proc, plan, script = project.warmup(report, *args)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert plan["covered"] == 0 and plan["check"] is None, plan
        assert "NOT" in proc.stdout and "Settings object" in proc.stdout, proc.stdout
        assert "the file written builds nothing, and says so when run" in proc.stdout, proc.stdout
        written = json.loads(script.with_suffix(".json").read_text())
        assert written["targets"] == [] and written["measured"]["identities"] == 1, written["measured"]
        cache = tmp_path / "kept-cache"
        ran = subprocess.run([str(venv_python), str(script), "--strict"], cwd=project.path, capture_output=True, text=True,
                             env={**os.environ, "WARP_CACHE_PATH": str(cache)}, timeout=300)
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "this plan builds nothing: warp-probe warmup could build none of the 1 module identities" in ran.stdout, ran.stdout
        assert not cache.exists() or not any(cache.rglob("*.o")), "a plan of no targets built something"
    assert not list(project.temp.iterdir())


def test_the_file_as_ci_md_documents_it_warms_a_pytest_suite_from_its_own_folder(tmp_path, venv_python):
    """ci.md's layout: the suite in tests/, the file committed as ci/warp_warmup.py, run from the
    project's root with no --root. The run imported pytest from its own folder and the test modules
    from tests/: the file finds them from its own folder, builds every identity, and the suite then
    builds nothing (Warp's own log); --verify times a cold suite beside the warm-up and says what
    the step is worth against it."""
    project = tmp_path / "proj"
    (project / "tests").mkdir(parents=True)
    (project / "ci").mkdir()
    for f in (TARGETS / "suite").glob("*.py"):
        shutil.copy2(f, project / "tests" / f.name)
    probe_tmp = tmp_path / "probe-tmp"
    probe_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(probe_tmp))
    report = tmp_path / "suite.json"
    suite = [str(venv_python), "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider"]
    measured = subprocess.run([str(PROBE), "measure", "-q", "--samples", "1", "--json", str(report), "--cwd", str(project),
                               "--", *suite], capture_output=True, text=True, env=env, timeout=600)
    assert measured.returncode == 0, measured.stderr[-3000:]
    written = subprocess.run([str(PROBE), "warmup", str(report), "-q", "-o", str(project / "ci" / "warp_warmup.py"),
                              "--verify", "--samples", "1"], capture_output=True, text=True, env=env, cwd=project, timeout=900)
    assert written.returncode == 0, written.stdout + written.stderr
    assert "of a cold run timed beside it" in written.stdout, written.stdout
    cache = tmp_path / "cache"
    run_env = dict(os.environ, WARP_CACHE_PATH=str(cache), TMPDIR=str(probe_tmp), PYTHONDONTWRITEBYTECODE="1")
    warmed = subprocess.run([str(venv_python), "ci/warp_warmup.py"], cwd=project, env=run_env, capture_output=True,
                            text=True, timeout=600)
    assert warmed.returncode == 0, warmed.stdout + warmed.stderr
    assert "WarmupRefused" not in warmed.stdout + warmed.stderr, warmed.stdout
    assert re.search(r"built (\d+) of \1 module identities as measured", warmed.stdout), warmed.stdout
    after = subprocess.run(suite, cwd=project, env=dict(run_env, WARP_LOG_LEVEL="info"), capture_output=True, text=True,
                           timeout=600)
    assert after.returncode == 0, after.stdout[-2000:]
    assert "(compiled)" not in after.stdout + after.stderr, "the suite built a module the warm-up had built"


def test_warm_up_called_by_the_program_after_wp_init_builds_into_the_programs_cache(project, venv_python, tmp_path):
    """The file's header suggests importing it and calling warm_up() at the program's start: after
    wp.init() the workers build into the program's own kernel cache (never <cache>/<version>/
    <version>), and the program then finds every module there. --results to a folder that does not
    exist is one line and exit 2 after the builds, not a traceback."""
    report = project.measure("app.py")
    proc, plan, script = project.warmup(report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    copy_warmup(script, project.path / "warp_warmup.py")
    (project.path / "start.py").write_text(
        "import warp as wp\n\nwp.init()\nimport warp_warmup\n\n"
        "result = warp_warmup.warm_up(log=lambda line: None)\n"
        "print('built', sum(1 for o in result['outcomes'] if o and o['built']), 'into', wp.config.kernel_cache_dir)\n")
    cache = tmp_path / "app-cache"
    env = dict(os.environ, WARP_CACHE_PATH=str(cache), TMPDIR=str(project.temp), PYTHONDONTWRITEBYTECODE="1")
    started = subprocess.run([str(venv_python), "start.py"], cwd=project.path, env=env, capture_output=True, text=True,
                             timeout=600)
    assert started.returncode == 0 and "built 5 into" in started.stdout, started.stdout + started.stderr
    (version,) = [p for p in cache.iterdir() if p.is_dir()]
    assert sorted(p.name for p in version.iterdir() if p.is_dir() and not p.name.startswith("wp_")) == [], \
        sorted(p.name for p in version.iterdir())
    assert len([p for p in version.iterdir() if p.name.startswith("wp_wpkg")]) == 5
    run = subprocess.run([str(venv_python), "app.py"], cwd=project.path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and run.stdout.count("(cached)") == 5 and "(compiled)" not in run.stdout, run.stdout
    unwritable = subprocess.run([str(venv_python), "warp_warmup.py", "--missing", "--results", str(tmp_path / "no" / "r.json")],
                                cwd=project.path, env=env, capture_output=True, text=True, timeout=600)
    assert unwritable.returncode == 2 and "Traceback" not in unwritable.stderr, unwritable.stderr
    assert "the results could not be written" in unwritable.stderr, unwritable.stderr
    assert not list(project.temp.iterdir())


def test_the_file_names_nvrtcs_cache_for_a_cuda_build_and_prune_leaves_it_alone(project, venv_python, tmp_path):
    """A kept Warp cache rebuilds what a change invalidated; a kept CUDA cache turns that rebuild
    into NVRTC's read-back (12.9 and later). The file's --missing, --dry-run and --prune say, for a
    CUDA build, where that cache is, how full it is against CUDA_CACHE_MAXSIZE, that a default
    path is one CI does not keep, when it is off, and that --prune does not touch it. The file's
    own functions, run with the environments a CI job has (no GPU here: a CPU build says nothing)."""
    report = project.measure("app.py")
    proc, plan, script = project.warmup(report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cuda_cache = tmp_path / "cuda-cache"
    (cuda_cache / "sub").mkdir(parents=True)
    (cuda_cache / "sub" / "entry").write_bytes(b"\0" * 950_000)
    home = tmp_path / "home"
    (home / ".nv" / "ComputeCache").mkdir(parents=True)
    (home / ".nv" / "ComputeCache" / "entry").write_bytes(b"\0" * 2_000_000)
    ask = ("import json, runpy, sys\n"
           "f = runpy.run_path(sys.argv[1], run_name='warmup_under_test')\n"
           "out = {m: f['_cuda_cache_lines'](f['_cuda_cache'](sys.argv[2]), m) for m in ('missing', 'prune')}\n"
           "out['info'] = f['_cuda_cache'](sys.argv[2])\n"
           "print(json.dumps(out))\n")
    base = {k: v for k, v in os.environ.items() if not k.startswith("CUDA_CACHE")}

    def lines(device, **env):
        done = subprocess.run([str(venv_python), "-c", ask, str(script), device], capture_output=True, text=True,
                              env=dict(base, HOME=str(home), **env), timeout=120, cwd=project.path)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    kept = lines("cuda:0", CUDA_CACHE_PATH=str(cuda_cache), CUDA_CACHE_MAXSIZE="1000000")
    assert kept["info"] == {"path": str(cuda_cache), "default_path": False, "disabled": False, "bytes": 950_000,
                            "limit_bytes": 1_000_000, "counted_in_part": False, "problem": None,
                            "limit_problem": None}, kept
    assert kept["missing"][0].startswith(f"NVRTC's cache {cuda_cache} holds 0.9 MB of CUDA_CACHE_MAXSIZE 1.0 MB"), kept
    assert any("within 10% of CUDA_CACHE_MAXSIZE" in line for line in kept["missing"]), kept
    assert not any("CUDA_CACHE_PATH is not set" in line for line in kept["missing"]), kept
    assert "--prune leaves it as it is" in kept["prune"][0] and str(cuda_cache) in kept["prune"][0], kept
    roomy = lines("cuda:0", CUDA_CACHE_PATH=str(cuda_cache), CUDA_CACHE_MAXSIZE="4294967296")
    assert not any("within 10%" in line for line in roomy["missing"]), roomy
    default = lines("cuda:0")
    assert default["info"]["path"] == str(home / ".nv" / "ComputeCache") and default["info"]["bytes"] == 2_000_000
    assert any("CUDA_CACHE_PATH is not set" in line for line in default["missing"]), default
    assert "the driver's default limit" in default["missing"][0], default
    off = lines("cuda:0", CUDA_CACHE_PATH=str(cuda_cache), CUDA_CACHE_DISABLE="1")
    assert off["missing"] == off["prune"] and "the CUDA cache is off" in off["missing"][0], off
    cpu = lines("cpu", CUDA_CACHE_PATH=str(cuda_cache))
    assert cpu == {"missing": [], "prune": [], "info": None}, cpu
    # what the environment holds is data (trust 6): a limit that is no ASCII number is said, never a
    # traceback nor read as another number; a path that is no folder is named; "/" is counted for 2 s
    for odd in ("\u00b2", "\uff11\uff12\uff13", "9" * 5000, "12 34"):
        told = lines("cuda:0", CUDA_CACHE_PATH=str(cuda_cache), CUDA_CACHE_MAXSIZE=odd)
        assert told["info"]["limit_bytes"] is None and told["info"]["limit_problem"], told
        assert any("is not a number of bytes" in line for line in told["missing"]), told
    fifo = tmp_path / "cuda-fifo"
    os.mkfifo(fifo)
    told = lines("cuda:0", CUDA_CACHE_PATH=str(fifo))
    assert told["info"]["problem"] == "is not a folder (a FIFO)" and "cannot keep its compilations" in told["missing"][0], told
    started = time.monotonic()
    whole_disk = lines("cuda:0", CUDA_CACHE_PATH="/")
    assert time.monotonic() - started < 30 and whole_disk["info"]["counted_in_part"], whole_disk["info"]
    assert "holds at least" in whole_disk["missing"][0], whole_disk
    # run as CI runs it, for the CPU build it was measured on: no CUDA line
    done = subprocess.run([str(venv_python), str(script), "--dry-run"], capture_output=True, text=True,
                          env=dict(base, CUDA_CACHE_PATH=str(cuda_cache), WARP_CACHE_PATH=str(tmp_path / "wc")),
                          timeout=300, cwd=project.path)
    assert done.returncode == 0 and "a run would build" in done.stdout, done.stdout + done.stderr
    said = [line for line in done.stdout.splitlines() if line.startswith("warp warm-up:")]
    assert said and not any("NVRTC" in line or "CUDA cache" in line for line in said), said
