"""Diagnoses on real Warp (CPU): one real run per mechanism family, one sample each. The logic of
every detector is tested in milliseconds on recorded real-Warp streams (tests/unit/test_streams.cpp);
these runs show that the whole pipeline (shim, runner, analysis) finds each family on a live
Warp. How close the savings estimates come is a calibration benchmark, not a gate:
bench/calibrate_savings.py."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import PROBE, TARGETS

DIAG = TARGETS / "diagnose"
COMPOUND = TARGETS / "compound"
CHURN = {"CS-1", "CS-2", "CS-3", "CS-5", "CS-6", "CS-9", "dependency-change", "unexplained-rebuild",
         "hash-thrash", "same-hash-rebuilt", "preload-block-dim"}

pytestmark = pytest.mark.quick


def line_of(path, text):
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if text in line:
            return n
    raise AssertionError(f"{text!r} not in {path}")


def findings(report, mechanism):
    return [f for f in report["findings"] if f["mechanism"] == mechanism]


def one(report, mechanism):
    found = findings(report, mechanism)
    assert len(found) == 1, (mechanism, [f["mechanism"] for f in report["findings"]])
    return found[0]


@pytest.fixture
def measured(probe, venv_python):
    def run(program, cwd):
        r = probe([venv_python, program], cwd=cwd, samples=1)
        assert r.returncode == 0, r.stdout + r.stderr
        return r.report

    return run


def test_churn_kernel_defined_after_load(measured):
    r = measured("cs1_late.py", DIAG)
    f = one(r, "CS-1")
    change = f["cause"]["changes"][0]
    assert change["kind"] == "kernel-set-change" and change["detail"]["added"] == ["stage_b"]
    assert f["location"]["line"] == line_of(DIAG / "cs1_late.py", "def stage_b") - 1
    assert f["locations"][0]["line"] == f["location"]["line"]
    assert f["savings_ms"] > 0 and f["guide"] == "cs-1" and f["lever"] == ""


def test_generic_family_across_block_dims(measured):
    r = measured("generic_block_dims.py", COMPOUND)
    assert findings(r, "CS-1") == []  # late generic instances are never "kernel added"
    g = one(r, "CS-6")
    assert {c["kind"] for c in g["cause"]["changes"]} == {"generic-instance"}
    spread = one(r, "CS-5")
    assert spread["cause"]["block_dims"] == [64, 128]
    assert findings(r, "CS-4") == []
    (declined,) = [d for d in r["declined"] if d["mechanism"] == "CS-4"]
    assert "block_dim" in declined["reason"]


def test_cache_thrown_away_with_every_cause_located(measured):
    r = measured("cache_many_causes.py", COMPOUND)
    f = one(r, "CS-2")
    src = COMPOUND / "cache_many_causes.py"
    lines = {l["line"] for l in f["locations"]}
    assert lines == {line_of(src, 'os.environ["CUDA_CACHE_DISABLE"]'), line_of(src, "wp.config.kernel_cache_dir ="),
                     line_of(src, "cache_kernels = False"), line_of(src, "wp.clear_kernel_cache()")}
    (per_run,) = [l for l in f["locations"] if "kernel_cache_dir" in l["what"]]
    assert "a new directory each run" in per_run["what"]


def test_unique_modules_through_a_factory_default(measured):
    r = measured("unique_factory.py", COMPOUND)
    f = one(r, "CS-9")
    src = COMPOUND / "unique_factory.py"
    assert f["location"]["line"] == line_of(src, 'def make_filter(weight, module="unique")')
    callers = {l["line"] for l in f["locations"] if "called here" in l["what"]}
    assert callers == {line_of(src, "filters = ["), line_of(src, "filters.append")}


def test_option_set_after_import_never_arrives(measured):
    r = measured("option_late.py", DIAG)
    f = one(r, "option-not-arrived")
    assert f["module"] == "lib_heavy" and f["cause"]["option"] == "enable_backward"
    assert f["location"]["line"] == line_of(DIAG / "option_late.py", "enable_backward = False")
    assert f["savings_ms"] is None  # not measured: not claimed (the what-if replay measures it)
    assert f["lever"] == "options-at-creation"


def test_preload_at_a_block_dim_no_launch_uses(measured):
    r = measured("preload_cpu.py", DIAG)
    f = one(r, "preload-block-dim")
    assert f["cause"]["launched_block_dims"] == [64] and f["cause"]["built_block_dim"] == 1
    assert f["location"]["line"] == line_of(DIAG / "preload_cpu.py", "wp.load_module")


def test_backward_advisory_only_where_nothing_differentiates(measured):
    grad = measured("grad.py", DIAG)
    assert [l["adjoint"] for l in grad["samples"][0]["cold"]["launches"]] == [False, True]
    assert findings(grad, "CS-10") == []
    assert not CHURN & {f["mechanism"] for f in grad["findings"]}


def test_every_mechanism_of_the_registry_has_a_section_in_the_guide():
    proc = subprocess.run([str(PROBE), "mechanisms", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    registry = json.loads(proc.stdout)["mechanisms"]
    assert len(registry) >= 22, [m["id"] for m in registry]
    root = Path(__file__).resolve().parents[2]
    guide = (root / "references" / "mechanisms.md").read_text()
    sections = set(re.findall(r"^## (\S+)$", guide, re.M))
    assert {m["guide"] for m in registry} <= sections, sorted({m["guide"] for m in registry} - sections)
    for m in registry:
        assert (root / m["detector"]).is_file(), m
        assert m["lever"] or m["no_lever"], f"{m['id']}: neither a lever nor why it has none"
    text = subprocess.run([str(PROBE), "mechanisms"], capture_output=True, text=True).stdout
    assert "CS-13" in text and "parallel-preload" in text
