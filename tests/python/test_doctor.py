"""warp-probe doctor on a machine without a GPU: plain facts, nothing created."""

import json
import re
import os
import subprocess

from conftest import PROBE, VENV_PYTHON


def doctor(tmp_path, **env):
    out = tmp_path / "doctor.json"
    full_env = dict(os.environ, HOME=str(tmp_path / "home"), **env)
    full_env.pop("WARP_CACHE_PATH", None) if "WARP_CACHE_PATH" not in env else None
    proc = subprocess.run([str(PROBE), "doctor", "--python", str(VENV_PYTHON), "--json", str(out)],
                          capture_output=True, text=True, env=full_env)
    return proc, json.loads(out.read_text())


def test_doctor_reports_warp_cache_toolkit_and_no_device(tmp_path):
    (tmp_path / "home").mkdir()
    proc, facts = doctor(tmp_path)
    assert proc.returncode == 0, proc.stderr
    t = facts["target"]
    assert t["warp_version"] == "1.19.0" and t["python_version"].startswith("3.11")
    assert t["cache_dir"] == str(tmp_path / "home" / ".cache" / "warp" / "1.19.0")
    assert t["cache_exists"] is False
    assert not (tmp_path / "home" / ".cache").exists(), "doctor created the cache"
    assert not (tmp_path / "home" / ".nv").exists(), "doctor's device query touched the compute cache"
    m = facts["machine"]
    if facts["built_with_cuda_toolkit"]:
        assert m["nvrtc_version"] and m["cuda_toolkit"]
        assert m["gpus"] == [] and m["cuda_status"].startswith("no CUDA device")
        assert "no CUDA device" in proc.stdout
        assert re.search(r"NVRTC +" + re.escape(m["nvrtc_version"]) + r" from nvrtcVersion \(\S*libnvrtc\.so", proc.stdout), proc.stdout
    assert "Warp          1.19.0" in proc.stdout
    # whether build work can be counted in instructions, and if not why: said, never assumed
    if facts["instruction_counts"]:
        assert facts["instruction_counts_why_not"] == "" and "counted per build" in proc.stdout
    else:
        assert facts["instruction_counts_why_not"] and "instructions  not counted: " in proc.stdout, proc.stdout


def test_doctor_follows_warp_cache_path_and_survives_a_python_without_warp(tmp_path):
    (tmp_path / "home").mkdir()
    proc, facts = doctor(tmp_path, WARP_CACHE_PATH=str(tmp_path / "wc"))
    assert facts["target"]["cache_dir"] == str(tmp_path / "wc" / "1.19.0")
    assert facts["target"]["cache_source"] == "WARP_CACHE_PATH"
    assert not (tmp_path / "wc").exists()
    bare = subprocess.run([str(PROBE), "doctor", "--python", "/usr/bin/python3"], capture_output=True, text=True)
    assert bare.returncode == 0 and "not importable with this Python" in bare.stdout
