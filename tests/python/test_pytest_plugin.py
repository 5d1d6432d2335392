"""pytest --warp-builds in the user's own run (real Warp on the CPU, real pytest and
pytest-xdist): the terminal summary lists the costliest builds with the test that paid each,
every test carries its builds on the JUnit XML, and the report it keeps is one warp-probe report
renders and history import stores, the builds equal to what Warp's own log printed. Loaded here
with -p from the source tree, as the pytest11 entry point loads it from an installed wheel
(test_pip.py)."""

import json
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import PROBE, ROOT, TARGETS, VENV_PYTHON

SUITE = TARGETS / "suite"


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suite"
    shutil.copytree(SUITE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"  # the suite's own cache: the user's, never the probe's
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XWARP_", "PYTEST_"))}
    env.update(PYTHONPATH=f"{ROOT / 'src' / 'fronts' / 'python'}:{folder}", WARP_CACHE_PATH=str(cache), PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{PROBE.parent}:{env.get('PATH', '')}")

    def run(*args):
        return subprocess.run([str(VENV_PYTHON), "-m", "pytest", "-p", "xwarp.pytest_plugin", "-p", "no:cacheprovider",
                               "-s", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=900)

    run.folder = folder
    run.cache = cache
    return run


def compiled_by_warp(stdout):
    """Each test's builds as Warp's own log printed them between the suite's markers."""
    paid, test = {}, "collection / set-up"
    for line in stdout.splitlines():
        if line.startswith("SUITE-START "):
            test = line.split(" ", 1)[1]
        elif line.startswith("SUITE-END "):
            test = "collection / set-up"
        elif re.match(r"^Module \S+ \w+ load on device .* \(compiled\)", line):
            paid.setdefault(test, []).append(line.split()[1])
    return paid


def test_the_summary_the_junit_properties_and_the_kept_report_say_what_warp_built(suite, tmp_path):
    report = tmp_path / "builds.json"
    junit = tmp_path / "junit.xml"
    done = suite("--warp-builds=2", f"--warp-builds-report={report}", f"--junitxml={junit}", "test_alpha.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    warp = compiled_by_warp(done.stdout)
    section = done.stdout.split("warp builds", 1)[1]
    # the two costliest builds, each with the test that paid it; the rest counted
    lines = [l for l in section.splitlines() if re.match(r"^\s+\d+\.\d\ds build  ", l)]
    assert len(lines) == 2, section
    total = sum(len(v) for v in warp.values())
    assert total > 2 and f"{total} build(s)" in section and f"({total - 2} more build(s)" in section, section
    # every build the report credits to a test is one Warp's log printed while that test ran
    data = json.loads(report.read_text())
    credited = {t["test"] or "collection / set-up": sorted(i["module"] for i in t["identities"])
                for t in data["summary"]["tests"] if t["identities"]}
    assert credited == {t: sorted(m) for t, m in warp.items()}, (credited, warp)
    # JUnit: each test's own builds
    props = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"
        props[name] = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert props and all("warp_builds" in p for p in props.values()), props
    assert sum(int(p["warp_builds"]) for p in props.values()) == sum(len(v) for t, v in warp.items() if "::" in t)
    # the kept report renders and stores like any report
    shown = subprocess.run([str(PROBE), "report", str(report), "--history", "off"], capture_output=True, text=True)
    assert shown.returncode == 0 and "Tests, by build time paid" in shown.stdout, shown.stderr
    stored = subprocess.run([str(PROBE), "history", "import", str(report), "--history", str(tmp_path / "h.sqlite3")],
                            capture_output=True, text=True)
    assert stored.returncode == 0, stored.stderr
    assert not list(tmp_path.glob("xwarp-pytest-*")) and not any(p.name.startswith("xwarp-pytest-")
                                                                for p in (tmp_path.parent).iterdir())


def test_under_xdist_the_workers_builds_are_gathered_and_a_failing_test_keeps_the_report(suite, tmp_path):
    (suite.folder / "test_gamma.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef gamma(a: wp.array(dtype=float)):\n    a[wp.tid()] = 3.0\n\n\n"
        "def test_gamma_fails():\n    a = wp.zeros(2, dtype=float)\n    wp.launch(gamma, dim=2, inputs=[a])\n"
        "    assert a.numpy()[0] == 4.0\n")
    report = tmp_path / "xdist.json"
    done = suite("-n", "2", "--warp-builds", f"--warp-builds-report={report}", "test_alpha.py", "test_beta.py",
                 "test_gamma.py")
    assert done.returncode == 1, done.stdout[-3000:]
    data = json.loads(report.read_text())
    assert data["samples"][0]["one_pass"] and data["status"] == "ok", data["status"]
    workers = data["summary"]["workers"]
    assert len({w["pid"] for w in workers}) == 2, workers  # both workers' builds
    (gamma,) = [t for t in data["summary"]["tests"] if t["test"].endswith("test_gamma_fails")]
    assert gamma["builds"] == 1 and gamma["failed"], gamma
    assert "[failed]" in done.stdout.split("warp builds", 1)[1]
    # the controller never imported Warp: its version and what the workers wrote into the suite's
    # cache come from the workers' records; the machine's load is taken as measure takes it
    version = subprocess.run([str(VENV_PYTHON), "-c", "import importlib.metadata as m; print(m.version('warp-lang'))"],
                             capture_output=True, text=True).stdout.strip()
    assert data["environment"]["warp_version"] == version, data["environment"]
    # one binary per identity, however many workers built it (a shared module is built in both)
    built = {(i["module"], i["hash"]) for t in data["summary"]["tests"] for i in t["identities"]}
    written = data["samples"][0]["cold"]["cache"]
    on_disk = list(suite.cache.rglob("*.o"))
    assert len(built) >= 3 and written["binary_files"] == len(on_disk) == len(built), (written, built, on_disk)
    load = data["samples"][0]["cold"]["load"]
    assert load and load["cpus"] >= 1 and load["own_cpu_ms"] > 0, load
    shown = subprocess.run([str(PROBE), "report", str(report), "--history", "off"], capture_output=True, text=True)
    assert f"Warp {version}," in shown.stdout and "Warp ?" not in shown.stdout, shown.stdout[:1500]
    assert "observed, not run by the probe" in shown.stdout and "each cold then warm" not in shown.stdout, shown.stdout[:1500]


HOSTILE = TARGETS / "pytest_hostile"


def counts(stdout):
    """pytest's summary as its counts ({"passed": 3, "failed": 1}), never its '=' padding, whose
    width follows the run's duration."""
    tail = [l for l in stdout.splitlines() if re.match(r"^=+ .*(passed|failed|error).* =+$", l)]
    if not tail:
        return None
    return {word.rstrip("s") if word in ("errors", "warnings") else word: int(n)
            for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)", tail[-1])}


def run_pytest(folder, args, env, tmp_path, plugin=True, name=None):
    """pytest on `folder`, with the plugin loaded from the source tree or not at all, and what it
    says: exit code, the summary's counts, the JUnit XML's outcomes by class name and name."""
    junit = tmp_path / f"junit-{name or ('with' if plugin else 'without')}.xml"
    load = ["-p", "xwarp.pytest_plugin"] if plugin else []
    done = subprocess.run([str(VENV_PYTHON), "-m", "pytest", *load, "-p", "no:cacheprovider", f"--junitxml={junit}", *args],
                          cwd=folder, env=env, capture_output=True, text=True, errors="replace", timeout=900)
    cases = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            outcome = "failed" if case.find("failure") is not None else "error" if case.find("error") is not None else "passed"
            cases[case.get("name")] = outcome
            cases[(case.get("classname"), case.get("name"))] = outcome
    return done, counts(done.stdout), cases


def test_the_plugin_never_changes_the_run_it_observes(tmp_path):
    """Whatever the tests and the environment do, pytest's exit code, its summary line and its
    JUnit XML are the same with --warp-builds as without it: a what-if lever in the environment is
    not applied (the gradient test passes), a tuple of user_properties, a test's own warp_builds
    property, a conftest's module named xwarp_shim and ids with control characters or bytes that
    are not UTF-8 change nothing; the plugin's own trouble is one line of its section."""
    folder = tmp_path / "hostile"
    shutil.copytree(HOSTILE, folder)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XWARP_", "PYTEST_"))}
    env.update(PYTHONPATH=str(ROOT / "src" / "fronts" / "python"), WARP_CACHE_PATH=str(tmp_path / "cache"), PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{PROBE.parent}:{env.get('PATH', '')}", TMPDIR=str(scratch),
               XWARP_WHATIF=json.dumps({"lever": "backward-off", "params": {}}))
    without, without_line, without_cases = run_pytest(folder, [], env, tmp_path, plugin=False)
    report = tmp_path / "kept.json"
    with_, with_line, with_cases = run_pytest(folder, ["--warp-builds=50", f"--warp-builds-report={report}"], env, tmp_path)
    assert without.returncode == with_.returncode == 1, (without.stdout[-2000:], with_.stdout[-3000:])
    assert without_line == with_line and with_line.get("failed") == 1, (without_line, with_line)
    assert without_cases == with_cases and with_cases["test_gradients_flow_through_the_kernel"] == "passed", with_cases
    assert "INTERNALERROR" not in with_.stdout + with_.stderr and "Traceback" not in with_.stderr, with_.stderr[-3000:]
    section = with_.stdout.split("warp builds", 1)[1]
    # the builds are listed and the report kept; ids are shown escaped, never raw
    assert "report: " in section and json.loads(report.read_text())["summary"]["tests"], section
    assert "\x1b" not in section and "\u202e" not in section, section
    assert "tuple, not a list" in section and "the run itself is unchanged" in section, section
    # the test's own warp_builds property is not doubled
    junit = ET.parse(tmp_path / "junit-with.xml").getroot()
    (own,) = [c for c in junit.iter("testcase") if c.get("name") == "test_has_its_own_warp_builds_property"]
    assert [p.get("value") for p in own.iter("property") if p.get("name") == "warp_builds"] == ["mine"]
    # nothing left in TMPDIR
    assert list(scratch.iterdir()) == [], list(scratch.iterdir())


def test_a_report_path_the_plugin_cannot_use_is_a_line_not_a_failure(suite, tmp_path):
    (tmp_path / "to-null").symlink_to("/dev/null")
    for path, said in ((tmp_path / "to-null", "is a link or not a file"),
                       (tmp_path / "no-such-folder" / "report.json", "the report was not kept")):
        done = suite("--warp-builds=3", f"--warp-builds-report={path}", "test_alpha.py")
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        section = done.stdout.split("warp builds", 1)[1]
        assert said in section and "no report kept" in section, section
        assert "Traceback" not in done.stdout + done.stderr
    assert (tmp_path / "to-null").is_symlink() and os.readlink(tmp_path / "to-null") == "/dev/null"


def test_the_count_comes_after_equals_only_and_a_path_after_the_option_is_collected(suite, tmp_path):
    report = tmp_path / "r.json"
    done = suite("--warp-builds", f"--warp-builds-report={report}", "test_beta.py")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "test_beta.py" in done.stdout and "test_alpha.py" not in done.stdout, done.stdout[-3000:]
    data = json.loads(report.read_text())
    tests = {t["test"] for t in data["summary"]["tests"] if t["test"]}
    assert tests and all(t.startswith("test_beta.py::") for t in tests), tests
    # the report says what warp-probe measure would: this Python and Warp, the machine's CPUs, and
    # what the run wrote into Warp's cache
    env = data["environment"]
    assert env["warp_version"] == "1.19.0" and env["python_version"].count(".") == 2 and env["cpu_count"] >= 1, env
    shown = subprocess.run([str(PROBE), "report", str(report), "--history", "off"], capture_output=True, text=True)
    assert "Warp ?" not in shown.stdout and "(0 CPUs)" not in shown.stdout, shown.stdout[:800]
    assert data["samples"][0]["cold"]["cache"]["binary_files"] >= 1


def plugin_env(tmp_path, folder):
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XWARP_", "PYTEST_"))}
    env.update(PYTHONPATH=f"{ROOT / 'src' / 'fronts' / 'python'}:{folder}", WARP_CACHE_PATH=str(tmp_path / "cache"),
               PYTHONDONTWRITEBYTECODE="1", PATH=f"{PROBE.parent}:{env.get('PATH', '')}", TMPDIR=str(scratch))
    return env, scratch


def test_the_plugin_leaves_what_pytest_runs_where_it_was_under_xdist_and_a_report_path_as_two_words(suite, tmp_path):
    """Trust 6: `--warp-builds test_a.py -n 2` ran the other file's tests too (each xdist worker
    parses the command line again); `--warp-builds-report PATH` as two words, PATH an existing
    file, moved pytest's rootdir (pytest decides it before it knows a plugin's options) and with
    it the JUnit class names. Compared with the same run without the plugin: the counts, each
    test's class name and outcome, and the exit code."""
    env, scratch = plugin_env(tmp_path, suite.folder)
    base, base_counts, base_cases = run_pytest(suite.folder, ["test_alpha.py", "-n", "2"], env, tmp_path, plugin=False,
                                               name="base")
    assert base.returncode == 0 and base_counts["passed"] >= 2, base.stdout[-2000:]
    for n, args in enumerate((["--warp-builds", "test_alpha.py", "-n", "2"], ["test_alpha.py", "--warp-builds", "-n", "2"],
                              ["-n", "2", "--warp-builds", "test_alpha.py"])):
        done, got, cases = run_pytest(suite.folder, args, env, tmp_path, name=f"xdist{n}")
        assert done.returncode == 0 and got == base_counts and cases == base_cases, (args, got, base_counts)
    existing = tmp_path / "kept report.json"  # a space, and already there from a run before
    existing.write_text("{}")
    serial, serial_counts, serial_cases = run_pytest(suite.folder, ["test_alpha.py"], env, tmp_path, plugin=False,
                                                     name="serial")
    done, got, cases = run_pytest(suite.folder, ["--warp-builds", "--warp-builds-report", str(existing), "test_alpha.py"],
                                  env, tmp_path, name="two-words")
    assert done.returncode == 0 and got == serial_counts and cases == serial_cases, (got, sorted(cases)[:4])
    assert f"rootdir: {suite.folder}" in done.stdout, done.stdout[:600]
    assert json.loads(existing.read_text())["tool"] == "warp-probe"
    assert [p for p in scratch.iterdir() if p.name.startswith("xwarp-")] == [], list(scratch.iterdir())


def test_a_count_after_equals_is_a_count_and_a_word_is_a_usage_error(suite, tmp_path):
    env, _ = plugin_env(tmp_path, suite.folder)
    zero, got, _ = run_pytest(suite.folder, ["--warp-builds=0", "test_alpha.py"], env, tmp_path, name="zero")
    assert zero.returncode == 0 and got["passed"] >= 2, zero.stdout[-2000:] + zero.stderr[-2000:]
    section = zero.stdout.split("warp builds", 1)[1]
    assert not re.search(r"^\s+\d+\.\d\ds build  ", section, re.M) and "build(s)" in section, section
    word, _, _ = run_pytest(suite.folder, ["--warp-builds=ten", "test_alpha.py"], env, tmp_path, name="word")
    assert word.returncode == 4 and "--warp-builds=ten: the count after '=' is a whole number" in word.stderr, word.stderr


def test_a_conftest_that_moves_tempfile_and_a_run_that_ends_abruptly_change_nothing_and_leave_nothing(suite, tmp_path):
    """A conftest pointing tempfile.tempdir at a folder its session fixture makes later (the
    plugin's record folder is made in $TMPDIR, never there): pytest's exit code is unchanged. A test
    that calls os._exit and a pytest ended by SIGTERM leave no record folder behind."""
    env, scratch = plugin_env(tmp_path, suite.folder)
    later = tmp_path / "made-later"
    with open(suite.folder / "conftest.py", "a") as f:
        f.write(f"\n\nimport os\nimport tempfile as _tf\n_tf.tempdir = {str(later)!r}\n\n\n@pytest.fixture(scope='session', autouse=True)\n"
                f"def _made_later():\n    os.makedirs({str(later)!r}, exist_ok=True)\n    yield\n")
    without, without_counts, _ = run_pytest(suite.folder, ["test_alpha.py"], env, tmp_path, plugin=False, name="t0")
    with_, with_counts, _ = run_pytest(suite.folder, ["--warp-builds=3", "test_alpha.py"], env, tmp_path, name="t1")
    assert without.returncode == with_.returncode == 0 and without_counts == with_counts, with_.stdout[-3000:]
    assert "INTERNALERROR" not in with_.stdout + with_.stderr
    (suite.folder / "test_exits.py").write_text("import os\n\nimport warp as wp\n\n\ndef test_exits():\n    wp.init()\n"
                                                "    os._exit(0)\n")
    exited = subprocess.run([str(VENV_PYTHON), "-m", "pytest", "-p", "xwarp.pytest_plugin", "-p", "no:cacheprovider",
                             "--warp-builds=3", "test_exits.py"], cwd=suite.folder, env=env, capture_output=True, text=True,
                            timeout=600)
    assert exited.returncode == 0
    (suite.folder / "test_waits.py").write_text("import time\n\n\ndef test_waits():\n    time.sleep(600)\n")
    waiting = subprocess.Popen([str(VENV_PYTHON), "-m", "pytest", "-p", "xwarp.pytest_plugin", "-p", "no:cacheprovider",
                                "--warp-builds=3", "test_waits.py"], cwd=suite.folder, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.startswith("xwarp-pytest-") for p in scratch.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert any(p.name.startswith("xwarp-pytest-") for p in scratch.iterdir()), "the run never started"
        time.sleep(1)
        waiting.terminate()
        waiting.wait(60)
    finally:
        waiting.kill()
        waiting.wait()
    deadline = time.monotonic() + 10
    while [p for p in scratch.iterdir() if p.name.startswith("xwarp-pytest-")] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p.name for p in scratch.iterdir() if p.name.startswith("xwarp-pytest-")] == [], list(scratch.iterdir())


@pytest.mark.quick
def test_what_the_run_wrote_is_counted_in_the_folders_the_records_name_and_the_walk_is_bounded(tmp_path, monkeypatch):
    """A worker's record names its kernel cache: the controller walks that folder, and no more of
    it than a kernel cache holds (a record naming / is not a walk of the disk)."""
    import importlib

    monkeypatch.syspath_prepend(str(ROOT / "src" / "fronts" / "python"))
    plugin = importlib.import_module("xwarp.pytest_plugin")
    for i in range(10):
        (tmp_path / f"wp_m{i}_abcdef{i}").mkdir()
        (tmp_path / f"wp_m{i}_abcdef{i}" / "m.o").write_bytes(b"\0" * 8)
    assert plugin._cache_written(0, [str(tmp_path)])["binary_files"] == 10
    monkeypatch.setattr(plugin, "_CACHE_ENTRIES", 5)
    assert plugin._cache_written(0, [str(tmp_path)]) == {}
