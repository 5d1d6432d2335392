"""The history store through the real CLI on real Warp: concurrent writers, a planted step found
at the right run, a corrupt or newer store moved aside without losing the report, the budget
gate, and the fleet recipes of references/fleet.md run as written (measure steps and merge)."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import PROBE, ROOT, TARGETS, VENV_PYTHON, validate_report

STREAM = ROOT / "tests" / "fixtures" / "streams" / "clean-warp1.19.0"

ONE_KERNEL = '''import warp as wp


@wp.kernel
def first(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


a = wp.zeros(16, dtype=float)
wp.launch(first, dim=16, inputs=[a])
'''

# The planted step: a kernel defined after the module's first launch, so the module gets a
# second identity (and builds twice) from this commit on.
LATE_KERNEL = ONE_KERNEL + '''

@wp.kernel
def second(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0


wp.launch(second, dim=16, inputs=[a])
'''


def warp_probe(*args, cwd=None, env=None, timeout=300):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=timeout)


def measure(store, *command, cwd=TARGETS, extra=()):
    return warp_probe("measure", "--samples", "1", "--history", store, "--cwd", cwd, *extra, "--",
                      *command)


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=xwarp test", "-c", "user.email=test@xwarp.invalid",
                    *args], check=True, capture_output=True)
    if args[0] != "commit":
        return None
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def stored_id(stderr):
    found = re.search(r"stored as @(\d+)", stderr)
    assert found, stderr
    return int(found.group(1))


@pytest.mark.quick
def test_two_probes_started_together_both_land(tmp_path):
    store = tmp_path / "history.sqlite3"
    command = [str(PROBE), "measure", "--samples", "1", "--history", str(store), "--cwd", str(TARGETS), "--",
               str(VENV_PYTHON), "clean.py"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert "not stored" not in err and "locked" not in err, err
    ids = sorted(stored_id(err) for _, err in results)
    assert ids == [1, 2]
    listed = warp_probe("history", "list", "--history", store)
    assert listed.returncode == 0, listed.stderr
    assert "(2 run(s)" in listed.stdout and "@1" in listed.stdout and "@2" in listed.stdout
    # each stored run reads back as the report it was
    exported = warp_probe("history", "export", "@2", "--history", store)
    assert exported.returncode == 0, exported.stderr
    validate_report(json.loads(exported.stdout))


def test_a_planted_step_shows_at_the_right_run_with_the_commit_that_made_it(tmp_path):
    store = tmp_path / "history.sqlite3"
    repo = tmp_path / "project"
    repo.mkdir()
    (repo / "sim.py").write_text(ONE_KERNEL)
    git(repo, "init", "-q")
    git(repo, "add", "sim.py")
    before = git(repo, "commit", "-q", "-m", "one kernel")
    for _ in range(2):
        run = measure(store, VENV_PYTHON, "sim.py", cwd=repo)
        assert run.returncode == 0, run.stderr
    (repo / "sim.py").write_text(LATE_KERNEL)
    after = git(repo, "commit", "-q", "-am", "a late kernel")
    third = measure(store, VENV_PYTHON, "sim.py", cwd=repo)
    assert third.returncode == 0, third.stderr
    step_run = stored_id(third.stderr)
    # the fourth run is the CI gate: the module now builds twice, and the gate names it
    fourth = measure(store, VENV_PYTHON, "sim.py", cwd=repo, extra=["--budget", "builds-per-module<=1,identities<=4"])
    assert fourth.returncode == 8, fourth.stdout + fourth.stderr
    assert re.search(r"OVER\s+builds-per-module 2 > 1: __main__ on cpu built 2 time", fourth.stdout), fourth.stdout
    assert re.search(r"ok\s+identities 2 <= 4", fourth.stdout), fourth.stdout

    trend = warp_probe("history", "trend", "--history", store)
    assert trend.returncode == 0, trend.stderr
    steps = [line for line in trend.stdout.splitlines() if "step at run" in line]
    identity_steps = [line for line in steps if "identities 1 -> 2" in line]
    assert identity_steps, trend.stdout
    assert all(f"step at run @{step_run}:" in line for line in identity_steps), trend.stdout
    assert not any("possible step" in line for line in identity_steps), "run 4 confirms it"
    assert f"commit {before[:12]} -> {after[:12]}" in identity_steps[0]
    module = warp_probe("history", "trend", "--module", "__main__", "--history", store)
    assert module.returncode == 0 and "__main__ on cpu" in module.stdout
    assert warp_probe("history", "trend", "--module", "nothing-like-it", "--history", store).returncode == 66

    # the HTML report of the stored step run shows its history and says it is the step
    page = warp_probe("report", f"@{step_run}", "--format", "html", "--history", store)
    assert page.returncode == 0, page.stderr
    assert 'data-xwarp="history"' in page.stdout and "<svg" in page.stdout
    assert "this run is a step" in page.stdout

    diff = warp_probe("history", "diff", "1", str(step_run), "--history", store)
    assert diff.returncode == 0 and "identities 1 -> 2" in diff.stdout, diff.stdout


@pytest.mark.quick
def test_a_reader_never_moves_a_store_aside(tmp_path):
    # A store from a newer xwarp, or a damaged one, is that xwarp's to read: history list, trend
    # and @ID say why they cannot, with exit 65, and leave it as it is (only a writer moves it).
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 99")
        db.execute("CREATE TABLE runs (id INTEGER)")
    before = newer.read_bytes()
    broken = tmp_path / "broken.sqlite3"
    broken.write_bytes(b"this is not a database " * 100)
    for store in (newer, broken):
        for args in (("history", "list"), ("history", "trend"), ("report", "@1"), ("check", "@1", "--budget", "identities<=1")):
            run = warp_probe(*args, "--history", store)
            assert run.returncode == 65, (args, run.returncode, run.stderr)
            assert "left as it is" in run.stderr, run.stderr
    assert newer.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.sqlite3", "newer.sqlite3"]
    # a directory where the store should be: nothing to read there (66, as for a missing file)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    run = warp_probe("history", "list", "--history", folder)
    assert run.returncode == 66 and "is a directory" in run.stderr, (run.returncode, run.stderr)


@pytest.mark.quick
def test_readers_open_the_store_read_only_and_a_damaged_page_is_its_own_error(tmp_path):
    """Reading commands leave nothing beside a store (no journal, no lock); a store whose pages
    were damaged after its header is 65 with why (it was 70, an internal error), and export
    writes valid JSON or nothing; a path that is not a regular file is refused untouched."""
    store = tmp_path / "h.sqlite3"
    ran = warp_probe("history", "--history", store, "import", STREAM.parent.parent / "gpu-nvrtc-trace-report.json")
    assert ran.returncode == 0, ran.stderr
    for side in tmp_path.glob("h.sqlite3?*"):
        side.unlink()  # the writer's lock: a reader must not need one, nor make one
    before = store.read_bytes()
    for args in (("history", "list"), ("history", "show", "@1"), ("history", "export", "@1"), ("report", "@1")):
        run = warp_probe(*args, "--history", store)
        assert run.returncode == 0, (args, run.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.sqlite3"] and store.read_bytes() == before
    assert json.loads(warp_probe("history", "export", "@1", "--history", store).stdout)["schema_version"]

    damaged = tmp_path / "damaged.sqlite3"
    damaged.write_bytes(before[:4096] + bytes(range(256)) * ((len(before) - 4096) // 256))
    for args in (("history", "list"), ("history", "export", "@1")):
        run = warp_probe(*args, "--history", damaged)
        assert run.returncode == 65 and "damaged" in run.stderr and run.stdout == "", (args, run.returncode, run.stderr)

    for special in ("/dev/null", "/dev/zero"):
        run = warp_probe("history", "list", "--history", special)
        assert run.returncode == 65 and "not a regular file" in run.stderr, (special, run.stderr)
        assert not Path(special + "-journal").exists() and not Path(special + ".lock").exists()


def test_a_corrupt_or_newer_store_is_moved_aside_and_the_report_kept(tmp_path):
    store = tmp_path / "history.sqlite3"
    store.write_bytes(b"this is not a database " * 100)
    report = tmp_path / "clean.json"
    run = measure(store, VENV_PYTHON, "clean.py", extra=["--json", report])
    assert run.returncode == 0, run.stderr
    validate_report(json.loads(report.read_text()))
    assert "moved aside" in run.stderr, run.stderr
    corrupt = list(tmp_path.glob("history.sqlite3.corrupt-*"))
    assert len(corrupt) == 1 and corrupt[0].read_bytes().startswith(b"this is not a database")
    assert stored_id(run.stderr) == 1

    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as db:
        db.execute("PRAGMA user_version = 99")
        db.execute("CREATE TABLE runs (id INTEGER)")
    imported = warp_probe("history", "--history", newer, "import", report)
    assert imported.returncode == 0, imported.stderr
    assert "newer" in imported.stderr and "moved aside" in imported.stderr, imported.stderr
    assert len(list(tmp_path.glob("newer.sqlite3.newer-*"))) == 1
    again = warp_probe("history", "--history", newer, "import", report)
    assert "(already stored)" in again.stdout

    # a store whose folder cannot be made: the comparison is judged all the same, with a note
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    off = warp_probe("compare", report, report, "--history", "off")
    unwritable = warp_probe("compare", report, report, "--history", blocked / "h.sqlite3")
    assert unwritable.returncode == off.returncode and unwritable.stdout == off.stdout
    assert "not stored" in unwritable.stderr, unwritable.stderr


def stored_rows(store):
    """A store's runs (kind, identities, report as JSON), identity rows and comparisons."""
    with sqlite3.connect(store) as db:
        runs = [(kind, identities, json.loads(report))
                for kind, identities, report in db.execute("SELECT kind, identities, report FROM runs ORDER BY id")]
        identities = db.execute("SELECT run_id, module, hash, device, block_dim, builds, ms, kernels, source_bytes "
                                "FROM identities ORDER BY rowid").fetchall()
        comparisons = db.execute("SELECT before_run, after_run, verdict, comparison FROM comparisons ORDER BY id").fetchall()
    return runs, identities, [(b, a, verdict, json.loads(text)) for b, a, verdict, text in comparisons]


def store_opened_by(pid, store, timeout=60.0):
    """Waits until process `pid` has the store open (a link to it among its file descriptors),
    at most `timeout` seconds."""
    deadline = time.monotonic() + timeout
    fds = Path(f"/proc/{pid}/fd")
    while time.monotonic() < deadline:
        try:
            if any(os.path.realpath(fd) == os.path.realpath(store) for fd in fds.iterdir()):
                return True
        except (FileNotFoundError, ProcessLookupError):
            return False
        time.sleep(0.02)
    return False


def two_reports(tmp_path):
    """Two different recorded runs as report files (a late kernel and a clean program)."""
    paths = []
    for name in ("cs1_late-warp1.19.0", "clean-warp1.19.0"):
        path = tmp_path / f"{name}.json"
        made = warp_probe("report", STREAM.parent / name, "--format", "json", "--history", "off")
        assert made.returncode == 0, made.stderr
        path.write_text(made.stdout)
        paths.append(path)
    return paths


@pytest.mark.quick
def test_compare_stores_each_side_analysed_once_whether_read_from_a_file_or_a_pipe(tmp_path):
    # With the history on, compare reads each file twice (stored whole first, then compared
    # from its figures) and a pipe once; what it prints and what it stores is the same.
    before, after = two_reports(tmp_path)
    off = warp_probe("compare", before, after, "--history", "off")
    assert off.returncode == 2 and "VERDICT: invalid" in off.stdout, off.stdout + off.stderr

    from_files = tmp_path / "files.sqlite3"
    files = warp_probe("compare", before, after, "--history", from_files)
    assert (files.returncode, files.stdout, files.stderr) == (off.returncode, off.stdout, "")
    runs, identities, comparisons = stored_rows(from_files)
    # each side is stored as `report --format json` writes it: analysed whole, findings included
    for (kind, count, stored), path in zip(runs, (before, after)):
        written = json.loads(warp_probe("report", path, "--format", "json", "--history", "off").stdout)
        assert kind == "compare" and stored == written and count == len(written["summary"]["identities"])
    assert runs[0][2]["findings"], "the late kernel's findings are stored with its run"
    assert sorted({row[0] for row in identities}) == [1, 2]
    assert [(b, a, verdict) for b, a, verdict, _ in comparisons] == [(1, 2, "invalid")]

    from_pipe = tmp_path / "pipe.sqlite3"
    piped = subprocess.run([str(PROBE), "compare", "/dev/stdin", str(after), "--history", str(from_pipe)],
                           input=before.read_text(), capture_output=True, text=True, timeout=300)
    assert (piped.returncode, piped.stderr) == (off.returncode, "")
    assert piped.stdout == off.stdout.replace(str(before), "/dev/stdin")
    piped_runs, piped_identities, piped_comparisons = stored_rows(from_pipe)
    assert (piped_runs, piped_identities) == (runs, identities)
    for comparison in (piped_comparisons[0][3], comparisons[0][3]):
        comparison.pop("created_utc")
        comparison["before"].pop("path")
    assert piped_comparisons == comparisons


@pytest.mark.quick
def test_compare_refuses_a_file_that_changed_between_its_two_readings(tmp_path):
    # The file is rewritten while compare waits for the store (held locked here), after its
    # first reading and before its second: the comparison is refused, the first reading stays
    # stored, and nothing is left half written.
    before, after = two_reports(tmp_path)
    store = tmp_path / "history.sqlite3"
    assert warp_probe("compare", after, after, "--history", store).returncode == 4  # makes the store
    db = sqlite3.connect(store, isolation_level=None, timeout=60)
    db.execute("BEGIN EXCLUSIVE")
    probe = subprocess.Popen([str(PROBE), "compare", str(before), str(after), "--history", str(store)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # compare stamps its inputs before it opens the store, then waits on the lock
        assert store_opened_by(probe.pid, store), "compare never opened the store"
        assert probe.poll() is None, "compare did not wait for the locked store"
        original = before.read_text()
        before.write_text(json.dumps(dict(json.loads(original), label="rewritten")))
    finally:
        db.execute("ROLLBACK")
        db.close()
    out, err = probe.communicate(timeout=300)
    assert probe.returncode == 65, out + err
    assert f"{before}: changed between compare's two readings of it" in err and "VERDICT" not in out, out + err
    runs, _, comparisons = stored_rows(store)
    assert len(runs) == 2 and len(comparisons) == 1, "each side's first reading is stored, and no comparison"
    (tmp_path / "original.json").write_text(original)
    written = warp_probe("report", tmp_path / "original.json", "--format", "json", "--history", "off")
    assert runs[1][2] == json.loads(written.stdout)


def fenced_block(guide, marker):
    text = (ROOT / "references" / guide).read_text()
    found = re.search(r"<!-- " + re.escape(marker) + r" -->\n```\w+\n(.*?)```", text, re.S)
    assert found, f"{guide} has no block marked {marker}"
    return found.group(1)


def test_the_fleet_recipes_measure_and_merge_two_machines(tmp_path):
    work = tmp_path / "repo"
    (work / "examples").mkdir(parents=True)
    (work / "examples" / "sim.py").write_text(ONE_KERNEL)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec "{VENV_PYTHON}" "$@"\n')
    (bin_dir / "python").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{PROBE.resolve().parent}:{os.environ['PATH']}")
    env.pop("XWARP_HISTORY", None)  # the recipes name their store themselves

    workflow = yaml.safe_load(fenced_block("fleet.md", "fleet:github-actions"))
    measure_job = workflow["jobs"]["measure"]
    assert len(measure_job["strategy"]["matrix"]["gpu"]) >= 2
    (measure_step,) = [s for s in measure_job["steps"] if "warp-probe measure" in s.get("run", "")]
    (merge_step,) = [s for s in workflow["jobs"]["merge"]["steps"] if "history" in s.get("run", "")]
    download = [s for s in workflow["jobs"]["merge"]["steps"] if "download-artifact" in s.get("uses", "")]
    assert download and workflow["jobs"]["merge"]["needs"] == "measure"

    # one matrix job, as the runner would run its step (then the artifact, as download-artifact lays it out)
    script = measure_step["run"].replace("${{ matrix.gpu }}", "a100")
    ran = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    artifact = work / "artifacts" / "report-a100"
    artifact.mkdir(parents=True)
    shutil.move(work / "report-a100.json", artifact / "report-a100.json")

    # one Slurm array task, on a partition of another GPU kind
    slurm = tmp_path / "fleet.sbatch"
    slurm.write_text(fenced_block("fleet.md", "fleet:slurm"))
    fleet_dir = tmp_path / "fleet"
    slurm_env = dict(env, SLURM_ARRAY_TASK_ID="0", SLURM_ARRAY_JOB_ID="4242", SLURM_JOB_PARTITION="h100",
                     FLEET_DIR=str(fleet_dir))
    ran = subprocess.run(["bash", str(slurm)], cwd=work, env=slurm_env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert (fleet_dir / "4242_0" / "report.json").exists()

    # the merges, as written
    merged = subprocess.run(["bash", "-e", "-c", merge_step["run"]], cwd=work, env=env, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    merged = subprocess.run(["bash", "-e", "-c", fenced_block("fleet.md", "fleet:slurm-merge")], cwd=work,
                            env=slurm_env, capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    table = merged.stdout
    header = next(line for line in table.splitlines() if "a100" in line)
    assert "h100" in header, table
    row = next(line for line in table.splitlines() if "__main__ on cpu" in line)
    assert len(re.findall(r"\d+(?:\.\d+)? m?s", row)) == 2, table  # a time on each machine
    assert (work / "machines.txt").read_text().count("a100") >= 1


def test_the_ci_guide_gate_checks_a_report(tmp_path):
    report = tmp_path / "report.json"
    made = warp_probe("report", STREAM, "--format", "json", "-o", report)
    assert made.returncode == 0, made.stderr
    gate = fenced_block("ci.md", "ci:gate")
    steps = yaml.safe_load(gate)
    budget = re.search(r"--budget '([^']+)'", steps[0]["run"]).group(1)
    checked = warp_probe("check", report, "--budget", budget)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.search(r"ok\s+builds-per-module 1 <= 1", checked.stdout), checked.stdout
    over = warp_probe("check", report, "--budget", "identities<=0")
    assert over.returncode == 8 and "OVER" in over.stdout
    floor = warp_probe("check", report, "--budget", "identities>=2")
    assert floor.returncode == 8 and re.search(r"UNDER\s+identities 1 < 2", floor.stdout), floor.stdout
    bad = warp_probe("check", report, "--budget", "identities=>1")
    assert bad.returncode == 64 and "identities=>1" in bad.stderr
    yaml.safe_load(fenced_block("ci.md", "ci:cache"))


def test_a_budget_is_not_judged_on_a_run_that_used_a_kernel_cache_of_its_own(probe, venv_python, tmp_path):
    # The CS-2 exercise's cheat: the program points Warp at a folder it keeps, so its second run
    # finds everything built. The gate refuses every limit and names the folder; a cache the
    # program makes in its (private, per-pass) temporary folder is still judged.
    kept = tmp_path / "student-cache"
    program = tmp_path / "own_cache.py"
    program.write_text(
        "import os, sys, tempfile\nimport warp as wp\n"
        "wp.config.kernel_cache_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()\n"
        "@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
        "wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    refused = probe([venv_python, program, kept], cwd=tmp_path, extra_args=["--budget", "identities<=5"])
    assert refused.returncode == 8, refused.stdout + refused.stderr
    assert f"not judged: a process used the kernel cache {kept}" in refused.stdout + refused.stderr
    (outside,) = refused.report["samples"][0]["cold"]["caches_outside"]
    assert outside.startswith(str(kept))  # Warp adds its version's folder
    private = probe([venv_python, program], cwd=tmp_path, extra_args=["--budget", "identities<=5"])
    assert private.returncode == 0, private.stdout + private.stderr
    assert private.report["samples"][0]["cold"]["caches_outside"] == []


@pytest.mark.quick
def test_check_judges_the_launch_gate_against_a_baseline_as_the_magic_does(tmp_path):
    # One rule in every front (the check job): workload=same needs the run whose launches must
    # stay; given one, check judges it as %%warp_probe --expect ... --compare does.
    late, clean = two_reports(tmp_path)
    alone = warp_probe("check", late, "--budget", "workload=same", "--history", "off")
    assert alone.returncode == 64 and "--compare" in alone.stderr, alone.stdout + alone.stderr
    same = warp_probe("check", late, "--budget", "workload=same,kernels=same", "--compare", late, "--history", "off")
    assert same.returncode == 0, same.stdout + same.stderr
    assert re.search(r"^\s+ok\s+workload", same.stdout, re.M), same.stdout
    changed = warp_probe("check", late, "--budget", "workload=same", "--compare", clean, "--history", "off")
    assert changed.returncode == 8 and re.search(r"^\s+CHANGED\s+workload", changed.stdout, re.M), changed.stdout
