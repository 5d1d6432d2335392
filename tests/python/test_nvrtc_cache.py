"""NVRTC's compile cache (12.9+, kept in CUDA_CACHE_PATH by the driver): what the machine's NVRTC
does is checked, not assumed from its version, and the cuda-cache-empty finding follows it. NVRTC
is in the CUDA toolkit on this machine and compiles without a GPU; whether it caches depends on a
CUDA driver (its cache is the driver's compute cache)."""

import ctypes
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, TARGETS

NVRTC = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64"
SOURCE = b'extern "C" __global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; }'
GPU_STREAM = ROOT / "tests" / "fixtures" / "streams" / "gpu_serial-warp1.19.0"


def nvrtc_library():
    for name in ("libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"):
        if (NVRTC / name).exists():
            return ctypes.CDLL(str(NVRTC / name))
    pytest.skip(f"no NVRTC under {NVRTC}")


def compile_twice(cache):
    """Compiles one source twice with NVRTC's cache trace, in a child process whose CUDA cache
    is `cache` (the driver reads the variable once): the two logs."""
    code = f"""
import ctypes, json, sys
lib = ctypes.CDLL({str(nvrtc_library()._name)!r})
logs = []
for _ in range(2):
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), {SOURCE!r}, b"twice.cu", 0, None, None)
    opts = (ctypes.c_char_p * 2)(b"--gpu-architecture=compute_75", b"--enable-cache-trace")
    rc = lib.nvrtcCompileProgram(prog, 2, opts)
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value)
    lib.nvrtcGetProgramLog(prog, buf)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    logs.append([rc, buf.value.decode(errors="replace")])
print(json.dumps(logs))
"""
    out = subprocess.run(["python3", "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         env=dict(os.environ, CUDA_CACHE_PATH=str(cache)))
    return json.loads(out.stdout)


def state_from(logs):
    (rc1, first), (rc2, second) = logs
    assert rc1 == rc2 == 0, logs
    if "retrieved cached" in second:
        return "caches"
    if "fail to load driver lib" in first + second:
        return "no-driver"
    return "not-cached"


def test_the_machines_nvrtc_cache_is_what_two_compiles_in_one_cache_say_and_the_finding_follows(tmp_path):
    nvrtc_library()
    state = state_from(compile_twice(tmp_path / "cuda-cache"))
    if state == "caches":
        assert any((tmp_path / "cuda-cache").rglob("*")), "NVRTC said it cached, and wrote nothing"
    # doctor checks the same way, in a private cache of its own
    subprocess.run([str(PROBE), "doctor", "--json", str(tmp_path / "doctor.json")], capture_output=True, text=True,
                   check=True, timeout=120)
    doctor = json.loads((tmp_path / "doctor.json").read_text())
    assert doctor["machine"]["nvrtc_cache"] == state, doctor["machine"]
    text = subprocess.run([str(PROBE), "doctor"], capture_output=True, text=True, check=True, timeout=120).stdout
    assert "NVRTC cache" in text
    # the finding follows the machine: six CUDA builds recorded on an H200, read back with this
    # machine's answer as their environment's
    run = tmp_path / "gpu_serial"
    shutil.copytree(GPU_STREAM, run)
    facts = json.loads((run / "run.json").read_text())
    facts["environment"]["nvrtc_cache"] = state
    (run / "run.json").write_text(json.dumps(facts))
    report = json.loads(subprocess.run([str(PROBE), "report", str(run), "--format", "json", "--history", "off"],
                                       capture_output=True, text=True, check=True, timeout=120).stdout)
    found = [f for f in report["findings"] if f["mechanism"] == "cuda-cache-empty"]
    if state == "no-driver":
        assert not found, "no driver: NVRTC keeps nothing, so no kept cache would serve a compile"
    else:
        (f,) = found
        assert f["cause"]["cuda_builds"] == 6 and 0 < f["cause"]["nvrtc_share"] <= 1, f["cause"]
        assert f["lever"] == "keep-cuda-cache" and f["cause"]["nvrtc_cache"] == state
        assert "NVRTC" in f["evidence"] and "CUDA_CACHE_PATH" in f["recommendation"]


def test_the_cuda_cache_lever_has_nothing_to_move_in_a_cpu_program(probe, venv_python):
    r = probe([venv_python, "cs1_late.py"], cwd=TARGETS / "diagnose",
              extra_args=["--whatif", "keep-cuda-cache", "--whatif-budget", "10000"])
    assert r.returncode == 0, r.stderr
    (w,) = r.report["whatif"]
    assert w["lever"] == "keep-cuda-cache" and w["verdict"] == "not-applied", w
    assert "built no CUDA module" in w["reason"]
    assert not [f for f in r.report["findings"] if f["mechanism"] in ("cuda-cache-empty", "lto-cache-empty")]
