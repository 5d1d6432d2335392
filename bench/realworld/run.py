"""Real programs nobody here wrote, measured, fixed and warmed up as a new user would.

Installs MuJoCo Warp and Newton from PyPI into a private folder (never the environment's own
site-packages), then for each program runs

    warp-probe measure --samples S --whatif auto
    warp-probe fix --verify
    warp-probe warmup --verify --workers W

and prints, per program: the findings with their measured figures, the patches written and
verified, the identities the warm-up covers, and the primed wall against the cold one. Every
figure comes from the reports these commands write (kept in --out). Not part of the test suite:
a full pass takes 20-40 minutes on 2 CPUs.

    python3 bench/realworld/run.py [--out DIR] [--device cpu|cuda:0] [--only NAME ...]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PACKAGES = {"mjw": ["mujoco-warp==4.0.0", "absl-py", "etils[epath]", "mujoco>=3.13.0"], "newton": ["newton==1.8.0"]}


def probe_binary():
    built = ROOT / "build" / "warp-probe"
    return str(built) if built.exists() else shutil.which("warp-probe") or sys.exit("warp-probe not found: build it first")


def python_binary():
    venv = ROOT / ".venv" / "bin" / "python3"
    return str(venv) if venv.exists() else sys.executable


def install(private, python):
    """Each package set in a folder of its own (pip --target): nothing lands in the venv."""
    for name, reqs in PACKAGES.items():
        target = private / name
        if (target / ".installed").exists():
            continue
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(target),
                        "--no-deps", reqs[0]], check=True)
        if len(reqs) > 1:
            subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", str(target),
                            *reqs[1:]], check=True)
        (target / ".installed").write_text("ok\n")


def programs(private, python, device):
    mjw = private / "mjw"
    data = mjw / "mujoco_warp" / "test_data"
    step = [python, "mjwarp_step.py"]
    return {
        "mjwarp-pendula": ([*step, str(data / "pendula.xml"), "3", device], str(mjw), ["mjwarp_step.py"]),
        "mjwarp-humanoid": ([*step, str(data / "humanoid" / "humanoid.xml"), "3", device], str(mjw), ["mjwarp_step.py"]),
        "newton-basic-pendulum": ([python, "-m", "newton.examples", "basic_pendulum", "--viewer", "null", "--num-frames",
                                   "10", "--device", device], f"{private / 'newton'}:{mjw}", []),
        "particle-prep": ([python, "-m", "particle_prep"], "src", ["particle_pkg"]),
    }


def run(args, env, log):
    with open(log, "w") as f:
        proc = subprocess.run(args, env=env, stdout=f, stderr=subprocess.STDOUT, text=True)
    return proc.returncode


def summarize(name, folder):
    out = [f"== {name}"]
    report = json.loads((folder / "report.json").read_text())
    s = report["summary"]
    out.append(f"  cold wall {s['cold_wall_ms']['median'] / 1000:.2f} s, warm wall {s['warm_wall_ms']['median'] / 1000:.2f} s")
    for f in report["findings"][:6]:
        m = f.get("measured") or {}
        judged = m.get("verdict") in ("improved", "regressed", "inconclusive") and m.get("saving_ms") is not None
        figure = (f"measured {m['verdict']}: saves {m['saving_ms'] / 1000:.2f} s ({m['clock']})" if judged
                  else f"estimate {f['savings_ms'] / 1000:.2f} s" if f.get("savings_ms") is not None else "no figure")
        if m.get("verdict") and not judged:
            figure += f" (replay {m['verdict']})"
        out.append(f"  {f['mechanism']:<6} {f.get('lever') or '-':<20} {figure}{'  [library]' if f['library'] else ''}")
    fix_path = folder / "fix.json"
    if fix_path.exists():
        fixes = json.loads(fix_path.read_text())["fixes"]
        written = [x for x in fixes if x["patch"]]
        verified = [x for x in fixes if x["verdict"] == "verified"]
        out.append(f"  fix: {len(fixes)} finding(s), {len(written)} patch(es) written, {len(verified)} verified")
        for x in fixes:
            out.append(f"    {x['mechanism']:<6} {x['verdict']:<13} {(x.get('reason') or ', '.join(x.get('files') or []))[:110]}")
    warm_path = folder / "warmup.json"
    if warm_path.exists():
        w = json.loads(warm_path.read_text())
        c = w.get("check") or {}
        left = len(c.get("covered_built", [])) + len(c.get("uncovered_built", [])) + len(c.get("new_built", []))
        out.append(f"  warm-up: {w['covered']} of {w['covered'] + w['uncovered']} identities covered; "
                   f"verdict {c.get('verdict')}, builds left at run time {left}")
        if c:
            cold = s["cold_wall_ms"]["median"]
            primed = c["primed_wall_ms"]["median"]
            warmup = c["warmup_wall_ms"]["median"]
            out.append(f"  primed wall {primed / 1000:.2f} s against cold {cold / 1000:.2f} s ({primed / cold:.2f}); "
                       f"warm-up + primed {(warmup + primed) / cold:.2f} of cold")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="where the reports go (default: a new folder under /tmp)")
    parser.add_argument("--private", default=None, help="where the packages install (default: --out/packages)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="xwarp-realworld-"))
    private = Path(args.private or out / "packages")
    private.mkdir(parents=True, exist_ok=True)
    python, probe = python_binary(), probe_binary()
    install(private, python)
    summaries = []
    for name, (command, pythonpath, carry) in programs(private, python, args.device).items():
        if args.only and name not in args.only:
            continue
        folder = out / name
        project = folder / "project"
        shutil.rmtree(project, ignore_errors=True)
        project.mkdir(parents=True)
        for item in carry:  # the program's own files: a folder of its own that fix may copy
            src = HERE / item if (HERE / item).exists() else ROOT / "tests" / "python" / "targets" / item
            if src.is_dir():
                shutil.copytree(src, project, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, project / item)
        env = dict(os.environ, PYTHONPATH=pythonpath, XWARP_HISTORY=str(out / "history.sqlite3"))
        report = folder / "report.json"
        rc = run([probe, "measure", "--samples", str(args.samples), "--whatif", "auto", "--json", str(report), "--cwd",
                  str(project), "--", *command], env, folder / "measure.txt")
        if rc != 0 or not report.exists():
            summaries.append(f"== {name}\n  measure failed ({rc}): see {folder / 'measure.txt'}")
            continue
        run([probe, "fix", str(report), "--verify", "--samples", str(args.samples), "--json", str(folder / "fix.json"),
             "--out", str(folder / "patches")], env, folder / "fix.txt")
        run([probe, "warmup", str(report), "--verify", "--samples", str(args.samples), "--workers", str(args.workers),
             "-o", str(folder / "warp_warmup.py"), "--json", str(folder / "warmup.json")], env, folder / "warmup.txt")
        summaries.append(summarize(name, folder))
        print(summaries[-1], flush=True)
    (out / "summary.txt").write_text("\n".join(summaries) + "\n")
    print(f"\nreports in {out}")


if __name__ == "__main__":
    main()
