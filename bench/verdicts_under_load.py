#!/usr/bin/env python3
"""Do the verdicts hold on a busy machine? A fixed set of programs, each measured with its
what-if replays, and a fixed set of before/after pairs compared, first on a quiet machine and
then with N CPU-bound loops beside them. Prints every finding and verdict both ways and how
many changed (goal: none).

What counts as a verdict: each replay's verdict (a lever measured on the unmodified program),
each compare's verdict, and each program's set of findings. A verdict the quiet run decided
(improved, regressed) and the busy run withheld ("inconclusive": its band, widened by the load,
held the other side) is counted apart as withheld: the tool declining to judge what the load
moved, not a verdict that flipped. Changed is everything else that differs: a decided verdict
reversed, one decided on another clock, a verdict the busy run decided where the quiet run
withheld it, a finding that came or went.

With --control, a second quiet round runs first and the same counts are printed between the two
quiet rounds: what changes there is the verdicts' own noise, which no clock removes.

Usage: bench/verdicts_under_load.py [--loops 2] [--samples 3] [--only NAME] [--control]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ROOT / "tests" / "python" / "targets"

# (name, program, levers): every lever the program's findings call for, or the ones named
PROGRAMS = [
    ("demo churn", ROOT / "demo" / "particles_churn.py", "auto"),
    ("forward only", TARGETS / "whatif" / "forward_only.py", "backward-off"),
    ("CS-3 late option", TARGETS / "diagnose" / "cs3_option.py", "auto"),
    ("CS-6 late generic", TARGETS / "diagnose" / "cs6_generic.py", "auto"),
    ("CS-2 cache thrown away", TARGETS / "diagnose" / "cs2_nocache.py", "auto"),
    ("CS-9 unique modules", TARGETS / "diagnose" / "cs9_unique.py", "auto"),
    ("granular modules", TARGETS / "diagnose" / "granular" / "app.py", "auto"),
]

# (name, before, after): a program and its fix, compared
PAIRS = [
    ("CS-1 hoisted", TARGETS / "diagnose" / "cs1_late.py", TARGETS / "diagnose" / "cs1_late_fixed.py"),
    ("CS-3 set in time", TARGETS / "diagnose" / "cs3_option.py", TARGETS / "diagnose" / "cs3_option_fixed.py"),
    ("late kernels hoisted", TARGETS / "compare" / "late_many.py", TARGETS / "compare" / "late_many_fixed.py"),
]


def probe_path():
    found = shutil.which("warp-probe")
    return found or str(ROOT / "build" / "warp-probe")


def python_path():
    venv = ROOT / ".venv" / "bin" / "python3"
    return str(venv if venv.exists() else sys.executable)


def start_loops(n):
    # plain CPU-bound processes, as a shared machine's other jobs are
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_loops(loops):
    for p in loops:
        p.kill()
    for p in loops:
        p.wait()


def measure(probe, python, program, levers, samples, out):
    args = [probe, "measure", "--quiet", "--samples", str(samples), "--json", str(out), "--history",
            str(out.parent / "history.sqlite3")]
    if levers:
        args += ["--whatif", levers, "--whatif-budget", "600"]
    subprocess.run(args + ["--", python, str(program)], cwd=program.parent, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=1800)
    return json.loads(out.read_text())


def compare(probe, before, after, out):
    proc = subprocess.run([probe, "compare", str(before), str(after), "--json", str(out)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, timeout=600)
    return json.loads(out.read_text()) if out.exists() else {"verdict": f"exit {proc.returncode}"}


def one_round(probe, python, samples, only, folder):
    """{item: what it said} for every program and pair."""
    said = {}
    for name, program, levers in PROGRAMS:
        if only and only not in name:
            continue
        r = measure(probe, python, program, levers, samples, folder / f"{len(said)}.json")
        said[f"{name}: findings"] = ",".join(sorted({f["mechanism"] for f in r.get("findings", [])})) or "none"
        for w in r.get("whatif", []):
            if w["verdict"] in ("not-run",):
                continue
            said[f"{name}: {w['lever']}"] = (w["verdict"], w.get("judged_by") or w.get("judged_on", "")[:20])
    for name, before, after in PAIRS:
        if only and only not in name:
            continue
        b = measure(probe, python, before, None, samples, folder / f"{len(said)}-before.json")
        a = measure(probe, python, after, None, samples, folder / f"{len(said)}-after.json")
        del b, a
        c = compare(probe, folder / f"{len(said)}-before.json", folder / f"{len(said)}-after.json",
                    folder / f"{len(said)}-compare.json")
        said[f"{name}: compare"] = (c["verdict"], c.get("decided_by", ""))
    return said


def _verdict(said):
    return said[0] if isinstance(said, tuple) else said


DECIDED = ("improved", "regressed")


def classify(first, second):
    """"same", "withheld" (the first decided, the second inconclusive) or "changed"."""
    if first == second:
        return "same"
    if _verdict(first) in DECIDED and _verdict(second) == "inconclusive":
        return "withheld"
    return "changed"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loops", type=int, default=2, help="CPU-bound loops beside the busy round (default 2)")
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--only", default="", help="only the programs and pairs whose name contains this")
    ap.add_argument("--control", action="store_true", help="a second quiet round, compared with the first")
    args = ap.parse_args()
    probe, python = probe_path(), python_path()
    with tempfile.TemporaryDirectory(prefix="xwarp-bench-load-") as tmp:
        quiet_dir, busy_dir = Path(tmp, "quiet"), Path(tmp, "busy")
        quiet_dir.mkdir()
        busy_dir.mkdir()
        t0 = time.perf_counter()
        quiet = one_round(probe, python, args.samples, args.only, quiet_dir)
        t_quiet = time.perf_counter() - t0
        control = None
        if args.control:
            control_dir = Path(tmp, "control")
            control_dir.mkdir()
            control = one_round(probe, python, args.samples, args.only, control_dir)
        loops = start_loops(args.loops)
        try:
            t0 = time.perf_counter()
            busy = one_round(probe, python, args.samples, args.only, busy_dir)
            t_busy = time.perf_counter() - t0
        finally:
            stop_loops(loops)
    counts = {"same": 0, "withheld": 0, "changed": 0}
    width = max(len(k) for k in quiet) + 2
    print(f"{'item'.ljust(width)}{'quiet'.ljust(40)}{args.loops} busy loops beside it")
    for item in quiet:
        q, b = quiet[item], busy.get(item, "absent")
        kind = classify(q, b)
        counts[kind] += 1
        mark = {"same": "", "withheld": "  (withheld under load)", "changed": "  CHANGED"}[kind]
        print(f"{item.ljust(width)}{str(q).ljust(40)}{b}{mark}")
    print(f"\n{sum(counts.values())} verdicts and finding sets; under {args.loops} busy loops changed: "
          f"{counts['changed']} (goal 0), withheld: {counts['withheld']}")
    if control is not None:
        between = {"same": [], "withheld": [], "changed": []}
        for item in quiet:
            first, second = quiet[item], control.get(item, "absent")
            kind = classify(first, second)
            if kind == "withheld" or (kind == "changed" and classify(second, first) == "withheld"):
                kind = "withheld"  # between two quiet rounds either may be the one that withheld
            between[kind].append(f"{item}: {first} vs {second}")
        print(f"between two quiet rounds (the control) changed: {len(between['changed'])} (goal 0)"
              + ("; " + "; ".join(between["changed"]) if between["changed"] else "")
              + f"; withheld in one of them: {len(between['withheld'])}"
              + ("; " + "; ".join(between["withheld"]) if between["withheld"] else ""))
    print(f"rounds took {t_quiet:.0f} s quiet and {t_busy:.0f} s busy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
