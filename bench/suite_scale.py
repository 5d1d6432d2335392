#!/usr/bin/env python3
"""How a suite's attribution scales: the records of a real pytest run, multiplied.

A real run of tests/python/targets/suite under `warp-probe measure --keep-records` gives the
shim's records of a suite; its cold pass is then grown in place to
  - 80,000 test_use records (80,000 tests that each launched the shared module after its build),
  - 20,000 tests that each rebuilt one module (a compiled load per test, each at a hash of its own),
and `warp-probe report DIR` renders each as text and as HTML. Before the attribution was made
linear these took 49.8 s and 13.7 s. Goal: under 2 s each. Prints the seconds, median of 3.

Usage: .venv/bin/python3 bench/suite_scale.py [--tests N] [--rebuilds N]
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "python" / "targets" / "suite"


def grown(records, out, tests, rebuilds):
    """A copy of the kept records whose first cold process file gains the generated records."""
    shutil.copytree(records, out)
    cold = sorted((out / "sample-1" / "cold").glob("proc-*.jsonl"))
    for path in cold:
        lines = path.read_text().splitlines()
        rows = [json.loads(line) for line in lines]
        use = next((r for r in rows if r.get("type") == "call" and r.get("function") == "test_use"), None)
        load = next((r for r in rows if r.get("type") == "load" and r.get("status") == "compiled"), None)
        if use is None or load is None:
            continue
        exit_at = next(i for i, r in enumerate(rows) if r.get("type") == "exit")
        seq = max(r.get("seq", 0) for r in rows) + 1
        extra = []
        for i in range(tests):
            r = dict(use, seq=seq, args=dict(use["args"], test=f"test_scale.py::test_use_{i}"))
            extra.append(r)
            seq += 1
        for i in range(rebuilds):
            r = dict(load, seq=seq, test=f"test_scale.py::test_rebuild_{i}", hash=f"{i:016x}{load['hash'][16:]}")
            extra.append(r)
            seq += 1
        rows[exit_at:exit_at] = extra
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        return out
    sys.exit("no cold process record held both a test_use call and a compiled load")


def timed(probe, folder, fmt):
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        done = subprocess.run([str(probe), "report", str(folder), "--format", fmt, "-o", "/dev/null", "--history", "off"],
                              capture_output=True, text=True)
        runs.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"report --format {fmt} failed ({done.returncode}): {done.stderr[-1500:]}")
    return statistics.median(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=80_000)
    parser.add_argument("--rebuilds", type=int, default=20_000)
    args = parser.parse_args()
    probe = ROOT / "build" / "warp-probe"
    tmp = Path(tempfile.mkdtemp(prefix="xwarp-suite-scale-"))
    try:
        suite = tmp / "suite"
        shutil.copytree(SUITE, suite, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        records = tmp / "records"
        subprocess.run([str(probe), "measure", "-q", "--samples", "1", "--history", "off", "--keep-records", str(records),
                        "--cwd", str(suite), "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "test_alpha.py", "test_beta.py"], check=True, capture_output=True)
        for label, tests, rebuilds in (("test_use records", args.tests, 0), ("tests rebuilding one module", 0, args.rebuilds)):
            folder = grown(records, tmp / label.replace(" ", "-"), tests, rebuilds)
            n = tests or rebuilds
            text, html = timed(probe, folder, "text"), timed(probe, folder, "html")
            print(f"{n:,} {label}: report text {text:.2f} s, html {html:.2f} s (goal < 2 s each; median of 3)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
