"""The shim's side of the record contract (contracts/shim_records.schema.json): every record
the shim writes in a real Warp process validates strictly (no field the contract does not
name), the shim's contract number is the schema's, and the shim's lever table names the same
levers as the engine's. The runner's side (a record outside the contract is rejected by name)
is tests/unit/test_records.cpp."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import BUILD, PROBE, ROOT

SCHEMA = json.loads((ROOT / "contracts" / "shim_records.schema.json").read_text())
SHIM_DIR = BUILD / "share" / "xwarp" / "shim"

# Touches every record type the shim writes on the CPU: a config assignment, modules, loads,
# a kernel defined after its module loaded (dirty), module options set late, a generic
# instance, a module="unique" kernel, a tape and a cache clear (calls), a cache variable set
# (environ), and the exit record with the lever's counts.
PROGRAM = """
import os
from typing import Any

import warp as wp

wp.config.enable_backward = True
os.environ["CUDA_CACHE_MAXSIZE"] = "1000000"


@wp.kernel
def first(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


@wp.kernel
def generic(a: wp.array(dtype=Any)):
    a[wp.tid()] = a.dtype(2.0)


a = wp.zeros(4, dtype=float, requires_grad=True)
wp.launch(first, dim=4, inputs=[a])


@wp.kernel
def late(a: wp.array(dtype=float)):
    a[wp.tid()] = 3.0


wp.launch(late, dim=4, inputs=[a])
wp.launch(generic, dim=4, inputs=[wp.zeros(4, dtype=wp.float64)])
wp.set_module_options({"max_unroll": 8})
wp.launch(late, dim=4, inputs=[a])


def make():
    @wp.kernel(module="unique")
    def solo(a: wp.array(dtype=float)):
        a[wp.tid()] = 4.0

    return solo


wp.launch(make(), dim=4, inputs=[a])
with wp.Tape():
    wp.launch(first, dim=4, inputs=[a])
wp.clear_kernel_cache()
print("ok")
"""


def record_validator(record_type):
    return jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{record_type}"})


@pytest.mark.quick
def test_every_record_a_real_shim_writes_is_inside_the_contract(tmp_path, venv_python):
    records_dir = tmp_path / "records"
    records_dir.mkdir()
    (tmp_path / "program.py").write_text(PROGRAM)
    env = dict(
        os.environ,
        XWARP_RECORD_DIR=str(records_dir),
        PYTHONPATH=str(SHIM_DIR),
        WARP_CACHE_PATH=str(tmp_path / "cache"),
        XWARP_WHATIF=json.dumps({"lever": "keep-cache", "params": {}}),
    )
    proc = subprocess.run([str(venv_python), "program.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (stream,) = list(records_dir.glob("proc-*.jsonl"))
    records = [json.loads(line) for line in stream.read_text().splitlines()]
    seen = {r["type"] for r in records}
    assert seen >= {"process", "warp", "config_set", "module", "load", "dirty", "call", "exit"}, seen
    calls = {r["function"] for r in records if r["type"] == "call"}
    assert calls >= {"set_module_options", "kernel", "Tape", "clear_kernel_cache", "environ"}, calls
    assert records[0]["type"] == "process" and records[0]["contract"] == SCHEMA["x-contract-version"]
    for r in records:
        assert r["type"] in SCHEMA["properties"]["type"]["enum"], r
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in record_validator(r["type"]).iter_errors(r)]
        assert not errors, (r["type"], errors)
    exit_record = records[-1]
    assert exit_record["type"] == "exit"
    assert exit_record["whatif"]["applied"].get("clear_kernel_cache_skipped") == 1


def test_the_recorded_streams_are_inside_the_contract_strictly():
    streams = sorted((ROOT / "tests" / "fixtures" / "streams").rglob("proc-*.jsonl"))
    assert len(streams) > 40
    for stream in streams:
        for line in stream.read_text().splitlines():
            r = json.loads(line)
            errors = [e.message for e in record_validator(r["type"]).iter_errors(r)]
            assert not errors, (stream, r["type"], errors)


def test_the_contract_number_and_the_lever_tables_agree_across_the_two_languages():
    sys.path.insert(0, str(ROOT / "runtime" / "shim"))
    try:
        from xwarp_shim import levers, recorder
    finally:
        sys.path.pop(0)
    assert recorder.CONTRACT == SCHEMA["x-contract-version"]
    registry = json.loads(subprocess.run([str(PROBE), "mechanisms", "--json"], capture_output=True, text=True,
                                         check=True).stdout)
    engine = [lever["name"] for lever in registry["levers"]]
    assert engine == list(levers.LEVERS), (engine, list(levers.LEVERS))
    for lever in registry["levers"]:
        assert (ROOT / lever["source"]).is_file(), lever
        assert lever["changes"] and lever["effects"], lever
