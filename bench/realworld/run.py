"""Real programs nobody here wrote, measured, fixed and warmed up as a new user would.

Installs MuJoCo Warp and Newton from PyPI into a private folder (never the environment's own
site-packages), then for each program runs

    warp-probe measure --samples S --whatif auto
    warp-probe fix --verify
    warp-probe warmup --verify --workers W

and then checks the warm-up as a user's build step would run it, bare (no probe): the file on a
fresh cache (its exit code and its own wall), then the program on that cache, whose builds are
counted from Warp's own log lines ("(compiled)"). It prints, per program: the findings with their
measured figures (an unreplayed one says it is an estimate), the patches written and verified,
the identities the warm-up covers (what --verify measured, and what Warp's log says was left),
and the warm-up's own wall beside the cold run's. Every figure comes from the reports these
commands write (kept in --out) or from the bare runs' own output. Not part of the test suite: a
full pass takes 20-40 minutes on 2 CPUs.

NVIDIA's c01 particle-preprocessing package (the warp-compile-time-optimizer skill's evaluation
files) is not on PyPI and is not copied into this repository: give a local copy with --c01 DIR
(the folder that holds its pyproject.toml and src/).

    python3 bench/realworld/run.py [--out DIR] [--device cpu|cuda:0] [--c01 DIR] [--only NAME ...]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
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


def programs(private, python, device, c01):
    mjw = private / "mjw"
    data = mjw / "mujoco_warp" / "test_data"
    step = [python, "mjwarp_step.py"]
    out = {
        "mjwarp-pendula": ([*step, str(data / "pendula.xml"), "3", device], str(mjw), ["mjwarp_step.py"]),
        "mjwarp-humanoid": ([*step, str(data / "humanoid" / "humanoid.xml"), "3", device], str(mjw), ["mjwarp_step.py"]),
        "newton-basic-pendulum": ([python, "-m", "newton.examples", "basic_pendulum", "--viewer", "null", "--num-frames",
                                   "10", "--device", device], f"{private / 'newton'}:{mjw}", []),
        "newton-cloth-hanging": ([python, "-m", "newton.examples", "cloth_hanging", "--viewer", "null", "--num-frames",
                                  "10", "--device", device], f"{private / 'newton'}:{mjw}", []),
        "particle-prep": ([python, "-m", "particle_prep"], "src", ["particle_pkg"]),
    }
    if c01:
        # its src layout on PYTHONPATH, run from the project's folder, as its README-less eval runs it
        out["c01-particle-preprocessing"] = ([python, "-m", "particle_prep"], "src", [str(Path(c01).resolve())])
    return out


def run(args, env, log):
    with open(log, "w") as f:
        proc = subprocess.run(args, env=env, stdout=f, stderr=subprocess.STDOUT, text=True)
    return proc.returncode


def bare_warmup(folder, python, project, env):
    """The warm-up file as a build step runs it (no probe): on a fresh cache, from the project's
    folder, then the program on that cache with Warp's own log counting what it still built."""
    cache = folder / "bare-cache"
    shutil.rmtree(cache, ignore_errors=True)
    bare_env = dict(env, WARP_CACHE_PATH=str(cache))
    bare_env.pop("XWARP_HISTORY", None)
    started = time.perf_counter()
    warm = subprocess.run([python, str(folder / "warp_warmup.py")], cwd=project, env=bare_env, capture_output=True, text=True)
    warm_s = time.perf_counter() - started
    (folder / "bare-warmup.txt").write_text(warm.stdout + warm.stderr)
    return cache, warm.returncode, warm_s, bare_env


def compiled_lines(text):
    return len(re.findall(r"^Module .* load on device .* took .*\(compiled\)", text, re.M))


def module_dirs(cache):
    return {p.name for p in cache.rglob("wp_*") if p.is_dir()}


def bare_program(folder, command, project, env, cache):
    """The program on the warm-up's cache: its builds by Warp's log lines, and the module folders
    it added to the cache (the same count when Warp prints its loads; a program that silences
    Warp's log still adds folders)."""
    before = module_dirs(cache)
    started = time.perf_counter()
    run = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    (folder / "bare-program.txt").write_text(run.stdout + run.stderr)
    return run.returncode, wall, compiled_lines(run.stdout + run.stderr), len(module_dirs(cache) - before)


def finding_figure(f):
    """A finding's headline figure as the report's own savings_basis says it: measured, or an
    estimate with why it stands unmeasured."""
    m = f.get("measured") or {}
    basis = f.get("savings_basis")
    if basis == "measured":
        return f"measured {m['verdict']}: saves {m['saving_ms'] / 1000:.2f} s ({m['clock']})"
    if basis == "measured-no-gain":
        return f"measured {m['verdict']}: no saving credited"
    if basis == "estimate":
        return f"estimate {f['savings_ms'] / 1000:.2f} s ({f.get('savings_why')})"
    return "no figure" + (f" (replay {m['verdict']})" if m.get("verdict") else "")


def summarize(name, folder, bare=None):
    out = [f"== {name}"]
    report = json.loads((folder / "report.json").read_text())
    s = report["summary"]
    out.append(f"  cold wall {s['cold_wall_ms']['median'] / 1000:.2f} s, warm wall {s['warm_wall_ms']['median'] / 1000:.2f} s")
    for f in report["findings"][:6]:
        out.append(f"  {f['mechanism']:<6} {f.get('lever') or '-':<20} {finding_figure(f)}{'  [library]' if f['library'] else ''}")
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
        total = w["covered"] + w["uncovered"]
        measured = c.get("covered_measured")
        out.append(f"  warm-up: planned {w['covered']} of {total}; --verify {c.get('verdict')}: covers "
                   f"{measured if measured is not None else 'n/a'} of {total} (the file built {c.get('file_built')} as "
                   f"measured, {len(c.get('file_failed') or [])} failed alone)")
        for line in (c.get("file_failed") or [])[:3]:
            out.append(f"    not built: {line[:140]}")
        cold = s["cold_wall_ms"]["median"]
        if c.get("primed_wall_ms", {}).get("median") and c.get("warmup_wall_ms", {}).get("median"):
            primed, warmup = c["primed_wall_ms"]["median"], c["warmup_wall_ms"]["median"]
            out.append(f"  the file's own wall {warmup / 1000:.2f} s beside the cold run's {cold / 1000:.2f} s; primed program "
                       f"{primed / 1000:.2f} s ({primed / cold:.2f} of cold); warm-up + primed {(warmup + primed) / cold:.2f} of cold")
        for t in c.get("worker_trials") or []:
            out.append(f"    {t['workers']} worker(s): {t['wall_ms']['median'] / 1000:.2f} s")
        if bare:
            code, warm_s, prog_code, prog_s, left, added = bare
            out.append(f"  bare: the file exited {code} in {warm_s:.2f} s; the program then exited {prog_code} in {prog_s:.2f} s, "
                       f"Warp's log shows {left} build(s) left ({added} module folder(s) added to the cache): "
                       f"{total - left} of {total} covered"
                       + ("" if measured is None or total - left == measured else f" (--verify said {measured})"))
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="where the reports go (default: a new folder under /tmp)")
    parser.add_argument("--private", default=None, help="where the packages install (default: --out/packages)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--c01", default=None, help="a local copy of NVIDIA's c01_particle_preprocessing package")
    parser.add_argument("--probe", default=None, help="the warp-probe to run (default: build/warp-probe, else on PATH)")
    parser.add_argument("--python", default=None, help="the Python the programs run with (default: .venv's, else this one)")
    parser.add_argument("--whatif", default="auto", help="measure's --whatif (default auto: the levers the findings name; none: no replays)")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare warm-up check (a second cold run)")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="xwarp-realworld-"))
    private = Path(args.private or out / "packages")
    private.mkdir(parents=True, exist_ok=True)
    python, probe = args.python or python_binary(), args.probe or probe_binary()
    install(private, python)
    summaries = []
    for name, (command, pythonpath, carry) in programs(private, python, args.device, args.c01).items():
        if args.only and name not in args.only:
            continue
        folder = out / name
        project = folder / "project"
        shutil.rmtree(project, ignore_errors=True)
        project.mkdir(parents=True)
        for item in carry:  # the program's own files: a folder of its own that fix may copy
            src = Path(item) if Path(item).is_absolute() else HERE / item if (HERE / item).exists() else ROOT / "tests" / "python" / "targets" / item
            if src.is_dir():
                shutil.copytree(src, project, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, project / item)
        # the program's own folders first, then whatever the caller put on the path (a Warp unpacked elsewhere)
        inherited = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=pythonpath + (os.pathsep + inherited if inherited else ""),
                   XWARP_HISTORY=str(out / "history.sqlite3"))
        report = folder / "report.json"
        whatif = [] if args.whatif == "none" else ["--whatif", args.whatif]
        rc = run([probe, "measure", "--samples", str(args.samples), *whatif, "--json", str(report), "--cwd",
                  str(project), "--", *command], env, folder / "measure.txt")
        if rc != 0 or not report.exists():
            summaries.append(f"== {name}\n  measure failed ({rc}): see {folder / 'measure.txt'}")
            print(summaries[-1], flush=True)
            continue
        run([probe, "fix", str(report), "--verify", "--samples", str(args.samples), "--json", str(folder / "fix.json"),
             "--out", str(folder / "patches")], env, folder / "fix.txt")
        run([probe, "warmup", str(report), "--verify", "--samples", str(args.samples), "--workers", str(args.workers),
             "-o", str(folder / "warp_warmup.py"), "--json", str(folder / "warmup.json")], env, folder / "warmup.txt")
        bare = None
        if (folder / "warp_warmup.py").exists() and not args.no_bare:
            cache, code, warm_s, bare_env = bare_warmup(folder, python, project, env)
            prog_code, prog_s, left, added = bare_program(folder, command, project, bare_env, cache)
            bare = (code, warm_s, prog_code, prog_s, left, added)
            shutil.rmtree(cache, ignore_errors=True)
        summaries.append(summarize(name, folder, bare))
        print(summaries[-1], flush=True)
    (out / "summary.txt").write_text("\n".join(summaries) + "\n")
    print(f"\nreports in {out}")


if __name__ == "__main__":
    main()
