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


HOSTILE = TARGETS / "pytest_hostile"


def run_pytest(folder, args, env, tmp_path, plugin=True):
    """pytest on `folder`, with the plugin loaded from the source tree or not at all, and what it
    says: exit code, the summary's last line, the JUnit XML's outcomes."""
    junit = tmp_path / ("junit-with.xml" if plugin else "junit-without.xml")
    load = ["-p", "xwarp.pytest_plugin"] if plugin else []
    done = subprocess.run([str(VENV_PYTHON), "-m", "pytest", *load, "-p", "no:cacheprovider", f"--junitxml={junit}", *args],
                          cwd=folder, env=env, capture_output=True, text=True, errors="replace", timeout=900)
    tail = [l for l in done.stdout.splitlines() if re.match(r"^=+ .*(passed|failed).* =+$", l)]
    cases = {}
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            outcome = "failed" if case.find("failure") is not None else "error" if case.find("error") is not None else "passed"
            cases[case.get("name")] = outcome
    return done, (re.sub(r" in [\d.]+s", "", tail[-1]) if tail else None), cases


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
    assert without_line == with_line and "1 failed" in with_line, (without_line, with_line)
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
