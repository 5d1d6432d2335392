#!/usr/bin/env python3
"""What `pytest --warp-builds` costs a suite's wall.

ratio = (wall of `pytest --warp-builds` on the suite) / (wall of plain `pytest` on the same suite)

A generated suite of real Warp tests (FILES files of TESTS tests, each file with a module of its
own kernels) runs on one kept kernel cache (the CI job the plugin is for: it records what loads,
whether or not anything builds), the two forms interleaved round by round, alternating which goes
first, so that drift on the machine hits both alike. Then the same with `-n 2` (pytest-xdist),
where each worker process starts the shim. Goal: ratio <= 1.02. Prints medians and ratios.

pytest and pytest-xdist go into a temporary folder (pip --target, from PyPI); the plugin is the
source tree's (`-p xwarp.pytest_plugin`), the probe build/warp-probe, the shim the installed one
(scripts/setup.sh installs it).

Usage: .venv/bin/python3 bench/plugin_overhead.py [--rounds N] [--files N] [--tests N]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TEST_FILE = '''import numpy as np
import warp as wp


@wp.kernel
def scale_{i}(a: wp.array(dtype=float), s: float):
    t = wp.tid()
    a[t] = wp.sin(a[t]) * s + float({i})


@wp.kernel
def add_{i}(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    t = wp.tid()
    a[t] = a[t] + b[t]

'''

TEST_CASE = '''
def test_{i}_{j}():
    a = wp.ones(64, dtype=float)
    wp.launch(scale_{i}, dim=64, inputs=[a, {j}.0])
    wp.launch(add_{i}, dim=64, inputs=[a, a])
    assert np.isfinite(a.numpy()).all()
'''


def make_suite(folder, files, tests):
    folder.mkdir(parents=True)
    for i in range(files):
        text = TEST_FILE.format(i=i) + "".join(TEST_CASE.format(i=i, j=j) for j in range(tests))
        (folder / f"test_gen_{i}.py").write_text(text)


def timed(command, env, cwd):
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--tests", type=int, default=10)
    args = parser.parse_args()
    probe = ROOT / "build" / "warp-probe"
    if not probe.exists():
        sys.exit("build/warp-probe is missing: run scripts/setup.sh first")
    tmp = Path(tempfile.mkdtemp(prefix="xwarp-plugin-bench-"))
    try:
        site = tmp / "site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(site),
                        "pytest", "pytest-xdist"], check=True)
        suite = tmp / "suite"
        make_suite(suite, args.files, args.tests)
        env = dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{ROOT / 'src' / 'fronts' / 'python'}", WARP_CACHE_PATH=str(tmp / "cache"),
                   PATH=f"{probe.parent}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONDONTWRITEBYTECODE="1")
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "xwarp.pytest_plugin"]
        report = tmp / "report.json"
        plugin = ["--warp-builds", "--warp-builds-report", str(report)]
        # fill the kept cache once (the suite's builds are not what is measured here)
        _, first = timed([*base, *plugin], env, suite)
        if "warp builds" not in first:
            sys.exit("the plugin printed no 'warp builds' section: is it loading?\n" + first[-2000:])
        print(f"suite: {args.files} files x {args.tests} tests, {sys.executable}, kept cache {tmp / 'cache'}")
        for label, extra in (("serial", []), ("-n 2", ["-n", "2"])):
            plain, recorded = [], []
            for r in range(args.rounds):
                order = [(plain, []), (recorded, plugin)]
                if r % 2:
                    order.reverse()
                for into, flags in order:
                    wall, _ = timed([*base, *extra, *flags], env, suite)
                    into.append(wall)
            p, q = statistics.median(plain), statistics.median(recorded)
            print(f"{label:>7}: plain {p:.3f} s, --warp-builds {q:.3f} s, ratio {q / p:.3f} "
                  f"(goal <= 1.02; {args.rounds} rounds interleaved)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
