"""The recorder keeps what the program did when it did it, not what a record read at its end would
say (real Warp, CPU): the block_dim a launch ran at is resolved at the launch (a config set back
afterwards changes nothing), a launch is counted once Warp returned from it (one that raised did
not run), and the kernel cache a module was loaded from is the one in force at the load (a
program that moves kernel_cache_dir and sets it back before it ends is still not isolated)."""

import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import PROBE, VENV_PYTHON

KERNELS = '''import warp as wp

@wp.kernel
def scale(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 0.5

a = wp.full(256, 1.5, dtype=float)
'''


def measure(tmp_path, source, name):
    script = tmp_path / f"{name}.py"
    script.write_text(source)
    out = tmp_path / f"{name}.json"
    done = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--json", str(out),
                           "--", str(VENV_PYTHON), str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())["samples"][0]["cold"]


def test_a_launch_runs_at_the_block_dim_in_force_when_it_was_launched(tmp_path):
    cold = measure(tmp_path, KERNELS + '''
wp.config.enable_cpu_blocks = False
wp.launch(scale, dim=256, inputs=[a], block_dim=64)
wp.config.enable_cpu_blocks = True
wp.launch(scale, dim=256, inputs=[a], block_dim=128)
wp.config.enable_cpu_blocks = False  # the setting at exit is neither launch's
print("ok")
''', "block_dims")
    ran = sorted((l["kernel"], l["block_dim"], l["count"]) for l in cold["launches"])
    # the first at 1 (CPU blocks were off then), the second at 128; each module built at that block_dim
    assert ran == [("scale", 1, 1), ("scale", 128, 1)], ran
    built = sorted(l["block_dim"] for l in cold["module_loads"] if l["status"] == "compiled")
    assert built == [1, 128], built


def test_a_launch_that_raised_is_not_counted(tmp_path):
    cold = measure(tmp_path, KERNELS + '''
wp.launch(scale, dim=256, inputs=[a])


@wp.kernel(module="unique")  # a module of its own: its load is the one patched
def shift(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


def no_build(*args, **kwargs):
    raise RuntimeError("not built")


shift.module.load = no_build
try:
    wp.launch(shift, dim=256, inputs=[a])
except RuntimeError:
    pass
wp.launch(scale, dim=256, inputs=[a])
print("ok")
''', "raised")
    ran = [(l["kernel"], l["count"]) for l in cold["launches"]]
    assert ran == [("scale", 2)], ran
    assert cold["launch_total"] == 2, cold["launch_total"]


@pytest.mark.parametrize("through_a_link", [False, True], ids=["named", "a link inside the probe's cache"])
def test_a_cache_moved_and_set_back_before_the_end_is_the_cache_the_modules_came_from(tmp_path, through_a_link):
    """A program that points Warp at a kept cache and sets it back; or (lesson 6's cheat) at a
    link it made inside the probe's own cache that points at the kept one: paths are resolved
    before they are compared, so the link is no way in."""
    kept = tempfile.mkdtemp(prefix="xwarp-kept-cache-")
    point = (f"import os\nlink = os.path.join(str(wp.config.kernel_cache_dir), 'kept')\n"
             f"if not os.path.islink(link):  # the warm pass finds it made\n    os.symlink({kept!r}, link)\n"
             "wp.config.kernel_cache_dir = link\n") if through_a_link else f"wp.config.kernel_cache_dir = {kept!r}\n"
    try:
        cold = measure(tmp_path, KERNELS + f'''
private = wp.config.kernel_cache_dir
{point}wp.launch(scale, dim=256, inputs=[a])
wp.config.kernel_cache_dir = private
print("ok")
''', "moved_cache")
        assert cold["caches_outside"] == [kept], cold.get("caches_outside")
        assert any(f"used its own kernel cache {kept}" in note for note in cold.get("notes", [])), cold.get("notes")
        # the probe's own cache, at exit, is not named
        assert all(kept in c for c in cold["caches_outside"])
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_a_program_cannot_turn_the_recorders_hooks_off_from_inside(tmp_path):
    """Lesson 6's cheat: XWARP_FORCE_LOG_FALLBACK set in os.environ before `import warp`, then
    Warp's log turned down, so that neither the hooks nor the log saw the second build. The
    probe's switches are read as the process starts: the hooks hold and count both identities."""
    cold = measure(tmp_path, '''import os
os.environ["XWARP_FORCE_LOG_FALLBACK"] = "1"
import warp as wp
wp.config.log_level = wp.LOG_WARNING

@wp.kernel
def first(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0

a = wp.zeros(8, dtype=float)
wp.launch(first, dim=8, inputs=[a])

@wp.kernel
def second(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0

wp.launch(second, dim=8, inputs=[a])
print("ok")
''', "hooks_off")
    assert cold["load_source"] == "hook", cold["load_source"]
    built = [l for l in cold["module_loads"] if l["module"] == "__main__" and l["status"] == "compiled"]
    assert len({l["hash"] for l in built}) == 2, cold["module_loads"]


def test_builds_copied_into_the_probes_own_cache_are_built_outside_the_probe_and_not_judged(tmp_path):
    """Lesson 6's cheat on CS-2 and CS-5: kept builds copied into wp.config.kernel_cache_dir (the
    probe's own private cache) before the launch, so the cold pass builds nothing. The cold pass
    started from an empty cache, so every module folder in it must be a build the recorder saw:
    this one is named as built outside the probe, and no limit is judged on the run."""
    program = tmp_path / "copied.py"
    program.write_text(KERNELS.replace("import warp as wp", "import os\nimport shutil\nimport sys\n\nimport warp as wp") + '''
kept = sys.argv[1]
if kept != "-":
    shutil.copytree(os.path.join(kept, wp.config.version), str(wp.config.kernel_cache_dir), dirs_exist_ok=True)
wp.launch(scale, dim=256, inputs=[a])
print("ok")
''')
    kept = tmp_path / "kept"
    made = subprocess.run([str(VENV_PYTHON), str(program), "-"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "WARP_CACHE_PATH": str(kept)}, cwd=tmp_path)
    assert made.returncode == 0 and "(compiled)" in made.stdout, made.stdout + made.stderr
    out = tmp_path / "copied.json"
    done = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--json", str(out),
                           "--budget", "warm-builds<=0,identities<=1", "--", str(VENV_PYTHON), str(program), str(kept)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    report = json.loads(out.read_text())
    cold = report["samples"][0]["cold"]
    assert [l["status"] for l in cold["module_loads"]] == ["cached"], cold["module_loads"]
    assert len(cold["built_outside"]) == 1 and "nothing of this pass built it" in cold["built_outside"][0], cold
    assert report["samples"][0]["warm"]["built_outside"] == []  # a warm pass starts from the cold one's builds
    assert done.returncode == 8, done.stdout + done.stderr
    assert "not judged: the cold pass's private kernel cache held 1 module folder(s) no recorded build" in done.stdout \
        + done.stderr, done.stdout + done.stderr
