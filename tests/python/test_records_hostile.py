"""What a measured program or a report can do to the probe's reading of it, each case one that
failed before: a record the shim could not write as JSON, a gate judged on a pass that lost
data, a records folder holding a FIFO or a link to /dev/zero, a command that takes its parent
for init, a damaged history store, inputs whose types ended in an internal error (70), and text
that escaped the text report's escaping."""

import json
import os
import shutil
import sqlite3
import subprocess
import time

import pytest

from conftest import PROBE, TARGETS, VENV_PYTHON

HOSTILE = TARGETS / "hostile"


def cli(*args, env=None, timeout=120, input=None, cwd=None):
    return subprocess.run([str(PROBE), *args], capture_output=True, env=env, timeout=timeout, input=input, cwd=cwd)


@pytest.fixture(scope="module")
def lossy(tmp_path_factory):
    """One measured run of a program whose texts are not UTF-8 (argv and a factory's argument)."""
    root = tmp_path_factory.mktemp("lossy")
    out = root / "lossy.json"
    env = dict(os.environ, TMPDIR=str(root), XWARP_HISTORY="off")
    done = cli("measure", "--quiet", "--samples", "1", "--json", str(out), "--cwd", str(HOSTILE), "--",
               str(VENV_PYTHON), "lossy_names.py", b"caf\xe9", env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return root, out, json.loads(out.read_text())


def test_texts_that_are_not_utf8_keep_their_records_and_the_gate_counts_every_identity(lossy):
    root, out, report = lossy
    cold = report["samples"][0]["cold"]
    # both identities are there: the factory's, whose argument was a file name that is not UTF-8
    built = sorted(l["module"] if l["module"] == "__main__" else l["module"].split("_")[0]
                   for l in cold["module_loads"] if l["status"] == "compiled")
    assert built == ["__main__", "make"], built
    assert cold["records_lost"] == "", cold["records_lost"]
    (proc,) = cold["processes"]
    assert proc["argv"][-1] == "caf\\xe9" and report["environment"]["warp_version"], proc["argv"]
    made = [k["factory"] for l in cold["module_loads"] for k in l["snapshot"]["kernels"] if k.get("factory")]
    assert made and made[0]["args"][0][2] == {"lit": "caf\\xe9.dat"}, made
    # the unittest case whose id() is no string ran its launch: the program saw no exception
    assert "ok True 2" in cold["stdout_tail"], cold["stdout_tail"]
    # a PYTEST_CURRENT_TEST the program wrote itself is no test
    assert all(not l.get("test") for l in cold["module_loads"]), [l.get("test") for l in cold["module_loads"]]
    gate = cli("check", str(out), "--budget", "identities<=1", "--history", "off")
    assert gate.returncode == 8 and b"identities" in gate.stdout, gate.stdout + gate.stderr


def test_a_records_folder_with_a_fifo_and_a_link_to_dev_zero_neither_hangs_nor_exhausts_the_probe(tmp_path):
    out = tmp_path / "planted.json"
    kept = tmp_path / "kept"
    env = dict(os.environ, TMPDIR=str(tmp_path), XWARP_HISTORY="off")
    started = time.monotonic()
    done = cli("measure", "--quiet", "--samples", "1", "--timeout", "120", "--json", str(out), "--keep-records", str(kept),
               "--cwd", str(HOSTILE), "--", str(VENV_PYTHON), "plant_records.py", env=env, timeout=300)
    # the program ran to its end (it said so); its pass lost data, so no sample is good
    report = json.loads(out.read_text())
    cold = report["samples"][0]["cold"]
    assert "planted True" in cold["stdout_tail"], cold["stdout_tail"]  # its parent was not pid 1
    assert "FIFO" in cold["records_lost"] and "symbolic link" in cold["records_lost"], cold["records_lost"]
    assert done.returncode == 1 and b"not all read" in done.stdout + done.stderr, done.stdout[-2000:]
    assert time.monotonic() - started < 120
    # a recorded folder holding a FIFO is read the same way (never opened to wait for a writer)
    os.mkfifo(kept / "sample-1" / "cold" / "proc-9-9.jsonl")
    shown = cli("report", str(kept), "--format", "json", "--history", "off", timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "FIFO" in json.loads(shown.stdout)["samples"][0]["cold"]["records_lost"]


def test_report_from_standard_input_is_refused_at_its_first_byte_when_it_is_not_json():
    started = time.monotonic()
    done = cli("report", "-", input=b"x" * (64 << 20), timeout=60)
    assert done.returncode == 65 and b"does not begin with a JSON object" in done.stderr, done.stderr
    assert time.monotonic() - started < 30


@pytest.fixture(scope="module")
def base_report(lossy):
    return lossy[2]


def with_call(report, function, args):
    r = json.loads(json.dumps(report))
    r["samples"][0]["cold"]["processes"][0]["calls"].append(
        {"function": function, "args": args, "file": None, "line": None, "seq": 999, "t_ms": 1.0})
    return r


@pytest.mark.parametrize("change, where", [
    (lambda r: with_call(r, "test_use", {"test": 5, "module": "m", "device": "cpu"}), "/args/test"),
    (lambda r: with_call(r, "results", {"a": 3}), "/args/a"),
    (lambda r: dict(r, samples=[dict(r["samples"][0], cold=dict(r["samples"][0]["cold"], nvrtc_traces=[
        {"module_dir": "wp_m_abc1234", "file": "t.json", "hash_prefix": "abc1234", "events": [{"name": 3, "ts": "x"}]}]))]),
     "/nvrtc_traces/0/events/0"),
    # a load's phase is one of the four the shim writes (a timeline span's kind), never free text
    (lambda r: dict(r, samples=[dict(r["samples"][0], cold=dict(r["samples"][0]["cold"], module_loads=[
        dict(load, phases=[{"name": "codegen\\x1b[2J", "start_ms": load["t_start_ms"], "ms": 1.0}])
        for load in r["samples"][0]["cold"]["module_loads"]]))]),
     "/phases/0/name"),
])
def test_a_wrongly_typed_field_the_analysis_reads_is_an_unreadable_report_named_by_its_path(base_report, tmp_path, change,
                                                                                             where):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(change(base_report)))
    done = cli("report", str(path), "--history", "off")
    assert done.returncode == 65 and where.encode() in done.stderr, done.stderr


def test_options_and_outputs_that_are_not_the_programs_fault_get_their_own_codes(lossy, tmp_path):
    root, out, _ = lossy
    bad_utf8 = cli("check", str(out), "--budget", b"identities<=1\xff", "--history", "off")
    assert bad_utf8.returncode == 64 and b"not UTF-8" in bad_utf8.stderr, bad_utf8.stderr
    keep = cli("measure", "--quiet", "--samples", "1", "--keep-records", "/dev/full", "--", "/bin/true",
               env=dict(os.environ, XWARP_HISTORY="off"))
    assert keep.returncode == 73, keep.stderr
    hang = tmp_path / "python3"
    hang.write_text("#!/bin/sh\nexec sleep 120\n")
    hang.chmod(0o755)
    started = time.monotonic()
    doctor = cli("doctor", "--python", str(hang), "--timeout", "2", timeout=60)
    assert doctor.returncode == 0 and b"did not answer within 2 s" in doctor.stdout, doctor.stdout
    assert time.monotonic() - started < 45


def test_the_text_report_doubles_every_backslash_a_report_gives_it(base_report, tmp_path):
    r = json.loads(json.dumps(base_report))
    r["settings"]["sampling"] = "auto \\x1b[31m"
    r["settings"]["stopped_because"] = "settled \\u202e"
    path = tmp_path / "slashes.json"
    path.write_text(json.dumps(r))
    done = cli("report", str(path), "--format", "text", "--history", "off")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "auto \\\\x1b[31m" in text and "settled \\\\u202e" in text and "\x1b" not in text, text[:3000]


def test_a_store_with_damaged_pages_is_moved_aside_and_the_next_run_is_stored(base_report, tmp_path):
    store = tmp_path / "history.sqlite3"
    reports = []
    for n in range(4):  # several reports: the damage lands in a page past the header's
        path = tmp_path / f"r{n}.json"
        path.write_text(json.dumps(dict(base_report, label=f"run {n}")))
        reports.append(path)
    done = cli("history", "import", *map(str, reports[:3]), "--history", str(store))
    assert done.returncode == 0, done.stderr
    db = sqlite3.connect(store)  # closed before the file is damaged: `with` only commits, and an open
    try:                         # connection could write its view back (a checkpoint) after the damage
        page = db.execute("PRAGMA page_size").fetchone()[0]
        pages = db.execute("PRAGMA page_count").fetchone()[0]
    finally:
        db.close()
    assert pages > 4
    data = bytearray(store.read_bytes())
    # every page but the first (the header and the schema; page n starts at (n - 1) * page), from its
    # b-tree header on: a page type of 0xff is corrupt wherever it is read, while damaged cell offsets
    # alone were masked into the page and read as whatever lay there (a write then passed, now and then)
    for p in range(1, pages):
        data[p * page: p * page + 64] = b"\xff" * 64
    store.write_bytes(bytes(data))
    done = cli("history", "import", str(reports[3]), "--history", str(store))
    assert done.returncode == 0, done.stdout + done.stderr
    assert b"moved aside" in done.stderr + done.stdout, done.stdout + done.stderr
    assert list(tmp_path.glob("history.sqlite3.corrupt-*"))
    listed = cli("history", "list", "--history", str(store))
    assert b"run 3" in listed.stdout, listed.stdout


def test_a_cs2_patch_removes_only_a_statement_that_throws_the_cache_away(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n\n"
        "wp.clear_kernel_cache()\na = wp.zeros(1, dtype=float)\nwp.launch(k, dim=1, inputs=[a])\nprint('ok')\n")
    out = tmp_path / "r.json"
    env = dict(os.environ, TMPDIR=str(tmp_path), XWARP_HISTORY=str(tmp_path / "h.sqlite3"))
    done = cli("measure", "--quiet", "--samples", "1", "--json", str(out), "--cwd", str(project), "--",
               str(VENV_PYTHON), "app.py", env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    for p in report["samples"][0]["cold"]["processes"]:
        for c in p["calls"]:
            if c["function"] == "clear_kernel_cache":
                c["line"] = 11  # a report that names the launch instead
    hostile = tmp_path / "moved.json"
    hostile.write_text(json.dumps(report))
    fixed = tmp_path / "fix.json"
    done = cli("fix", str(hostile), "--json", str(fixed), "--out", str(tmp_path / "patches"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    for f in json.loads(fixed.read_text())["fixes"]:
        assert "-wp.launch" not in f["patch"], f["patch"]
    shutil.rmtree(project)


def test_a_link_planted_as_the_recordings_run_json_is_never_written_through(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    (kept / "run.json").symlink_to(victim)
    out = tmp_path / "true.json"
    env = dict(os.environ, TMPDIR=str(tmp_path), XWARP_HISTORY="off")
    done = cli("measure", "--quiet", "--samples", "1", "--json", str(out), "--keep-records", str(kept), "--",
               "/bin/true", env=env, timeout=120)
    assert victim.read_text() == "the user's own file\n"
    assert (kept / "run.json").is_symlink()
    report = json.loads(out.read_text())
    assert any("is a symbolic link" in w for w in report["warnings"]), (done.returncode, report["warnings"], done.stderr)
