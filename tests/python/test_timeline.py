"""See it as it happens (real Warp, CPU): the build timeline in text, HTML and as a Chrome
trace that follows the trace-event format; provisional findings after the first sample; and
--samples auto stopping early on a stable program and not on one that never settles."""

import json
import subprocess

import jsonschema
import pytest

from conftest import PROBE, TARGETS

# The trace-event format's complete and metadata events, as Perfetto and chrome://tracing read
# them (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
TRACE_SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "traceEvents": {
            "type": "array",
            "minItems": 1,
            "items": {
                "oneOf": [
                    {"type": "object", "required": ["name", "ph", "ts", "dur", "pid", "tid"],
                     "properties": {"ph": {"const": "X"}, "ts": {"type": "number", "minimum": 0},
                                    "dur": {"type": "number", "minimum": 0}, "pid": {"type": "integer"},
                                    "tid": {"type": "integer"}, "name": {"type": "string"}, "cat": {"type": "string"},
                                    "args": {"type": "object"}}},
                    {"type": "object", "required": ["name", "ph", "pid", "args"],
                     "properties": {"ph": {"const": "M"}, "name": {"enum": ["process_name", "thread_name"]},
                                    "args": {"type": "object", "required": ["name"]}}},
                ]
            },
        },
    },
}


@pytest.mark.quick
def test_timeline_in_text_html_and_a_chrome_trace(probe, venv_python, tmp_path):
    trace = tmp_path / "trace.json"
    r = probe([venv_python, "late_kernel.py"], samples=1, extra_args=["--trace", trace])
    assert r.returncode == 0, r.stderr
    timeline = r.report["summary"]["timeline"]
    loads = [s for s in timeline["spans"] if s["kind"] == "load"]
    assert len(loads) == 2 and all(s["status"] == "compiled" for s in loads)
    assert loads[0]["start_ms"] < loads[1]["start_ms"]
    assert {s["kind"] for s in timeline["spans"]} >= {"load", "codegen", "compile"}
    assert all(l["triggered_by"] for l in loads)  # each build waited for by a launch
    assert "Build timeline" in r.stdout and "waited by the launch of" in r.stdout

    events = json.loads(trace.read_text())
    jsonschema.validate(events, TRACE_SCHEMA)
    complete = [e for e in events["traceEvents"] if e["ph"] == "X"]
    assert {e["args"]["module"] for e in complete} == {"__main__"}
    assert {e["args"]["block_dim"] for e in complete} == {1}
    assert any(e["name"] == "thread_name" for e in events["traceEvents"])
    report_file = r.tmpdir.parent / "report-0.json"
    again = subprocess.run([str(PROBE), "report", str(report_file), "--format", "trace"], capture_output=True, text=True)
    assert again.returncode == 0 and json.loads(again.stdout) == events
    html = subprocess.run([str(PROBE), "report", str(report_file), "--format", "html"], capture_output=True, text=True).stdout
    assert 'data-xwarp="timeline"' in html and "<title>load __main__" in html


def test_provisional_findings_after_the_first_sample(venv_python, tmp_path):
    proc = subprocess.run([str(PROBE), "measure", "--samples", "2", "--", str(venv_python), "late_kernel.py"],
                          cwd=TARGETS, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    provisional = next(i for i, l in enumerate(lines) if l.startswith("[provisional after sample 1 of 2]"))
    assert "[CS-1]" in lines[provisional + 1]
    # it came before the second sample ran
    assert any(l.startswith("[2/2] cold pass") for l in lines[provisional:])


def test_samples_auto_stops_on_a_stable_program_and_not_on_a_noisy_one(probe, venv_python):
    stable = probe([venv_python, "clean.py"], extra_args=["--samples", "auto", "--max-samples", "5"])
    assert stable.returncode == 0, stable.stderr
    settings = stable.report["settings"]
    assert settings["sampling"] == "auto (2 to 5)"
    assert len(stable.report["samples"]) < 5 and settings["stopped_because"].startswith("settled after")
    noisy = probe([venv_python, TARGETS / "noisy" / "new_identity_each_run.py"],
                  extra_args=["--samples", "auto", "--max-samples", "3"])
    assert noisy.returncode == 0, noisy.stderr
    assert len(noisy.report["samples"]) == 3
    assert noisy.report["settings"]["stopped_because"].startswith("reached --max-samples 3")
