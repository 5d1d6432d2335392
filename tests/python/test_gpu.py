"""The CUDA scenarios of tests/gpu on a machine with a CUDA device; skipped, with the reason, elsewhere.

They need an NVIDIA GPU: on the development and CI machines (no GPU) this test is reported as
skipped with the device status doctor found. On the lent GPU machine they run through
tests/gpu/run_on_device.sh; their last results are in references/measurement.md.
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import PROBE, ROOT, VENV_PYTHON


def test_cuda_scenarios_on_a_cuda_device(tmp_path):
    facts_path = tmp_path / "doctor.json"
    subprocess.run([str(PROBE), "doctor", "--python", str(VENV_PYTHON), "--json", str(facts_path)],
                   capture_output=True, text=True, check=True)
    machine = json.loads(facts_path.read_text())["machine"]
    if not machine["gpus"]:
        pytest.skip(f"{machine['cuda_status']}: the CUDA scenarios (CS-5, CS-7, CS-12, CS-13, compute-cache "
                    "isolation, PTX loads) need an NVIDIA GPU; run tests/gpu/run_on_device.sh on one")
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu" / "run_scenarios.py"), "--probe", str(PROBE),
                           "--python", str(VENV_PYTHON), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
