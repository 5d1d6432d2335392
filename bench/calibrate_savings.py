#!/usr/bin/env python3
"""How far each savings estimate is from what the fix measurably saves.

For each mechanism with a broken program and its fixed version (tests/python/targets/diagnose),
this measures both, one sample at a time alternately (so a slow stretch of the machine lands on
both sides), takes the finding's estimate from the broken program's report and the measured
saving as the difference of the two programs' median module work, and prints, per mechanism:

    estimate, measured, error (estimate - measured, and as % of measured), the measured saving's
    standard error, and, with --whatif, the saving the what-if replay of the finding's lever
    measured on the unmodified broken program (the same figure without editing the code).

This is a benchmark, not a test: it prints numbers and ratios from one run and never fails on
them. The estimates' models are described in references/measurement.md#savings-estimates.

Usage: bench/calibrate_savings.py [--samples 5] [--only CS-1,CS-9] [--whatif] [--json OUT]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ["XWARP_HISTORY"] = "off"  # calibration runs stay out of the user's history
DIAG = ROOT / "tests" / "python" / "targets" / "diagnose"

# mechanism -> (folder, broken, fixed, pass whose module work the fix changes, leave headers out)
PAIRS = {
    "CS-1": (DIAG, "cs1_late.py", "cs1_late_fixed.py", "cold", True),
    "CS-1 factory": (DIAG, "cs1_factory.py", "cs1_factory_fixed.py", "cold", True),
    "CS-3": (DIAG, "cs3_option.py", "cs3_option_fixed.py", "cold", True),
    "CS-6": (DIAG, "cs6_generic.py", "cs6_generic_fixed.py", "cold", True),
    "CS-2": (DIAG, "cs2_nocache.py", "cs2_nocache_fixed.py", "warm", False),
    "preload-block-dim": (DIAG, "preload_cpu.py", "preload_cpu_fixed.py", "cold", False),
    "CS-9": (DIAG, "cs9_unique.py", "cs9_shared.py", "cold", True),
    "CS-4": (DIAG / "granular", "app.py", "app_grouped.py", "cold", True),
}


def median(v):
    return statistics.median(v) if v else float("nan")


def mad(v):
    m = median(v)
    return median([abs(x - m) for x in v])


def work(report, passname, without_pch):
    return [sum(l["warp_ms"] - ((l["pch_ms"] or 0.0) if without_pch else 0.0) for l in s[passname]["module_loads"])
            for s in report["samples"] if s.get("warm")]


def measure(probe, python, cwd, program, out, extra=()):
    proc = subprocess.run([probe, "measure", "--quiet", "--samples", "1", "--json", str(out), *extra, "--", python, program],
                          cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{program}: warp-probe exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return json.loads(out.read_text())


def merged(probe, parts, tmp, name):
    report = dict(parts[0])
    report["samples"] = [dict(s, index=i) for i, s in enumerate((s for p in parts for s in p["samples"]), 1)]
    report["settings"] = dict(report["settings"], samples=len(report["samples"]))
    raw = tmp / f"{name}.merged.json"
    raw.write_text(json.dumps(report))
    out = tmp / f"{name}.json"
    subprocess.run([probe, "report", "--format", "json", "--output", str(out), str(raw)], check=True)
    return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--whatif", action="store_true", help="also replay each finding's lever on the broken program")
    ap.add_argument("--probe", default=str(ROOT / "build" / "warp-probe"))
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python3"))
    ap.add_argument("--json", help="write the table as JSON")
    a = ap.parse_args()
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="xwarp-calibrate-") as t:
        tmp = Path(t)
        for mech, (cwd, broken, fixed, passname, without_pch) in PAIRS.items():
            if only and mech not in only:
                continue
            parts = {broken: [], fixed: []}
            for i in range(a.samples):
                for program in (broken, fixed):
                    parts[program].append(measure(a.probe, a.python, cwd, program, tmp / f"{mech}-{program}-{i}.json"))
            b = merged(a.probe, parts[broken], tmp, f"{mech}-broken")
            f = merged(a.probe, parts[fixed], tmp, f"{mech}-fixed")
            wb, wf = work(b, passname, without_pch), work(f, passname, without_pch)
            measured = median(wb) - median(wf)
            se = math.sqrt(sum((1.253 * 1.4826 * mad(x)) ** 2 / len(x) for x in (wb, wf)))
            key = mech.split()[0]
            found = [x for x in b["findings"] if x["mechanism"] == key]
            estimate = found[0]["savings_ms"] if found and found[0]["savings_ms"] is not None else float("nan")
            row = {"mechanism": mech, "estimate_ms": estimate, "measured_ms": measured, "se_ms": se,
                   "error_ms": estimate - measured, "error_pct": 100.0 * (estimate - measured) / measured if measured else float("nan")}
            if a.whatif and found and found[0].get("lever"):
                out = tmp / f"{mech}-whatif.json"
                rb = tmp / f"{mech}-broken.json"
                proc = subprocess.run([a.probe, "whatif", str(rb), found[0]["lever"], "--samples", str(a.samples),
                                       "--budget", "100000", "--quiet", "--json", str(out)], cwd=cwd, capture_output=True, text=True)
                if proc.returncode == 0:
                    w = [x for x in json.loads(out.read_text())["whatif"] if x["lever"] == found[0]["lever"]][0]
                    saving = w["saving_ms"]
                    row["whatif"] = {"lever": w["lever"], "verdict": w["verdict"],
                                     "saving_ms": saving.get("warm_module_work") if passname == "warm" else saving["cold_module_work"]}
            rows.append(row)
            print(f"{mech:20s} estimate {estimate:8.0f} ms  measured {measured:8.0f} ms  error {row['error_ms']:+7.0f} ms "
                  f"({row['error_pct']:+5.1f}%)  se {se:5.0f} ms"
                  + (f"  what-if {row['whatif']['lever']}: {row['whatif']['saving_ms']:.0f} ms {row['whatif']['verdict']}"
                     if "whatif" in row and row["whatif"]["saving_ms"] is not None else ""), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
