#!/usr/bin/env python3
"""The shim's start-up cost in a process of the command that never imports Warp.

Every Python process of a measured command imports the shim (sitecustomize) and starts the
recorder; most of a test suite's or a build script's processes never import Warp. This prints
the median wall of `python -c pass` with the installed shim recording, without it, and the
difference, measured interleaved in one run (so drift hits both alike). Goal: <= 5 ms beyond
a bare Python.

Usage: bench/shim_start.py [--rounds N] [--python PATH] [--shim DIR]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(python, env):
    t0 = time.perf_counter()
    subprocess.run([python, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python3"))
    parser.add_argument("--shim", default=str(ROOT / "build" / "share" / "xwarp" / "shim"))
    args = parser.parse_args()
    if not (Path(args.shim) / "xwarp_shim" / "__init__.py").is_file():
        sys.exit(f"no shim at {args.shim}: build first (cmake --build build)")
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-") as records:
        bare = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        bare.pop("XWARP_RECORD_DIR", None)
        shimmed = dict(bare, PYTHONPATH=args.shim, XWARP_RECORD_DIR=records)
        with_shim, without = [], []
        for i in range(args.rounds):
            pair = [(with_shim, shimmed), (without, bare)]
            for times, env in (pair if i % 2 == 0 else pair[::-1]):
                times.append(one(args.python, env))
        leftover = list(Path(records).iterdir())
    w, b = statistics.median(with_shim) * 1000, statistics.median(without) * 1000
    print(f"python -c pass, median of {args.rounds} interleaved: {w:.1f} ms with the shim recording, "
          f"{b:.1f} ms bare: +{w - b:.1f} ms (goal <= 5 ms); records left by processes without Warp: {len(leftover)}")


if __name__ == "__main__":
    main()
