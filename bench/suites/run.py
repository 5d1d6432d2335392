"""Test suites written elsewhere, measured per test: a few of Newton's own test modules (Newton
1.8 from PyPI, into a private folder) and a few of Warp's own (they ship in the warp-lang wheel),
each run with `python -m unittest`, and under pytest-xdist with two workers, under `warp-probe
measure`, then `warmup --verify`.

Prints per suite: the compile share of its wall, the top tests by build time paid, repeated
builds across processes, the warm-up's coverage, builds left at run time, cold against primed
wall. Not part of the test suite (minutes per module on 2 CPUs).

    python3 bench/suites/run.py [--out DIR] [--workers N] [--xdist N] [--only NAME ...] [--probe P] [--python P]

--xdist N runs the xdist suites with N pytest workers (default 2); --workers N is the warm-up's
(default: this machine's CPUs). tests/gpu/suite_session.sh runs it on the lent GPU machine with 16.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SEVERAL = {"test_math": "TestMath", "test_noise": "TestNoise", "test_func": "TestFunc",
           "test_conditional": "TestConditional", "test_lvalue": "TestLValue", "test_bool": "TestBool",
           "test_adam": "TestAdam", "test_sgd": "TestSGD"}
SUITES = {
    "warp-test_func": ("warp", ["-m", "unittest", "warp.tests.test_func"]),
    "warp-test_generics": ("warp", ["-m", "unittest", "warp.tests.test_generics"]),
    "newton-test_collision_primitives": ("newton", ["-m", "unittest", "newton.tests.test_collision_primitives"]),
    # the same modules under pytest-xdist, two workers: what each worker repeats (their TestCase
    # classes only: pytest would also collect their kernels named test_*)
    "warp-test_func-xdist": ("warp", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--pyargs",
                                      "warp.tests.test_func::TestFunc"]),
    "newton-test_collision_primitives-xdist": ("newton", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                                                          "--pyargs",
                                                          "newton.tests.test_collision_primitives::TestCollisionPrimitives"]),
    # several of Warp's test modules at once under xdist: each worker builds every module whose tests
    # it draws, so the cold suite builds most modules twice; a warm-up builds each once, spread
    # over --workers processes
    "warp-several-xdist": ("warp", ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--pyargs",
                                    *[f"warp.tests.{m}" for m in SEVERAL],
                                    # pytest finds only the first of several `module::Class` under
                                    # --pyargs; -k picks the TestCase classes instead
                                    "-k", " or ".join(SEVERAL.values())]),
}


def probe_binary():
    built = ROOT / "build" / "warp-probe"
    return str(built) if built.exists() else "warp-probe"


def python_binary():
    venv = ROOT / ".venv" / "bin" / "python3"
    return str(venv) if venv.exists() else sys.executable


def summarize(name, folder):
    report = json.loads((folder / "report.json").read_text())
    s = report["summary"]
    cold = s["cold_wall_ms"]["median"]
    builds_ms = sum(w["build_ms"] for w in s.get("workers", []))
    lines = [f"== {name}", f"  cold wall {cold / 1000:.2f} s; builds {builds_ms / 1000:.2f} s "
                           f"({100 * builds_ms / cold:.0f}% of the wall); identities {int(s['identity_count']['median'])}"]
    for t in [t for t in s.get("tests", []) if t["builds"]][:5]:
        lines.append(f"    {t['build_ms'] / 1000:7.2f} s  {t['builds']:3d} build(s)  {t['test'] or 'collection / set-up'}")
    repeated = [f for f in report["findings"] if f["mechanism"] == "repeated-across-workers"]
    repeated_ms = sum(f.get("savings_ms") or 0 for f in repeated)
    lines.append(f"  repeated across processes: {len(repeated)} ({repeated_ms / 1000:.2f} s built again)")
    for w in s.get("workers", []):
        if w.get("wall_ms"):
            lines.append(f"    process {w['pid']}: {w['build_ms'] / 1000:.2f} s of builds in {w['wall_ms'] / 1000:.2f} s "
                         f"({100 * w['build_ms'] / w['wall_ms']:.0f}%), {w['tests']} test(s)")
    shared = [f for f in report["findings"] if f["mechanism"] == "many-tests-one-module"]
    for f in shared:
        lines.append(f"  many-tests-one-module: {f['module']} on {f.get('device') or '?'}, {f['cause']['kernels']} kernels, "
                     f"{f['cause']['tests']} tests")
    warm = folder / "warmup.json"
    if warm.exists():
        w = json.loads(warm.read_text())
        c = w.get("check") or {}
        left = sum(len(c.get(k, [])) for k in ("covered_built", "uncovered_built", "new_built"))
        lines.append(f"  warm-up: {w['covered']} of {w['covered'] + w['uncovered']} covered, verdict {c.get('verdict')}, "
                     f"builds left {left}")
        if c:
            lines.append(f"  warm-up + primed suite {(c['warmup_wall_ms']['median'] + c['primed_wall_ms']['median']) / cold:.2f} "
                         f"of the cold suite's wall")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None)
    parser.add_argument("--private", default=None, help="where Newton installs (default: --out/packages)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--xdist", type=int, default=2, help="pytest-xdist workers of the xdist suites")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--probe", default=None, help="the warp-probe to run (default: build/warp-probe)")
    parser.add_argument("--python", default=None, help="the Python with Warp (default: .venv's, else this one)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="xwarp-suites-"))
    private = Path(args.private or out / "packages")
    python, probe = args.python or python_binary(), args.probe or probe_binary()
    wanted = [name for name in SUITES if not args.only or name in args.only]
    if any(SUITES[name][0] == "newton" for name in wanted) and not (private / "newton").exists():
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--target",
                        str(private / "newton"), "newton==1.8.0"], check=True)
    for name in wanted:
        package, command = SUITES[name]
        command = [str(args.xdist) if i and command[i - 1] == "-n" else a for i, a in enumerate(command)]
        folder = out / name
        folder.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, XWARP_HISTORY=str(out / "history.sqlite3"))
        if package == "newton":
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(private / "newton"), env.get("PYTHONPATH")) if p)
        with open(folder / "measure.txt", "w") as log:
            subprocess.run([probe, "measure", "--samples", "1", "--json", str(folder / "report.json"), "--cwd", str(folder),
                            "--", python, *command], env=env, stdout=log, stderr=subprocess.STDOUT)
        if not (folder / "report.json").exists() or not json.loads((folder / "report.json").read_text())["summary"]["valid"]:
            print(f"== {name}: measure failed, see {folder / 'measure.txt'}")
            continue
        with open(folder / "warmup.txt", "w") as log:
            subprocess.run([probe, "warmup", str(folder / "report.json"), "--verify", "--samples", "1", "--workers",
                            str(args.workers), "-o", str(folder / "warp_warmup.py"), "--json", str(folder / "warmup.json")],
                           env=env, stdout=log, stderr=subprocess.STDOUT)
        print(summarize(name, folder), flush=True)
    print(f"\nreports in {out}")


if __name__ == "__main__":
    main()
