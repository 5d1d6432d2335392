"""A hostile user's cases: processes that escape the target's process group, a probe killed with
SIGKILL, reports that are deep, retyped or not reports at all, options that are not numbers,
commands that cannot run, and text that would drive the terminal or reverse the report's own
words. Each failed before the hardening (exit 139, 70, a process left running, raw escapes)."""

import json
import os
import re
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PROBE, TARGETS

# one pytest-xdist worker for this file: its module fixtures are made once (conftest.ONE_WORKER)
pytestmark = pytest.mark.xdist_group("test_hardening")

HOSTILE = TARGETS / "hostile"


def wait_for(predicate, timeout=30.0, what="condition"):
    """Polls an observable event (a file, a process) instead of sleeping a guessed time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def processes_running(argv_text):
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, PermissionError, IndexError):
            continue
        if cmdline == argv_text and state not in ("Z", "X"):
            found.append(int(proc.name))
    return found


def kill_all(argv_text):
    for pid in processes_running(argv_text):
        os.kill(pid, signal.SIGKILL)


@pytest.mark.quick
def test_descendants_in_new_sessions_are_killed_and_counted(probe, venv_python):
    try:
        r = probe([venv_python, HOSTILE / "escape.py"], samples=1)
        assert r.returncode == 0, r.stderr
        assert processes_running("sleep 1007") == [] and processes_running("sleep 1008") == []
        cold = r.report["samples"][0]["cold"]
        assert cold["stray_processes_killed"] == 2
        assert any("killed 2 process(es)" in w for w in r.report["summary"]["warnings"])
        assert r.leftover_temp() == []
    finally:
        kill_all("sleep 1007")
        kill_all("sleep 1008")


def test_a_probe_killed_with_sigkill_takes_its_target_along_and_the_next_run_cleans_up(venv_python, tmp_path):
    # without a PID namespace (which takes the sleeper along at once: the daemon test above): the
    # pid the target writes is then one this test can follow, and the sleeper outlives the probe
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    marker = tmp_path / "target.pid"
    env = dict(os.environ, TMPDIR=str(tmpdir), XWARP_PIDNS="off")
    probe = subprocess.Popen([str(PROBE), "measure", "--quiet", "--samples", "1", "--", str(venv_python),
                              str(HOSTILE / "sleeper.py"), str(marker)], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        target = int(wait_for(lambda: marker.exists() and marker.read_text(), what="the target to start"))
        wait_for(lambda: processes_running("sleep 1011"), what="the target's sleeper")
        probe.send_signal(signal.SIGKILL)
        probe.wait(timeout=30)
        # the target dies with the probe (PR_SET_PDEATHSIG)
        wait_for(lambda: not Path(f"/proc/{target}").exists()
                 or (Path(f"/proc/{target}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")),
                 what="the target to die with the probe")
        leftovers = [p.name for p in tmpdir.iterdir() if p.name.startswith("xwarp-")]
        assert leftovers, "a probe killed with SIGKILL leaves its temporary directory: nothing to clean up"
        assert processes_running("sleep 1011"), "the sleeper is in a session of its own: it outlived the probe"
        # the next probe run removes what the dead probe left, and kills its leftover processes
        nxt = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--json", str(tmp_path / "r.json"),
                              "--", "true"], env=env, capture_output=True, text=True)
        assert nxt.returncode == 0, nxt.stderr
        assert [p.name for p in tmpdir.iterdir() if p.name.startswith("xwarp-")] == []
        assert processes_running("sleep 1011") == []
        warnings = json.loads((tmp_path / "r.json").read_text())["warnings"]
        assert any("cleaned up after an earlier probe" in w for w in warnings), warnings
    finally:
        if probe.poll() is None:
            probe.kill()
        kill_all("sleep 1011")


SESSION_OF = "cut -d' ' -f6 /proc/{}/stat"
# A daemon that leaves the group, the session and the environment (so no token marks it): sh
# waits until the child has its own session, so that the group kill cannot take it first.
DAEMON = ("setsid env -i sleep {n} & until [ \"$(" + SESSION_OF.format("$!") + ")\" != \"$(" + SESSION_OF.format("$$")
          + ")\" ]; do :; done")


def cgroups_left(tokens_file):
    """The cgroups this test's own runs made and left: each run's command wrote its probe token
    (XWARP_PROBE_TOKEN, the cgroup's name) into tokens_file. Another probe's cgroups on the same
    machine are not this test's to judge."""
    if not Path("/sys/fs/cgroup").is_dir() or not tokens_file.exists():
        return []
    tokens = {t for t in tokens_file.read_text().split() if t}
    return [str(p) for p in Path("/sys/fs/cgroup").glob("**/xwarp-*")
            if p.is_dir() and p.name.removeprefix("xwarp-") in tokens]


# A daemon that also moves itself into the machine's root cgroup (root may): only the PID
# namespace holds it then.
LEAVES_CGROUP = "setsid sh -c 'echo 0 > /sys/fs/cgroup/cgroup.procs 2>/dev/null; exec env -i sleep {n}' & " + \
    "until [ \"$(" + SESSION_OF.format("$!") + ")\" != \"$(" + SESSION_OF.format("$$") + ")\" ]; do :; done"


@pytest.mark.parametrize("containment", ["pid-namespace", "cgroup", "process-tree"])
def test_a_daemon_with_an_empty_environment_never_outlives_a_run_nor_a_killed_probe(tmp_path, containment):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = dict(os.environ, TMPDIR=str(tmpdir))
    if containment == "pid-namespace":
        if os.geteuid() != 0:
            pytest.skip("a PID namespace takes CAP_SYS_ADMIN: as another user the cgroup or the tree holds the run")
        daemon_script = LEAVES_CGROUP
    else:
        env["XWARP_PIDNS"] = "off"
        if containment == "process-tree":
            env["XWARP_CGROUP"] = "off"  # the record of the tree instead
        daemon_script = DAEMON
    out = tmp_path / "r.json"
    tokens = tmp_path / "tokens"
    note_token = f'echo "$XWARP_PROBE_TOKEN" >> {tokens}; '
    try:
        done = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--json", str(out),
                               "--", "sh", "-c", note_token + daemon_script.format(n=1021)], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        wait_for(lambda: processes_running("sleep 1021") == [], what="the daemon's end", timeout=10)
        sample = json.loads(out.read_text())["samples"][0]
        assert sample["cold"]["stray_processes_killed"] == 1 and sample["warm"]["stray_processes_killed"] == 1
        made = sample["cold"]["containment"]
        assert made == containment or (containment == "cgroup" and made == "process-tree" and os.geteuid() != 0), made
        assert tokens.read_text().count("\n") == 2  # a cold and a warm pass, each its own token
        assert [p.name for p in tmpdir.iterdir()] == [] and cgroups_left(tokens) == []

        # the probe killed with -9 while the daemon runs
        probe = subprocess.Popen([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--",
                                  "sh", "-c", note_token + daemon_script.format(n=1022) + "; exec sleep 1023"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        daemon = wait_for(lambda: processes_running("sleep 1022"), what="the daemon")[0]
        if containment == "pid-namespace":
            # its namespace ends with the probe's child: nothing is left for a later run to clean
            probe.send_signal(signal.SIGKILL)
            probe.wait(timeout=30)
            wait_for(lambda: processes_running("sleep 1022") == [], what="the daemon's end with its namespace",
                     timeout=10)
            nxt = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--", "true"],
                                 env=env, capture_output=True, text=True)
            assert nxt.returncode == 0, nxt.stderr
            assert [p.name for p in tmpdir.iterdir()] == [] and cgroups_left(tokens) == []
            return

        def kept():  # the run's cgroup, or its record naming the daemon
            for run in tmpdir.glob("xwarp-run-*"):
                if (run / "cgroup").exists() or ((run / "processes").exists()
                                                  and str(daemon) in (run / "processes").read_text().split()):
                    return True
            return False

        wait_for(kept, what="the run's cgroup or its record of the daemon")
        assert ((containment == "process-tree") == (not any((r / "cgroup").exists() for r in tmpdir.glob("xwarp-run-*")))
                or os.geteuid() != 0), "as root a cgroup is made unless XWARP_CGROUP=off"
        probe.send_signal(signal.SIGKILL)
        probe.wait(timeout=30)
        assert processes_running("sleep 1022") == [daemon], "the daemon outlived its probe: this is what to clean up"
        nxt = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--history", "off", "--json",
                              str(tmp_path / "next.json"), "--", "true"], env=env, capture_output=True, text=True)
        assert nxt.returncode == 0, nxt.stderr
        assert processes_running("sleep 1022") == [], "the next run did not find the daemon a killed probe left"
        assert [p.name for p in tmpdir.iterdir()] == [] and cgroups_left(tokens) == []
        warnings = json.loads((tmp_path / "next.json").read_text())["warnings"]
        assert any("cleaned up after an earlier probe" in w for w in warnings), warnings
    finally:
        for n in (1021, 1022, 1023):
            kill_all(f"sleep {n}")


def test_a_user_without_privileges_gets_a_pid_namespace_and_a_killed_probe_takes_its_daemon_along():
    """As a user without CAP_SYS_ADMIN (nobody, when the suite runs as root) the run's PID namespace
    is made inside a user namespace that maps the user to itself: a daemon with an empty
    environment in a session of its own dies with the run, and with a probe killed with -9 (it
    outlived both before, and no later probe could find it)."""
    as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    can = subprocess.run(as_user + ["unshare", "--user", "--pid", "--fork", "true"], capture_output=True, text=True)
    if can.returncode != 0:
        pytest.skip(f"this kernel makes no user namespace for an unprivileged user: {can.stderr.strip()[:200]}")
    import shutil
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="xwarp-unprivileged-"))
    try:
        work.chmod(0o777)
        tmpdir = work / "tmp"
        tmpdir.mkdir()
        tmpdir.chmod(0o777)
        env = {"PATH": os.environ["PATH"], "HOME": str(work), "TMPDIR": str(tmpdir), "XWARP_HISTORY": "off"}
        out = work / "r.json"
        done = subprocess.run(as_user + [str(PROBE), "measure", "--quiet", "--samples", "1", "--json", str(out), "--",
                                         "sh", "-c", DAEMON.format(n=1031)], env=env, capture_output=True, text=True,
                              timeout=120, cwd=work)
        assert done.returncode == 0, done.stderr
        sample = json.loads(out.read_text())["samples"][0]
        assert sample["cold"]["containment"] == "pid-namespace", sample["cold"]["containment"]
        assert sample["cold"]["stray_processes_killed"] == 1, sample["cold"]["stray_processes_killed"]
        wait_for(lambda: processes_running("sleep 1031") == [], what="the daemon's end", timeout=10)
        # the command ran as that user, and saw its own ids
        probe = subprocess.Popen(as_user + [str(PROBE), "measure", "--quiet", "--samples", "1", "--", "sh", "-c",
                                            DAEMON.format(n=1032) + "; exec sleep 1033"],
                                 env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: processes_running("sleep 1032"), what="the daemon")
        probe.send_signal(signal.SIGKILL)
        probe.wait(timeout=30)
        wait_for(lambda: processes_running("sleep 1032") == [] and processes_running("sleep 1033") == [],
                 what="the daemon's end with its namespace", timeout=10)
        ids = subprocess.run(as_user + [str(PROBE), "measure", "--quiet", "--samples", "1", "--json", str(work / "ids.json"),
                                        "--", "sh", "-c", "id -u; id -g"], env=env, cwd=work, capture_output=True, text=True,
                             timeout=120)
        assert ids.returncode == 0, ids.stderr
        told = json.loads((work / "ids.json").read_text())["samples"][0]["cold"]["stdout_tail"].split()
        assert told == [str(65534 if as_user else os.geteuid()), str(65534 if as_user else os.getegid())], told
        assert [p.name for p in tmpdir.iterdir()] == []  # the killed probe's temporary folder was cleaned by the next
    finally:
        for n in (1031, 1032, 1033):
            kill_all(f"sleep {n}")
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def a_report(tmp_path_factory):
    from conftest import VENV_PYTHON

    out = tmp_path_factory.mktemp("hard") / "r.json"
    proc = subprocess.run([str(PROBE), "measure", "--quiet", "--samples", "1", "--json", str(out), "--",
                           str(VENV_PYTHON), "late_kernel.py"], cwd=TARGETS, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def run_cli(*args):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.mark.quick
def test_deeply_nested_json_is_refused_not_a_crash(a_report, tmp_path):
    text = json.dumps(a_report).replace('"runtime": {', '"runtime": {"deep": ' + "[" * 100000 + "]" * 100000 + ", ", 1)
    deep = tmp_path / "deep.json"
    deep.write_text(text)
    for cmd in (["report", deep], ["compare", deep, deep]):
        proc = run_cli(*cmd)
        assert proc.returncode == 65, (cmd, proc.returncode, proc.stderr)
        assert "nested deeper than 128 levels" in proc.stderr


@pytest.mark.quick
@pytest.mark.parametrize("path,value,where", [
    (["samples", 0, "cold", "module_loads", 0, "snapshot", "options"], None, "/samples/0/cold/module_loads/0/snapshot/options"),
    (["samples", 0, "cold", "wall_ms"], "slow", "/samples/0/cold/wall_ms"),
    (["samples", 0, "cold", "processes", 0, "calls"], {"not": "a list"}, "/samples/0/cold/processes/0/calls"),
    (["summary"], [], "/summary"),
    # a value no run can record: a block_dim past CUDA's limit, a negative time
    (["samples", 0, "cold", "module_loads", 0, "block_dim"], 1 << 40, "/samples/0/cold/module_loads/0/block_dim"),
    (["samples", 0, "cold", "module_loads", 0, "warp_ms"], -5.0, "/samples/0/cold/module_loads/0/warp_ms"),
    # a source outside its words (an internal error before), a load no machine has
    (["summary", "load_source"], "bogus", "/summary/load_source"),
    (["summary", "module_ms_source"], "x", "/summary/module_ms_source"),
    (["summary", "native_ms_source"], "\u202e", "/summary/native_ms_source"),
    (["samples", 0, "cold", "load", "others_cpu_ms"], 1e308, "/samples/0/cold/load/others_cpu_ms"),
    (["samples", 0, "cold", "load", "cpus"], 1 << 62, "/samples/0/cold/load/cpus"),
])
def test_retyped_fields_are_malformed_reports_named_by_their_path(a_report, tmp_path, path, value, where):
    bad = json.loads(json.dumps(a_report))
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    for cmd in (["report", f], ["compare", f, f]):
        proc = run_cli(*cmd)
        assert proc.returncode == 65, (cmd, proc.returncode, proc.stderr)
        assert f"at {where}" in proc.stderr, proc.stderr


@pytest.mark.quick
def test_odd_values_the_schema_allows_never_end_in_an_internal_error(a_report, tmp_path):
    bad = json.loads(json.dumps(a_report))
    bad["samples"][0]["cold"]["processes"][0]["hooks"]["launch"] = "xx"
    bad["samples"][0]["cold"]["module_loads"][0]["warp_ms"] = 9.99e11
    f = tmp_path / "odd.json"
    f.write_text(json.dumps(bad))
    proc = run_cli("report", f)
    assert proc.returncode == 0, proc.stderr
    assert max(len(w) for w in proc.stdout.split()) < 200
    proc = run_cli("compare", f, f)
    assert proc.returncode < 64, (proc.returncode, proc.stderr)


@pytest.mark.quick
def test_a_time_past_the_schemas_range_is_refused_with_the_range(a_report, tmp_path):
    bad = json.loads(json.dumps(a_report))
    bad["samples"][0]["cold"]["module_loads"][0]["warp_ms"] = 1e308
    f = tmp_path / "odd.json"
    f.write_text(json.dumps(bad))
    proc = run_cli("report", f)
    assert proc.returncode == 65, proc.stderr
    assert "warp_ms: expected a number from 0 to 1e+12 or null, got the number 1e+308" in proc.stderr, proc.stderr


@pytest.mark.quick
def test_what_is_not_a_report_is_said_so(a_report, tmp_path):
    cases = {
        "huge_version.json": (dict(a_report, schema_version=4294967297), 65, "schema_version 4294967297"),
        "max_version.json": (dict(a_report, schema_version=18446744073709551615), 65, "schema_version 18446744073709551615"),
        "bare.json": ({"schema_version": 1}, 65, "at /samples: required, expected a list of samples"),
    }
    for name, (doc, code, words) in cases.items():
        f = tmp_path / name
        f.write_text(json.dumps(doc))
        proc = run_cli("report", f)
        assert proc.returncode == code and words in proc.stderr, (name, proc.returncode, proc.stderr)
    cmp_json = tmp_path / "cmp.json"
    rep = tmp_path / "rep.json"
    rep.write_text(json.dumps(a_report))
    run_cli("compare", rep, rep, "--json", cmp_json)
    proc = run_cli("report", cmp_json)
    assert proc.returncode == 65 and "is a comparison" in proc.stderr, proc.stderr
    proc = run_cli("report", tmp_path)
    assert proc.returncode == 66 and "is a directory" in proc.stderr, proc.stderr


@pytest.mark.quick
def test_a_report_larger_than_any_the_tool_writes_is_refused_at_once_with_its_size(a_report, tmp_path):
    # 278 MB of report once cost 33 s and 2.7 GB before the reader gave up; a sparse file of that
    # size (a valid report's start, then nothing) costs no disk, and every reader refuses it by size
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.write(json.dumps(a_report)[:-1].encode() + b', "x": "')
        f.truncate(278_000_000)
    for args, code in ((["report", big], 65), (["compare", big, big, "--history", "off"], 65),
                       (["check", big, "--budget", "identities<=1"], 65)):
        started = time.monotonic()
        proc = run_cli(*args)
        took = time.monotonic() - started
        assert proc.returncode == code, (args, proc.returncode, proc.stderr)
        assert f"{big}: 265.1 MiB, above the 256 MiB a report may be" in proc.stderr, proc.stderr
        assert took < 5, (args, took)


@pytest.mark.quick
@pytest.mark.parametrize("args,words", [
    (["--samples", "0"], "--samples: expected a whole number from 1 to 1000 or auto, got '0'"),
    (["--samples", "-1"], "got '-1'"),
    (["--samples", "abc"], "got 'abc'"),
    (["--timeout", "-5"], "--timeout: expected seconds above 0"),
    (["--timeout", "nan"], "got 'nan'"),
])
def test_bad_numbers_are_refused_in_words(args, words):
    proc = run_cli("measure", *args, "--", "true")
    assert proc.returncode == 64, proc.stderr
    assert words in proc.stderr and max(len(w) for w in proc.stderr.split()) < 80, proc.stderr


@pytest.mark.quick
def test_the_command_starts_at_its_first_word_even_without_a_double_dash(tmp_path):
    out = tmp_path / "r.json"
    proc = run_cli("measure", "-q", "--json", out, "/bin/echo", "-n", "hi")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert report["command"] == ["/bin/echo", "-n", "hi"] and report["settings"]["samples"] == 3


@pytest.mark.quick
def test_commands_that_cannot_run_exit_as_the_shell_would(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    plain = bin_dir / "not-executable"
    plain.write_text("#!/bin/sh\necho hi\n")
    plain.chmod(0o644)
    bad_shebang = bin_dir / "bad-interpreter"
    bad_shebang.write_text("#!/nonexistent/interpreter\necho hi\n")
    bad_shebang.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    proc = subprocess.run([str(PROBE), "measure", "-q", "--", "not-executable"], env=env, capture_output=True, text=True)
    assert proc.returncode == 126 and "not executable" in proc.stderr, proc.stderr
    proc = subprocess.run([str(PROBE), "measure", "-q", "--", "bad-interpreter"], env=env, capture_output=True, text=True)
    assert proc.returncode == 127 and "bad interpreter: /nonexistent/interpreter" in proc.stderr, proc.stderr


def test_output_of_a_failing_target_cannot_drive_the_terminal_and_keeps_its_exception(probe, venv_python):
    r = probe([venv_python, HOSTILE / "noisy_failure.py"], samples=1)
    assert r.returncode == 1
    assert r.report["samples"][0]["cold"]["error_line"].startswith("ValueError: xxxx")
    text = run_cli("report", r.tmpdir.parent / "report-0.json").stdout
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text
    assert "\\x1b]0;pwned title\\x07" in text
    assert "ValueError" in text  # the exception type survives the 4000-byte tail


def test_names_that_would_spoof_the_report_are_shown_inert(probe, venv_python, tmp_path):
    r = probe([venv_python, HOSTILE / "names.py"], samples=1)
    assert r.returncode == 0, r.stderr
    report_path = r.tmpdir.parent / "report-0.json"
    text = run_cli("report", report_path).stdout
    assert "\u202e" not in text and "\x1b" not in text and "\r" not in text
    assert "rtl\\u202eevil" in text and "ctl\\x1b[2J\\rname\\nnext" in text
    rows = [l for l in text.splitlines() if re.match(r"^\s+[\d.]+\s+\d+\s+compiled ", l)]
    # each identity stays on its own table row
    assert len(rows) == 3 and all(("rtl" in l) or ("ctl" in l) or ("nnnn" in l) for l in rows), rows
    # the 200-character name is whole once (the identities table), shortened everywhere else
    assert text.count("n" * 200) == 1 and "(200 characters)" in text
    html = run_cli("report", report_path, "--format", "html").stdout
    assert "\u202e" not in html and "\x1b" not in html
    assert "rtl\\u202eevil" in html and "<bdi" in html


def test_out_of_memory_says_while_reading_what_and_how_large(tmp_path):
    import resource
    import sys

    report = tmp_path / "r10k.json"
    subprocess.run([sys.executable, str(Path(__file__).resolve().parents[2] / "bench" / "render_scale.py"),
                    "--write-report", "10000", str(report)], check=True)

    def under(limit_bytes, *args):
        def pre():
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
        return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, preexec_fn=pre, timeout=120)

    # the address space warp-probe needs to start at all, found by halving; then a little more
    low, high = 1 << 20, 1 << 30
    while high - low > (1 << 20):
        mid = (low + high) // 2
        low, high = (low, mid) if under(mid, "--version").returncode == 0 else (mid, high)
    proc = under(high + (6 << 20), "compare", report, report, "--history", "off")
    assert proc.returncode == 71, (proc.returncode, proc.stderr)
    assert f"out of memory while reading {report} (7.6 MB)" in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr


def test_a_fifo_without_a_writer_is_said_so_and_standard_input_is_read_as_dash(a_report, tmp_path):
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    for args in (["report", fifo], ["compare", fifo, fifo], ["check", fifo, "--budget", "identities<=9"],
                 ["whatif", fifo], ["history", "--history", tmp_path / "h.sqlite3", "import", fifo]):
        t0 = time.monotonic()
        proc = run_cli(*args)
        assert time.monotonic() - t0 < 30, args
        assert proc.returncode == 66, (args, proc.returncode, proc.stderr)
        assert "a FIFO with no writer" in proc.stderr, proc.stderr
    # a writer that comes within the wait is read
    writer = subprocess.Popen(["sh", "-c", f"sleep 1; cat > '{fifo}'"], stdin=subprocess.PIPE)
    writer.stdin.write(json.dumps(a_report).encode())
    writer.stdin.close()
    proc = run_cli("check", fifo, "--budget", "identities<=9", "--history", "off")
    writer.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([str(PROBE), "report", "-"], input=json.dumps(a_report), capture_output=True, text=True)
    assert proc.returncode == 0 and "warp-probe measure" in proc.stdout, proc.stderr
    # what standard input held is spooled to a private file; a refused input leaves none behind
    spool_dir = tmp_path / "spool-tmp"
    spool_dir.mkdir()
    for text, code in ((json.dumps(a_report), 0), ("{not json", 65), (json.dumps({"schema_version": 1}), 65)):
        proc = subprocess.run([str(PROBE), "report", "-"], input=text, capture_output=True, text=True,
                              env=dict(os.environ, TMPDIR=str(spool_dir)))
        assert proc.returncode == code, (text[:40], proc.returncode, proc.stderr)
        assert list(spool_dir.iterdir()) == [], (text[:40], list(spool_dir.iterdir()))


def wide_report(samples=10, identities=1000, modules=10):
    """The shape that made a 9 MB page: few modules, each loading a new identity per load (its
    kernel set moves every time), distinct in every sample, and many processes and threads."""
    per_module = identities // modules
    out = []
    for k in range(samples):
        loads, t = [], 0.0
        for m in range(modules):
            for i in range(per_module):
                loads.append({
                    "module": f"pkg.sim.stage_{m}", "hash": f"{m:08x}{i:08x}{k:08x}" + "cd" * 8, "device": "cpu",
                    "block_dim": 1, "status": "compiled", "warp_ms": 40.0 + i % 50, "total_ms": 41.0 + i % 50,
                    "source": "hook", "pid": 100 + i % 60, "seq": m * per_module + i, "t_start_ms": t,
                    "thread": f"worker-{i % 7}",
                    "snapshot": {"kernels": [{"key": f"variant_{m}_{i}", "hash": f"{i:016x}", "sig": "", "generic": False}],
                                 "functions": {}, "options": {"block_dim": 1}, "options_source": "resolved"},
                })
                t += 41.0
        run = {"wall_ms": t + 5000, "exit_code": 0, "module_loads": loads, "launches": [], "launch_total": 0,
               "processes": [{"pid": 100 + p, "ppid": 1, "argv": ["app.py"], "hooks": {"module_load": True}}
                             for p in range(60)], "load_source": "hook"}
        out.append({"index": k + 1, "cold": run, "warm": dict(run, module_loads=[], wall_ms=4000.0)})
    return {"schema_version": 2, "tool": "warp-probe", "label": "L" * 1_000_000, "command": ["python3", "app.py"],
            "cwd": "/tmp", "settings": {"samples": samples}, "environment": {"warp_version": "1.19.0"},
            "samples": out, "status": "ok", "errors": [f"error {e}: " + "x" * 200 for e in range(3000)],
            "warnings": [f"warning {w}" for w in range(3000)]}


def test_a_report_of_any_shape_renders_a_bounded_page(tmp_path):
    """Every list on the page stops at a fixed number of rows and says how many it left out; one
    text is at most 16 KB. (The time goal, under 0.3 s, is measured by bench/render_scale.py.)"""
    src = tmp_path / "wide.json"
    src.write_text(json.dumps(wide_report()))
    page = tmp_path / "wide.html"
    done = run_cli("report", str(src), "--format", "html", "-o", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert len(html.encode()) < 2 * 2**20, f"{len(html.encode()) / 2**20:.1f} MB"
    notes = re.findall(r'data-xwarp="more-rows"[^>]*>(\d+) ([^<]*)</div>', html)
    said = {what: int(n) for n, what in notes}
    assert said.get("more errors: the JSON report has all") == 3000 - 50, said
    assert said.get("more warnings: the JSON report has all", 0) >= 3000 - 50, said
    # each module's churn group lists its heaviest identities, then how many more (1,000 per module)
    lighter = [int(n) for n, what in notes if what.startswith("more, lighter")]
    assert lighter and all(n == 1000 - 25 for n in lighter), lighter
    lanes = re.search(r"the first 40 of (\d+) processes and threads", html)
    assert lanes and int(lanes.group(1)) == 100, "the timeline's lanes: 100 (pid, thread) pairs, the first 40 drawn"
    assert "(1000000 characters)" in html  # the label, elided, with its length


STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"


@pytest.fixture
def foreign_report(tmp_path):
    """A report from elsewhere (made from a recorded stream: it has a CS-3 finding to replay)
    whose command appends to a marker file: the marker existing means the command ran."""
    made = tmp_path / "made.json"
    proc = run_cli("report", STREAMS / "cs3_option-warp1.19.0", "--format", "json", "-o", made)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(made.read_text())
    marker = tmp_path / "ran.txt"
    doc["command"] = ["sh", "-c", f"echo ran >> '{marker}'"]
    doc["cwd"] = str(tmp_path)
    theirs = tmp_path / "theirs.json"
    theirs.write_text(json.dumps(doc))
    return theirs, marker


def replay_commands(report):
    return {
        "whatif": ["whatif", report, "options-at-creation", "--samples", "1", "-q"],
        "fix --verify": ["fix", report, "--verify", "--samples", "1", "-q", "--out", report.parent / "fixes"],
        "compare --until-settled": ["compare", report, report, "--until-settled", "--max-samples", "2", "-q"],
    }


def test_a_report_from_elsewhere_is_data_its_command_runs_only_with_run(foreign_report, tmp_path):
    theirs, marker = foreign_report
    store = tmp_path / "history.sqlite3"
    # a plain compare and an import store it, and neither is a sign that it ran here
    assert run_cli("compare", theirs, theirs, "--history", store).returncode in range(0, 6)
    imported = run_cli("history", "--history", store, "import", theirs)
    assert imported.returncode == 0, imported.stderr
    run_id = re.search(r"@(\d+)", imported.stdout + imported.stderr).group(1)
    for report in (theirs, f"@{run_id}"):
        for what, args in replay_commands(Path(str(theirs))).items():
            args = [report if a == theirs else a for a in args]
            proc = subprocess.run([str(PROBE), *map(str, args), "--history", str(store)], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=120, cwd=tmp_path)
            assert proc.returncode == 77, (what, proc.returncode, proc.stderr)
            assert "command  sh -c 'echo ran >> " in proc.stderr and str(marker) in proc.stderr, (what, proc.stderr)
            assert "add --run" in proc.stderr, (what, proc.stderr)
            assert not marker.exists(), f"{what} ran the command of {report} without --run"
    proc = run_cli("whatif", theirs, "options-at-creation", "--samples", "1", "-q", "--run", "--history", store)
    assert marker.exists(), proc.stderr
    # a fix without --verify runs nothing of the report's: its fixer runs with python3, not the report's Python
    doc = json.loads(theirs.read_text())
    doc["command"], doc["settings"]["python"] = ["python3", "cs3_option.py"], str(tmp_path / "their-python")
    (tmp_path / "their-python").write_text(f"#!/bin/sh\necho ran >> '{tmp_path / 'python-ran.txt'}'\n")
    (tmp_path / "their-python").chmod(0o755)
    (tmp_path / "cs3_option.py").write_text("import warp as wp\n")
    theirs.write_text(json.dumps(doc))
    run_cli("fix", theirs, "--history", store, "--out", tmp_path / "fixes")
    assert not (tmp_path / "python-ran.txt").exists(), "fix ran the Python a foreign report named"
    # what whatif --run and fix stored of it is no trust either: the next whatif asks again
    marker.unlink()
    proc = subprocess.run([str(PROBE), "whatif", str(theirs), "options-at-creation", "--samples", "1", "-q",
                           "--history", str(store)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 77 and not marker.exists(), (proc.returncode, proc.stderr)


def test_a_command_run_here_replays_without_asking_and_a_terminal_can_say_yes(foreign_report, tmp_path, venv_python):
    import pty

    theirs, marker = foreign_report
    store = tmp_path / "history.sqlite3"
    # at a terminal the command is shown and a question asked: "n" runs nothing, "y" runs it
    for answer, runs in (("n", False), ("y", True)):
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(str(PROBE), [str(PROBE), "whatif", str(theirs), "options-at-creation", "--samples", "1", "-q",
                                  "--history", str(store)])
        seen = b""
        while b"[y/N]" not in seen:
            chunk = os.read(fd, 4096)
            assert chunk, seen
            seen += chunk
        assert b"echo ran" in seen
        os.write(fd, answer.encode() + b"\n")
        try:
            while os.read(fd, 4096):
                pass
        except OSError:
            pass  # the terminal's other end closed
        _, status = os.waitpid(pid, 0)
        assert marker.exists() == runs, (answer, os.waitstatus_to_exitcode(status))
        if not runs:
            assert os.waitstatus_to_exitcode(status) == 77
    # what this user measured here replays without a question: measure stores it in the history
    mine = tmp_path / "mine.json"
    proc = run_cli("measure", "-q", "--samples", "1", "--history", store, "--json", mine, "--",
                   venv_python, "-c", "print(1)")
    assert proc.returncode == 0, proc.stderr
    replay = subprocess.run([str(PROBE), "compare", str(mine), str(mine), "--until-settled", "--max-samples", "2", "-q",
                             "--history", str(store)], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert replay.returncode == 3 and "asks to run" not in replay.stderr, replay.stderr  # unverified: no Warp in it
    # the same report with its command changed is someone else's again
    doc = json.loads(mine.read_text())
    doc["command"][-1] = "print(2)"
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    refused = subprocess.run([str(PROBE), "compare", str(mine), str(edited), "--until-settled", "-q", "--history", str(store)],
                             capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert refused.returncode == 77 and "print(2)" in refused.stderr, refused.stderr
