#!/usr/bin/env python3
"""The CUDA scenarios of the probe, run on a machine with an NVIDIA GPU.

Measures, with warp-probe, real Warp programs (tests/gpu/programs) that show the CUDA-only
mechanisms, compares their levers, checks what each must show, and writes results.json and a
Markdown table to --out. Exit status: 0 when every check passed, 1 otherwise, 2 when there is
no CUDA device (nothing to check).

  CS-5   one module at two block_dims -> two identities with the same kernel set
  CS-7   tile_matmul -> LTO artifacts, the link-dominated flag, fewer links without backward
  CS-12  precompiled header on vs off, measured
  CS-13  six modules built serially vs a parallel preload, judged on compile elapsed
  cache  cold samples isolate the driver's compute cache (nothing in ~/.nv), and the cost of
         a (cached) load of a PTX module when the compute cache is cold
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = HERE / "programs"


def run(cmd, env, cwd=PROGRAMS, timeout=900):
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", required=True)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--cpu", action="store_true",
                    help="measure the levers that also apply on a CPU (CS-12, CS-13) on the CPU, for the table beside the GPU one")
    ap.add_argument("--only", default="cs5,cs7,cs13,cache",
                    help="comma-separated scenario groups to run (cs5, cs7, cs13 with CS-12, cache)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    # the programs run in their own folder: make paths absolute first
    args.probe = str(Path(shutil.which(args.probe) or args.probe).resolve())
    args.python = str(Path(shutil.which(args.python) or args.python).absolute())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="xwarp-gpu-"))
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("WARP_CACHE_PATH", "CUDA_CACHE_PATH", "CUDA_CACHE_DISABLE")}
    env["HOME"] = str(home)  # the driver's default compute cache would be $HOME/.nv
    if args.cpu:
        env["XWARP_SCENARIO_DEVICE"] = "cpu"

    # Warp and the driver outside the probe get a HOME of their own, so that ~/.nv under
    # `home` can only have come from a probe run.
    setup_home = work / "setup-home"
    setup_home.mkdir()
    setup_env = dict(env, HOME=str(setup_home))
    count = run([args.python, "-c", "import warp as wp; print(wp.get_cuda_device_count())"], setup_env)
    if not args.cpu and (count.returncode != 0 or not count.stdout.strip().splitlines()
                         or count.stdout.strip().splitlines()[-1] == "0"):
        print("no CUDA device: the GPU scenarios need one (this is not a failure of the probe)")
        print(count.stdout[-500:], count.stderr[-1000:])
        return 2

    reports, comparisons, checks = {}, {}, []

    def check(name, ok, detail):
        checks.append({"check": name, "ok": bool(ok), "detail": detail})
        print(("PASS " if ok else "FAIL ") + name + ": " + detail, flush=True)

    def measure(name, program, samples=args.samples):
        path = work / f"{name}.json"
        p = run([args.probe, "measure", "--quiet", "--samples", samples, "--label", name, "--json", path, "--",
                 args.python, program], env)
        if not path.exists():
            check(f"measure {name}", False, f"exit {p.returncode}: {p.stderr[-800:]}")
            return None
        reports[name] = json.loads(path.read_text())
        return reports[name]

    def compare(a, b):
        path = work / f"cmp-{a}-{b}.json"
        p = run([args.probe, "compare", work / f"{a}.json", work / f"{b}.json", "--json", path], env)
        if not path.exists():
            check(f"compare {a} {b}", False, f"exit {p.returncode}: {p.stderr[-800:]}")
            return None
        comparisons[f"{a} -> {b}"] = c = json.loads(path.read_text())
        return c

    doctor = run([args.probe, "doctor", "--python", args.python, "--json", work / "doctor.json"], setup_env)
    print(doctor.stdout)
    doctor_facts = json.loads((work / "doctor.json").read_text()) if (work / "doctor.json").exists() else {}
    if not args.cpu:
        check("doctor lists the GPU", bool(doctor_facts.get("machine", {}).get("gpus")),
              doctor.stdout.strip().splitlines()[-2] if doctor.stdout.strip() else doctor.stderr[-300:])

    def mechanisms(r):
        return sorted({f["mechanism"] for f in r["findings"]})

    # CS-5 -----------------------------------------------------------------------------------
    r = None if args.cpu or "cs5" not in only else measure("bd_spread", "bd_spread.py")
    if r:
        ids = r["summary"]["identities"]
        bds = sorted(i["block_dim"] for i in ids if i["module"] == "__main__")
        check("CS-5: two identities of one module at block_dims 128 and 256", bds == [128, 256], f"identities {bds}")
        check("CS-5: the same kernel set in both", len({i["kernels"] for i in ids}) == 1 and ids[0]["kernels"] == 2,
              f"kernels per identity {[i['kernels'] for i in ids]}")
        check("CS-5 finding", "CS-5" in mechanisms(r), f"findings {mechanisms(r)}")
    if r and measure("bd_split", "bd_split.py"):
        c = compare("bd_spread", "bd_split")
        if c:
            check("CS-5 lever keeps the workload", c["workload"]["status"] == "same", c["workload"]["reason"])

    # CS-7 -----------------------------------------------------------------------------------
    r = None if args.cpu or "cs7" not in only else measure("tile_gemm", "tile_gemm.py")
    if r:
        lto = r["summary"]["lto_artifacts"]["median"] or 0
        check("CS-7: tile_matmul leaves LTO artifacts", lto > 0, f"LTO artifacts {lto}")
        flags = [f["id"] for f in r["summary"]["flags"]]
        check("CS-7: link-dominated flag", "LINK_DOMINATED" in flags, f"flags {flags}")
        check("CS-7 finding", "CS-7" in mechanisms(r), f"findings {mechanisms(r)}")
    r2 = None if args.cpu or "cs7" not in only else measure("tile_gemm_forward", "tile_gemm_forward.py")
    if r and r2:
        a = r["summary"]["lto_artifacts"]["median"] or 0
        b = r2["summary"]["lto_artifacts"]["median"] or 0
        check("CS-7/CS-10: fewer LTO artifacts without backward", b < a, f"{a} with backward, {b} without")

    # CS-13 and CS-12: six modules built serially (with the precompiled header, the default) --
    r = measure("serial", "serial.py") if "cs13" in only else None
    if r:
        check("CS-13 advisory on serial builds", "CS-13" in mechanisms(r) or args.cpu, f"findings {mechanisms(r)}")
    if r and measure("pch_off", "pch_off.py"):
        c = compare("serial", "pch_off")
        if c:
            check("CS-12 measured (precompiled header on vs off)", c["workload"]["status"] == "same",
                  f"verdict {c['verdict']}: {'; '.join(c['reasons'])}")
    r2 = measure("parallel", "parallel.py") if r else None
    if r and r2:
        c = compare("serial", "parallel")
        if c and not args.cpu:
            overlap = r2["summary"]["overlap_factor"]["median"]
            check("CS-13: the parallel preload overlapped builds", overlap is not None and overlap > 1.15,
                  f"overlap factor {overlap}")
            check("CS-13: judged on compile elapsed", "compile elapsed" in c["judged_on"],
                  f"verdict {c['verdict']}: {'; '.join(c['reasons'])}")

    # cache isolation and the cold compute cache --------------------------------------------
    if args.cpu or "cache" not in only:
        return finish(args, out, work, reports, comparisons, checks, doctor, doctor_facts, "not applicable on the CPU")
    r = measure("ptx_module", "ptx_module.py")
    suffix = None
    if r:
        loads = r["samples"][0]["cold"]["module_loads"]
        suffix = next((l["output_suffix"] for l in loads if l["output_suffix"]), None)
    # the shim already recorded what Warp was built with and which driver it found
    runtime = r["samples"][0]["cold"]["processes"][0]["runtime"] if r and r["samples"][0]["cold"]["processes"] else {}
    toolkit, driver = runtime.get("toolkit_version"), runtime.get("driver_version")
    driver_jit = toolkit is not None and driver is not None and tuple(driver) >= tuple(toolkit)
    if r and suffix == ".ptx" and not driver_jit:
        flags = [f["id"] for f in r["summary"]["flags"]]
        check("ptx-load-compile finding, and no false BUILDS_OVERLAPPED", "ptx-load-compile" in mechanisms(r)
              and "BUILDS_OVERLAPPED" not in flags, f"findings {mechanisms(r)}, flags {flags}")
    nv = home / ".nv"
    check("no driver compute cache written under ~/.nv by any probe", not nv.exists(),
          f"{nv} {'exists' if nv.exists() else 'absent'}")
    # The (cached) load of a PTX module compiles the PTX to machine code: in the driver, whose
    # compute cache keeps the result, when the driver is at least as new as the CUDA toolkit
    # Warp was built with; otherwise in Warp (nvPTXCompiler) at every load, which no cache
    # keeps. Measured with Warp's cache warm and the compute cache warm, then cold.
    cache = work / "manual"
    penv = dict(env, WARP_CACHE_PATH=str(cache / "warp"), PYTHONDONTWRITEBYTECODE="1")
    line = re.compile(r"Module (\S+) \S+ load on device '[^']+' took ([0-9.]+) ms\s+\((compiled|cached)\)")

    def load_ms(cuda_cache, output="ptx"):
        p = run([args.python, "ptx_module.py"], dict(penv, CUDA_CACHE_PATH=str(cuda_cache), XWARP_CUDA_OUTPUT=output))
        m = [x for x in line.findall(p.stdout + p.stderr) if x[0] == "__main__"]
        return (float(m[0][1]), m[0][2]) if m else (None, p.stderr[-300:])

    def median_load(label, fresh, output="ptx"):
        # three runs: each a fresh compute cache (fresh=True) or the one filled first
        times = [load_ms(cache / (f"cuda-{label}-{k}" if fresh else "cuda-a"), output) for k in range(3)]
        ms = sorted(t[0] for t in times if t[0] is not None)
        return (ms[len(ms) // 2] if ms else None, times[-1][1])

    first = load_ms(cache / "cuda-a")
    warm = median_load("warm", False)
    cold_driver = median_load("cold", True)
    load_ms(cache / "cuda-a", "cubin")  # builds the CUBIN once
    cubin = median_load("cubin", False, "cubin")
    detail = (f"output {suffix}; Warp's toolkit {toolkit}, driver {driver} "
              f"({'driver JIT' if driver_jit else 'driver older: Warp compiles PTX at every load'}); "
              f"compiled {first[0]} ms; cached with a warm compute cache {warm[0]} ms; "
              f"cached with a cold compute cache {cold_driver[0]} ms; the same module as CUBIN, cached, {cubin[0]} ms "
              f"(medians of 3)")
    if suffix == ".ptx":
        measured = warm[0] is not None and cold_driver[0] is not None and cold_driver[1] == "cached"
        if driver_jit:
            check("PTX (cached) load pays the driver JIT when the compute cache is cold",
                  measured and cold_driver[0] > warm[0], detail)
        else:
            check("PTX (cached) load pays Warp's PTX compile at every load: the compute cache does not change it",
                  measured and abs(cold_driver[0] - warm[0]) <= 0.3 * max(cold_driver[0], warm[0])
                  and cubin[0] is not None and cubin[0] < warm[0], detail)
        control_home = work / "control-home"
        control_home.mkdir()
        cenv = {k: v for k, v in penv.items() if k != "CUDA_CACHE_PATH"}
        cenv.update(HOME=str(control_home), WARP_CACHE_PATH=str(cache / "warp-control"))
        run([args.python, "ptx_module.py"], cenv)
        check("control: without the probe the driver writes ~/.nv", (control_home / ".nv").exists(),
              f"{control_home / '.nv'} {'exists' if (control_home / '.nv').exists() else 'absent'}")
    else:
        check("(cached) load cost recorded", warm[0] is not None, detail + " (CUBIN: no driver JIT on load)")

    return finish(args, out, work, reports, comparisons, checks, doctor, doctor_facts, detail)


def finish(args, out, work, reports, comparisons, checks, doctor, doctor_facts, detail):
    def mechanisms(r):
        return sorted({f["mechanism"] for f in r["findings"]})

    rows = ["| run | identities | cold wall | warm wall | compile elapsed | module work | native | LTO | findings |",
            "|---|---|---|---|---|---|---|---|---|"]

    def fmt(stat):
        return "n/a" if stat["median"] is None else f"{stat['median'] / 1000:.2f} s"

    for name, rep in reports.items():
        s = rep["summary"]
        rows.append(f"| {name} | {s['identity_count']['median']} | {fmt(s['cold_wall_ms'])} | {fmt(s['warm_wall_ms'])} | "
                    f"{fmt(s['compile_elapsed_ms'])} | {fmt(s['cold_module_ms'])} | {fmt(s['native_ms'])} | "
                    f"{s['lto_artifacts']['median']} | {', '.join(mechanisms(rep))} |")
    rows += ["", "| lever | verdict | deciding clock | delta |", "|---|---|---|---|"]
    for name, c in comparisons.items():
        clock = next((k for k in c["clocks"] if k["clock"] in c["judged_on"].replace(" ", "_") or
                      (k["clock"] == "compile_elapsed_ms" and c["judged_on"].startswith("compile elapsed")) or
                      (k["clock"] == "cold_module_ms" and c["judged_on"].startswith("cold module work"))), c["clocks"][0])
        delta = "n/a" if clock["delta_ms"] is None else f"{clock['delta_ms']:+.0f} ms ({clock['delta_pct']:+.1f}%)"
        rows.append(f"| {name} | {c['verdict']} | {clock['clock']} | {delta} |")
    rows += ["", f"cached load of a PTX module: {detail}", "",
             "machine: " + doctor.stdout.replace("\n", "; ")]
    table = "\n".join(rows)
    stem = ("cpu-results" if args.cpu else "gpu-results") + "".join("-" + g for g in sorted(args.only.split(",")))
    (out / f"{stem}.md").write_text(table + "\n")
    (out / f"{stem}.json").write_text(json.dumps({"checks": checks, "reports": reports, "comparisons": comparisons,
                                                      "doctor": doctor_facts}, indent=1))
    print(table)
    shutil.rmtree(work, ignore_errors=True)
    failed = [c for c in checks if not c["ok"]]
    print(f"\n{len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
