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
    env.update(PYTHONPATH=f"{ROOT / 'python'}:{folder}", WARP_CACHE_PATH=str(cache), PYTHONDONTWRITEBYTECODE="1",
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
