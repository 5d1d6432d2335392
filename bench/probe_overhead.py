#!/usr/bin/env python3
"""Probe overhead on a real Warp program.

ratio = (wall of `warp-probe measure --samples 1`, i.e. one cold + one warm pass with the
shim, records, log scan, cache inventory, environment facts and report writing)
        / (bare cold + bare warm of the same command, caches isolated the same way)

Both are measured interleaved in one run, alternating which goes first, so drift on the
machine hits both sides alike. Goal: ratio <= 1.03. Prints medians and the ratio.

Then the probe's own fixed cost on a trivial command (a Python that imports nothing): the
probe's wall minus the bare cold + warm wall, in ms (goal: <= 30 ms beyond the target's own
passes), and the time to the first provisional finding of a 2-sample measure against the
first sample's cold + warm wall (goal: <= +0.2 s).

Usage: bench/probe_overhead.py [--rounds N] [--program demo/particles_churn.py]
"""

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bare_sample(python, program, cwd):
    tmp = tempfile.mkdtemp(prefix="xwarp-bench-")
    try:
        env = dict(
            os.environ,
            WARP_CACHE_PATH=f"{tmp}/warp",
            WARP_CACHE_ROOT=f"{tmp}/warp",
            CUDA_CACHE_PATH=f"{tmp}/cuda",
            PYTHONDONTWRITEBYTECODE="1",
            TMPDIR=tmp,
        )
        total = 0.0
        for _ in ("cold", "warm"):
            t0 = time.perf_counter()
            subprocess.run([python, program], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            total += time.perf_counter() - t0
        return total
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def probe_sample(probe, python, program, cwd):
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-") as tmp:
        t0 = time.perf_counter()
        subprocess.run(
            [probe, "measure", "--quiet", "--samples", "1", "--json", f"{tmp}/r.json",
             "--history", f"{tmp}/history.sqlite3", "--", python, program],
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--program", default=str(ROOT / "demo" / "particles_churn.py"))
    ap.add_argument("--probe", default=str(ROOT / "build" / "warp-probe"))
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python3"))
    args = ap.parse_args()
    program = Path(args.program).resolve()

    probe_s, bare_s = [], []
    # one unmeasured round of each warms the OS file cache for both sides
    bare_sample(args.python, str(program), program.parent)
    probe_sample(args.probe, args.python, str(program), program.parent)
    for i in range(args.rounds):
        order = [("probe", probe_s), ("bare", bare_s)]
        if i % 2:
            order.reverse()
        for name, bucket in order:
            if name == "probe":
                bucket.append(probe_sample(args.probe, args.python, str(program), program.parent))
            else:
                bucket.append(bare_sample(args.python, str(program), program.parent))
        print(f"round {i + 1}/{args.rounds}: probe {probe_s[-1]:.3f} s, bare cold+warm {bare_s[-1]:.3f} s", flush=True)

    # The fixed cost, on a command that does nothing.
    fixed_probe, fixed_bare = [], []
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-") as tmp:
        trivial = Path(tmp) / "trivial.py"
        trivial.write_text("pass\n")
        for i in range(args.rounds):
            fixed_probe.append(probe_sample(args.probe, args.python, str(trivial), Path(tmp)))
            fixed_bare.append(bare_sample(args.python, str(trivial), Path(tmp)))

    # Time to the first provisional finding.
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-") as tmp:
        t0 = time.perf_counter()
        proc = subprocess.Popen([args.probe, "measure", "--samples", "2", "--json", f"{tmp}/r.json", "--", args.python,
                                 str(program)], cwd=program.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True)
        first_finding = None
        for line in proc.stderr:
            if line.startswith("[provisional") and first_finding is None:
                first_finding = time.perf_counter() - t0
        proc.wait()
        import json as _json

        s1 = _json.load(open(f"{tmp}/r.json"))["samples"][0]
        first_sample_s = (s1["cold"]["wall_ms"] + s1["warm"]["wall_ms"]) / 1000.0

    mp, mb = statistics.median(probe_s), statistics.median(bare_s)
    cpu = ""
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print()
    print(f"machine: {platform.platform()}, {cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"program: {program.name}, rounds: {args.rounds}")
    print(f"probe sample (cold+warm, everything): median {mp:.3f} s")
    print(f"bare cold + bare warm:                median {mb:.3f} s")
    print(f"overhead ratio: {mp / mb:.3f}  (goal <= 1.03)")
    fp, fb = statistics.median(fixed_probe), statistics.median(fixed_bare)
    print(f"trivial command: probe {fp * 1000:.0f} ms vs bare cold+warm {fb * 1000:.0f} ms: "
          f"the probe adds {(fp - fb) * 1000:.0f} ms  (goal <= 30 ms)")
    if first_finding is not None:
        print(f"first provisional finding after {first_finding:.2f} s; the first sample's passes took "
              f"{first_sample_s:.2f} s: +{first_finding - first_sample_s:.2f} s  (goal <= +0.20 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
