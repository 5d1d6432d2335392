#!/usr/bin/env python3
"""What a warm-up's parallel build buys, and what it leaves at run time, in one run.

    .venv/bin/python3 bench/warmup_parallel.py [--workers N] [--samples N]

Measures the three-module package of tests/python/targets/warmup (a generic kernel at two
dtypes, one module at two block_dims, a plain module) once, then `warmup --verify` with N
workers, and prints: the warm-up's build time ÷ the program's serial cold build time (the same
run's report), the builds left at run time, and the primed program's wall ÷ its warm wall.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = Path(os.environ.get("XWARP_PROBE_BIN", ROOT / "build" / "warp-probe"))
PACKAGE = ROOT / "tests" / "python" / "targets" / "warmup"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--samples", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-") as tmp:
        report = Path(tmp) / "app.json"
        plan = Path(tmp) / "plan.json"
        subprocess.run([str(PROBE), "measure", "-q", "--history", "off", "--samples", "1", "--json", str(report),
                        "--cwd", str(PACKAGE), "--", sys.executable, "app.py"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([str(PROBE), "warmup", str(report), "-q", "--history", "off", "--run", "--verify",
                        "--samples", str(args.samples), "--workers", str(args.workers), "-o", str(Path(tmp) / "w.py"),
                        "--json", str(plan)], check=True, stdout=subprocess.DEVNULL)
        c = json.loads(plan.read_text())["check"]
    build, serial = c["warmup_build_ms"]["median"], c["serial_cold_build_ms"]
    primed, warm = c["primed_wall_ms"]["median"], c["warm_wall_ms"]["median"]
    left = len(c["covered_built"]) + len(c["uncovered_built"]) + len(c["new_built"])
    print(f"warm-up build ÷ serial cold build, {args.workers} workers: {build / serial:.2f} ({build:.0f} ms vs {serial:.0f} ms)")
    print(f"builds left at run time: {left}; verdict {c['verdict']}")
    print(f"primed wall ÷ warm wall: {primed / warm:.3f} ({primed:.0f} ms vs {warm:.0f} ms), n={c['samples']}")


if __name__ == "__main__":
    main()
