"""warp-probe report: re-analysing and rendering saved reports, and refusing bad ones clearly."""

import json
import subprocess

import pytest


from conftest import PROBE

# one pytest-xdist worker for this file: its module fixtures are made once (conftest.ONE_WORKER)
pytestmark = [pytest.mark.quick, pytest.mark.xdist_group("test_cli_report")]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    from conftest import TARGETS, VENV_PYTHON

    out = tmp_path_factory.mktemp("rep") / "r.json"
    proc = subprocess.run(
        [str(PROBE), "measure", "--quiet", "--samples", "1", "--json", str(out), "--", str(VENV_PYTHON), "late_kernel.py"],
        cwd=TARGETS,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def run(*args):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True)


def test_report_renders_the_saved_measurement(measured, tmp_path):
    text = run("report", measured)
    assert text.returncode == 0
    assert "hash churn" in text.stdout and "__main__" in text.stdout
    out = tmp_path / "again.json"
    j = run("report", measured, "--format", "json", "-o", out)
    assert j.returncode == 0 and j.stdout == ""
    again = json.loads(out.read_text())
    original = json.loads(measured.read_text())
    assert again["summary"] == original["summary"]  # re-analysis of the same samples agrees


@pytest.mark.parametrize(
    "content, code, words",
    [
        ("{not json", 65, "not JSON"),
        ("[1, 2]", 65, "not a warp-probe report"),
        ('{"schema_version": 99}', 65, "schema_version 99"),
        ('{"schema_version": 1, "samples": "many"}', 65, "malformed report"),
    ],
)
def test_bad_reports_get_one_line_and_their_code(tmp_path, content, code, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    proc = run("report", bad)
    assert proc.returncode == code
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and "terminate" not in proc.stderr


def test_missing_report(tmp_path):
    proc = run("report", tmp_path / "nope.json")
    assert proc.returncode == 66
    assert "cannot open" in proc.stderr


def test_help_lists_subcommands_and_exit_codes():
    proc = run("--help")
    assert proc.returncode == 0
    for word in ("measure", "report", "Exit codes", "127 command not found"):
        assert word in proc.stdout
