#!/usr/bin/env python3
"""Checks a `measure --nvrtc-trace` run on a GPU (tests/gpu/device_session.sh STEP=nvrtc): every
CUDA module the cold pass built through NVRTC has its trace in the report, and the Chrome trace
export holds NVRTC's phases on the lane of the load they belong to, inside its native compile.
Prints a short table; exits non-zero on the first broken check.

Usage: check_nvrtc_trace.py REPORT.json TRACE.json"""

import json
import sys


def main():
    report = json.load(open(sys.argv[1]))
    trace = json.load(open(sys.argv[2]))
    failures = []

    def check(what, ok, detail=""):
        print(f"{'ok  ' if ok else 'FAIL'} {what}{': ' + detail if detail else ''}")
        if not ok:
            failures.append(what)

    check("settings.nvrtc_trace", report["settings"].get("nvrtc_trace") is True)
    cold = report["samples"][0]["cold"]
    built = [l for l in cold["module_loads"] if l["status"] == "compiled" and l["device"].startswith("cuda")]
    traces = cold.get("nvrtc_traces", [])
    check("one NVRTC trace per CUDA build", len(traces) == len(built) and len(built) > 0,
          f"{len(traces)} traces, {len(built)} CUDA builds; notes {cold['notes']}")
    for t in traces:
        matched = [l for l in built if l["hash"].startswith(t["hash_prefix"])] if t["hash_prefix"] else []
        check(f"trace {t['file']} names a build", len(matched) == 1, f"{len(t['events'])} events, {t['events_dropped']} dropped")
    events = trace["traceEvents"]
    compiles = [e for e in events if e.get("cat") == "compile"]
    nvrtc = [e for e in events if e.get("cat") == "nvrtc"]
    check("NVRTC phases in the Chrome trace", len(nvrtc) > 0, f"{len(nvrtc)} events under {len(compiles)} compiles")
    outside = 0
    for e in nvrtc:
        lane = [c for c in compiles if c["pid"] == e["pid"] and c["tid"] == e["tid"]
                and c["args"]["hash"] == e["args"]["hash"]]
        if not lane or not (lane[0]["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= lane[0]["ts"] + lane[0]["dur"] + 1000):
            outside += 1
    check("each NVRTC phase on its load's lane, inside its compile (1 ms slack)", outside == 0, f"{outside} outside")
    longest = sorted(nvrtc, key=lambda e: -e["dur"])[:5]
    for e in longest:
        print(f"     {e['dur'] / 1000:8.1f} ms  {e['name'][:90]}")
    for c in compiles:
        mine = [e for e in nvrtc if e["args"]["hash"] == c["args"]["hash"]]
        top = max((e["ts"] + e["dur"] for e in mine), default=c["ts"]) - c["ts"]
        print(f"     compile {c['args']['module']:>10} {c['dur'] / 1000:8.1f} ms, NVRTC phases reach {top / 1000:8.1f} ms")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
