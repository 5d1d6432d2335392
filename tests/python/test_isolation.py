"""Nothing is written into the user's own Warp or CUDA caches or into the measured project.

A control run of the same program without the probe proves the checks can see such writes.
"""

import hashlib
import os
import subprocess
from pathlib import Path

PROGRAM = """
import localmod
import warp as wp

a = wp.zeros(8, dtype=float)
wp.launch(localmod.fill, dim=8, inputs=[a])
print(float(a.numpy().sum()))
"""

LOCALMOD = """
import warp as wp


@wp.kernel
def fill(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0
"""


def make_world(base: Path):
    home = base / "home"
    (home / ".cache" / "warp" / "0.0.0" / "wp_old_1234567").mkdir(parents=True)
    (home / ".cache" / "warp" / "0.0.0" / "wp_old_1234567" / "wp_old.cpp").write_text("// an older build\n")
    (home / ".nv" / "ComputeCache").mkdir(parents=True)
    (home / ".nv" / "ComputeCache" / "index").write_bytes(b"\x00\x01driver cache")
    project = base / "project"
    project.mkdir()
    (project / "main.py").write_text(PROGRAM)
    (project / "localmod.py").write_text(LOCALMOD)
    return home, project


def snapshot(tree: Path):
    out = {}
    for p in sorted(tree.rglob("*")):
        rel = str(p.relative_to(tree))
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def clean_env(home: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("WARP_CACHE_PATH", "CUDA_CACHE_PATH", "XDG_CACHE_HOME",
                                                            "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["HOME"] = str(home)
    return env


def test_probe_writes_nothing_into_user_caches_or_project(probe, venv_python, tmp_path):
    home, project = make_world(tmp_path / "probed")
    before_home, before_project = snapshot(home), snapshot(project)

    run = probe([venv_python, "main.py"], cwd=project, samples=2, env=clean_env(home))
    assert run.returncode == 0, run.stderr
    assert [l["module"] for l in run.cold["module_loads"]] == ["localmod"]
    assert run.cold["module_loads"][0]["status"] == "compiled"  # a cold build really happened

    assert snapshot(home) == before_home
    assert snapshot(project) == before_project
    assert run.leftover_temp() == []


def test_control_without_probe_does_write_there(venv_python, tmp_path):
    home, project = make_world(tmp_path / "bare")
    before_home, before_project = snapshot(home), snapshot(project)
    env = clean_env(home)
    proc = subprocess.run([str(venv_python), "main.py"], cwd=project, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    after_home, after_project = snapshot(home), snapshot(project)
    new_home = set(after_home) - set(before_home)
    assert any(p.startswith(".cache/warp/") and "wp_localmod_" in p for p in new_home), new_home
    assert any("__pycache__" in p for p in set(after_project) - set(before_project))
