#!/usr/bin/env python3
"""Kernel start: time from launching the kernel to its kernel_info reply, xwarp ÷ Debian's
xpython (the same xeus-python underneath, without the warp magics and the venv start-up).
Interleaved in one run; medians and the ratio are printed. Goal: ratio <= 1.5.

Usage: bench/kernel_start.py [--rounds N]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]


def start_once(name):
    km = KernelManager(kernel_name=name)
    t0 = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)  # sends kernel_info_request, waits for the reply
        return time.perf_counter() - t0
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    os.environ["JUPYTER_PATH"] = str(ROOT / "build" / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")

    times = {"xwarp": [], "xpython": []}
    start_once("xwarp")
    start_once("xpython")  # warm the file cache for both
    for i in range(args.rounds):
        order = ["xwarp", "xpython"] if i % 2 == 0 else ["xpython", "xwarp"]
        for name in order:
            times[name].append(start_once(name))
        print(f"round {i + 1}/{args.rounds}: xwarp {times['xwarp'][-1]:.3f} s, xpython {times['xpython'][-1]:.3f} s", flush=True)
    mx, mp = statistics.median(times["xwarp"]), statistics.median(times["xpython"])
    print()
    print(f"xwarp   time to kernel_info reply: median {mx:.3f} s")
    print(f"xpython time to kernel_info reply: median {mp:.3f} s")
    print(f"start ratio: {mx / mp:.2f}  (goal <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
