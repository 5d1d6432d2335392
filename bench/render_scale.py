#!/usr/bin/env python3
"""How report rendering scales: generates reports of 1k, 10k and 100k module identities (one
sample, half of the modules churning, 1,000,000 launches in run-length records), then times
`warp-probe report` to HTML, to text and to (pretty-printed) JSON, and `warp-probe compare` of a
report with itself, with the history store off and then on (a fresh store: compare's default
path stores both sides).
Prints, per size, the wall time (the median of --repeat runs), the peak memory (the largest
max RSS of those runs) over the JSON size (for compare, also over the two files it reads), and
the HTML size; then the 100k / 10k time ratio (linear is 10), measured in pairs: a 10k run and
a 100k run one after the other, --repeat pairs, the median of their ratios (this machine's speed
drifts between figures measured minutes apart). The reports are generated in a child process, and the least peak this harness
can show (a command that exits at once) is printed first: a figure at that floor says nothing.

Then the wide shape (issue 33): 10 samples x 1,000 distinct identities over 10 modules, each
module churning at every load (its identity lists are the long ones).

Goals (issues 14, 33): HTML <= 2 MB at any size and shape; HTML render of 10k and of the wide
shape <= 0.3 s here; 100k <= 12 x 10k; peak memory <= 4 x the JSON size; compare likewise. This prints numbers; it never fails on them.

Usage: bench/render_scale.py [--sizes 1000,10000,100000] [--probe build/warp-probe] [--repeat 3]
"""

import argparse
import json
import os
import statistics
import subprocess

# compare stores both sides in the history: off unless a measurement turns it on
os.environ["XWARP_HISTORY"] = "off"
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_report(identities, launches=1_000_000):
    modules = identities // 2
    loads, launch_records = [], []
    t = 0.0
    for m in range(modules):
        name = f"pkg.sub{m % 97}.module_{m}"
        for k in range(2):  # every module loads twice: one churn group per module
            ms = 50.0 + (m * 7 + k * 13) % 400
            loads.append({
                "module": name, "hash": f"{m:08x}{k:08x}" + "ab" * 12, "device": "cpu", "block_dim": 1,
                "status": "compiled", "warp_ms": ms, "total_ms": ms + 1.0, "native_ms": ms * 0.8,
                "native_kind": "cpu", "source": "hook", "pid": 100, "seq": 2 * m + k, "t_start_ms": t,
                "thread": "MainThread",
                "snapshot": {"kernels": [{"key": f"kernel_{m}_{j}", "hash": f"{m:08x}{j:08x}", "sig": "", "generic": False}
                                         for j in range(1 + k)],
                             "functions": {}, "options": {"block_dim": 1, "enable_backward": True}, "options_source": "resolved"},
            })
            t += ms + 1.0
    per_record = max(1, launches // max(1, modules))
    for m in range(modules):
        launch_records.append({"kernel": f"kernel_{m}_0", "module": f"pkg.sub{m % 97}.module_{m}", "dim": [1024],
                               "device": "cpu", "dtypes": ["array[float32,1]"], "block_dim": 1, "adjoint": False,
                               "count": per_record, "pid": 100})
    process = {"pid": 100, "ppid": 1, "argv": ["app.py"], "executable": "python3", "python": "3.11.2",
               "started_unix": 1.7e9, "warp_version": "1.19.0", "hooks": {"launch": True, "module_load": True},
               "exited_cleanly": True, "runtime": {}}
    cold = {"wall_ms": t + 5000, "exit_code": 0, "module_loads": loads, "launches": launch_records,
            "launch_total": per_record * modules, "processes": [process], "load_source": "hook"}
    warm = {"wall_ms": 4000.0, "exit_code": 0, "module_loads": [], "launches": launch_records,
            "launch_total": per_record * modules, "processes": [process], "load_source": "hook"}
    return {"schema_version": 2, "tool": "warp-probe", "label": f"scale-{identities}", "command": ["python3", "app.py"],
            "cwd": "/tmp", "settings": {"samples": 1}, "environment": {"warp_version": "1.19.0", "cpu_count": 2},
            "samples": [{"index": 1, "cold": cold, "warm": warm}], "status": "ok"}


def make_wide_report(samples=10, identities=1000, modules=10):
    """The shape that found the unbounded identity map (issue 33): few modules, each loading many
    distinct identities (a kernel set that changes at every load), in every one of many samples."""
    per_module = identities // modules
    def run(k):
        loads, t = [], 0.0
        for m in range(modules):
            name = f"pkg.sim.stage_{m}"
            for i in range(per_module):
                ms = 40.0 + (m * 11 + i * 3 + k) % 300
                loads.append({
                    "module": name, "hash": f"{m:08x}{i:08x}{k:08x}" + "cd" * 8, "device": "cpu", "block_dim": 1,
                    "status": "compiled", "warp_ms": ms, "total_ms": ms + 1.0, "native_ms": ms * 0.8,
                    "native_kind": "cpu", "source": "hook", "pid": 100, "seq": m * per_module + i, "t_start_ms": t,
                    "thread": "MainThread",
                    "snapshot": {"kernels": [{"key": f"step_{m}_{j}", "hash": f"{m:08x}{j:08x}", "sig": "", "generic": False}
                                             for j in range(1 + i % 8)] + [{"key": f"variant_{m}_{i}", "hash": f"{i:016x}",
                                                                             "sig": "", "generic": False}],
                                 "functions": {}, "options": {"block_dim": 1, "enable_backward": True},
                                 "options_source": "resolved"},
                })
                t += ms + 1.0
        return loads, t
    launches = [{"kernel": f"step_{m}_0", "module": f"pkg.sim.stage_{m}", "dim": [1024], "device": "cpu",
                 "dtypes": ["array[float32,1]"], "block_dim": 1, "adjoint": False, "count": 100, "pid": 100}
                for m in range(modules)]
    process = {"pid": 100, "ppid": 1, "argv": ["app.py"], "executable": "python3", "python": "3.11.2",
               "started_unix": 1.7e9, "warp_version": "1.19.0", "hooks": {"launch": True, "module_load": True},
               "exited_cleanly": True, "runtime": {}}
    out = []
    for k in range(samples):
        loads, t = run(k)
        cold = {"wall_ms": t + 5000, "exit_code": 0, "module_loads": loads, "launches": launches,
                "launch_total": 100 * modules, "processes": [process], "load_source": "hook"}
        warm = {"wall_ms": 4000.0 + k, "exit_code": 0, "module_loads": [], "launches": launches,
                "launch_total": 100 * modules, "processes": [process], "load_source": "hook"}
        out.append({"index": k + 1, "cold": cold, "warm": warm})
    return {"schema_version": 2, "tool": "warp-probe", "label": "wide-10x1000x10", "command": ["python3", "app.py"],
            "cwd": "/tmp", "settings": {"samples": samples}, "environment": {"warp_version": "1.19.0", "cpu_count": 2},
            "samples": out, "status": "ok"}


def write_report(identities, path):
    """Generates the report in a child process. A child's peak RSS (wait4's ru_maxrss) starts
    from this process's own high-water mark: Linux carries the parent's into the child when it
    execs (Python's subprocess forks with vfork), so a bench that built a 100k report's dicts
    itself measured its own 360 MB as every command's peak."""
    subprocess.run([sys.executable, __file__, "--write-report", str(identities), str(path)], check=True)


def timed_once(cmd, env=None):
    """Wall time and peak memory (max RSS) of one run of cmd (wait4): the child's own, or this
    process's high-water mark where that is higher (printed as the floor)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 4):
            err.seek(0)
            sys.exit(f"{cmd}: exit {proc.returncode}\n{err.read().decode(errors='replace')}")
    return elapsed, usage.ru_maxrss * 1024


def timed(cmd, repeat, env_for=lambda i: None):
    """The median wall time of `repeat` runs and the largest peak among them. This machine's
    speed moves by a third within minutes: one run per figure made the 100k / 10k ratio range
    from 12 to 23 between two runs of this script."""
    runs = [timed_once(cmd, env_for(i)) for i in range(repeat)]
    return statistics.median(t for t, _ in runs), max(p for _, p in runs)


def paired_ratio(small_cmd, large_cmd, repeat):
    """The median, over `repeat` pairs, of one large run's wall time over the small run just
    before it, with every ratio: the two sizes measured under the same conditions."""
    ratios = []
    for _ in range(repeat):
        small = timed_once(small_cmd)[0]
        large = timed_once(large_cmd)[0]
        ratios.append(large / small)
    return statistics.median(ratios), ratios


def instructions(cmd, tmp):
    """Instructions one run of cmd executes (callgrind's total)."""
    out = Path(tmp) / "callgrind.out"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if done.returncode not in (0, 4):  # compare's "inconclusive" is 4
        sys.exit(f"{cmd}: exit {done.returncode} under callgrind")
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    sys.exit(f"{out}: no instruction total")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--probe", default=str(ROOT / "build" / "warp-probe"))
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure: the median time, the largest peak")
    ap.add_argument("--instructions", action="store_true",
                    help="also count the instructions of the 10k and 100k HTML renders under valgrind's callgrind "
                         "(minutes): their ratio is the work's, without the memory system's share of the time")
    ap.add_argument("--write-report", nargs=2, metavar=("IDENTITIES", "PATH"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.write_report:
        shape = a.write_report[0]
        doc = make_wide_report() if shape == "wide" else make_report(int(shape))
        Path(a.write_report[1]).write_text(json.dumps(doc))
        return
    # the least peak any command can show here (see write_report)
    floor = timed_once(["/bin/true"])[1]
    print(f"peak floor of this harness: {floor / 2**20:.1f} MB (a command that exits at once)", flush=True)
    sizes = [int(x) for x in a.sizes.split(",")]
    counts = {}
    with tempfile.TemporaryDirectory(prefix="xwarp-scale-") as tmp:
        for n in sizes:
            src = Path(tmp) / f"r{n}.json"
            write_report(n, src)
            json_bytes = src.stat().st_size
            html = Path(tmp) / f"r{n}.html"
            t_html, peak_html = timed([a.probe, "report", str(src), "--format", "html", "-o", str(html)], a.repeat)
            t_text, peak_text = timed([a.probe, "report", str(src), "--format", "text", "-o", str(Path(tmp) / "r.txt")],
                                      a.repeat)
            t_json, peak_json = timed([a.probe, "report", str(src), "--format", "json", "-o", str(Path(tmp) / "o.json")],
                                      a.repeat)
            t_cmp, peak_cmp = timed([a.probe, "compare", str(src), str(src)], a.repeat)
            # a fresh store each run: a second run would find both sides stored already
            t_hist, peak_hist = timed([a.probe, "compare", str(src), str(src)], a.repeat,
                                      lambda i: dict(os.environ, XWARP_HISTORY=str(Path(tmp) / f"history-{n}-{i}.sqlite3")))
            if a.instructions and n in (10000, 100000):
                counts[n] = (instructions([a.probe, "report", str(src), "--format", "html", "-o", str(html)], Path(tmp)),
                             instructions([a.probe, "compare", str(src), str(src)], Path(tmp)))
            print(f"{n:>7} identities: JSON {json_bytes / 2**20:7.1f} MB | html {t_html:6.2f} s, "
                  f"{html.stat().st_size / 2**20:5.2f} MB, peak {peak_html / json_bytes:4.1f} x JSON | "
                  f"text {t_text:6.2f} s, peak {peak_text / json_bytes:4.1f} x | json {t_json:6.2f} s, "
                  f"peak {peak_json / json_bytes:4.1f} x | compare {t_cmp:6.2f} s, peak {peak_cmp / json_bytes:4.1f} x JSON "
                  f"({peak_cmp / (2 * json_bytes):3.1f} x its two inputs) | with the history {t_hist:6.2f} s, "
                  f"peak {peak_hist / json_bytes:4.1f} x JSON ({peak_hist / (2 * json_bytes):3.1f} x)", flush=True)
        # the wide shape (issue 33): 10 samples x 1,000 distinct identities over 10 modules
        src = Path(tmp) / "wide.json"
        write_report("wide", src)
        html = Path(tmp) / "wide.html"
        t_html, peak_html = timed([a.probe, "report", str(src), "--format", "html", "-o", str(html)], a.repeat)
        t_text, _ = timed([a.probe, "report", str(src), "--format", "text", "-o", str(Path(tmp) / "w.txt")], a.repeat)
        print(f"   wide (10 samples x 1,000 identities x 10 modules): JSON {src.stat().st_size / 2**20:5.1f} MB | "
              f"html {t_html:5.2f} s, {html.stat().st_size / 2**20:5.2f} MB, peak {peak_html / src.stat().st_size:4.1f} x JSON | "
              f"text {t_text:5.2f} s", flush=True)
        if 10000 in sizes and 100000 in sizes:
            small, large = Path(tmp) / "r10000.json", Path(tmp) / "r100000.json"
            html_ratio, html_all = paired_ratio([a.probe, "report", str(small), "--format", "html", "-o", str(Path(tmp) / "s.html")],
                                                [a.probe, "report", str(large), "--format", "html", "-o", str(Path(tmp) / "l.html")],
                                                a.repeat)
            cmp_ratio, cmp_all = paired_ratio([a.probe, "compare", str(small), str(small)],
                                              [a.probe, "compare", str(large), str(large)], a.repeat)
            print(f"time 100k / 10k (linear: 10), median of {a.repeat} pairs: html render {html_ratio:.1f} "
                  f"({', '.join(f'{r:.1f}' for r in html_all)}), compare {cmp_ratio:.1f} "
                  f"({', '.join(f'{r:.1f}' for r in cmp_all)})")
    if 10000 in counts and 100000 in counts:
        print(f"instructions 100k / 10k (callgrind): html render {counts[100000][0] / counts[10000][0]:.2f} "
              f"({counts[100000][0] / 1e9:.2f} G / {counts[10000][0] / 1e9:.2f} G), compare "
              f"{counts[100000][1] / counts[10000][1]:.2f} ({counts[100000][1] / 1e9:.2f} G / {counts[10000][1] / 1e9:.2f} G)")


if __name__ == "__main__":
    main()
