#!/usr/bin/env python3
"""How long the lessons' probes take on this machine: each notebook executed as shipped on the
installed xwarp kernel (every cell, over the real protocol, in a folder of its own), timed, beside
the "runs in" figure notebooks/README.md promises for it. The 90-minute path's notebooks are
summed, beside the README's "about N minutes of waiting".

Run it on the machine a class will use (a laptop's 2 cores are the README's assumption), with
nothing else running: the figures are what a learner waits, not a test.

It also prints each notebook's minutes for a reader, estimated from what the notebook holds
(estimate()): its prose at 150 words a minute, a quarter minute per code cell, half a minute to
read each report a cell shows, its probes' wait (measured here; with --estimate, the README's
"runs in" figure, executing nothing), and 4 minutes per exercise (an edit, a probe, the verdict,
once more). The 90-minute path's total of those is what the README's path table holds.

A class is not one learner: each notebook's CPU-seconds (the kernel and every process its probes
started, counted when the kernel is reaped) are printed too, and from the path's sum, what a hub
of C cores gives N learners: the minutes the path's probes queue for when all of them probe at
once, and the cores a class needs so that each learner waits no longer than one alone on this
machine (--students N --cores C; 20 and 2 by default).

Usage: /usr/bin/python3 bench/lesson_path.py [--only NAME[,NAME...]] [--path-only] [--estimate]
                                             [--students N] [--cores C]
"""

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def promised():
    """The README's course table: notebook -> its "runs in" text; and the path's notebooks."""
    text = (NOTEBOOKS / "README.md").read_text()
    course, path = {}, []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        link = re.search(r"\]\(([\w.]+)\.ipynb\)", line)
        if not link:
            continue
        if len(cells) == 5 and cells[0].isdigit():
            course[link.group(1)] = cells[3]
        elif len(cells) == 3 and cells[0].isdigit():
            path.append(link.group(1))
    said = re.search(r"about (\d+) minutes of waiting", text)
    return course, path, (said.group(1) if said else "?")


WORDS_A_MINUTE = 150
CODE_CELL_MIN = 0.25
REPORT_MIN = 0.5
EXERCISE_MIN = 4.0
REPORT_CELL = re.compile(r"\s*(%%?warp_(probe|whatif|compare|fix|warmup|report)\b|.*run_(cell|line)_magic\(\s*\"warp_probe)", re.S)


def seconds_said(runs_in):
    """The README's "runs in" figure ("~35 s", "~1 min") in seconds; 0 when it says none."""
    said = re.search(r"([\d.]+)\s*(s|min)\b", runs_in or "")
    return float(said.group(1)) * (60 if said.group(2) == "min" else 1) if said else 0.0


def estimate(name, probe_seconds):
    """Minutes a reader spends on the notebook: (total, parts) from its prose, code cells, the
    reports they show, the probes' wait and its exercise."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    words = sum(len(re.findall(r"\w+", c.source)) for c in nb.cells if c.cell_type == "markdown")
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    reports = sum(1 for c in code if REPORT_CELL.match(c))
    parts = {"prose": words / WORDS_A_MINUTE, "code": CODE_CELL_MIN * len(code), "reports": REPORT_MIN * reports,
             "probes": probe_seconds / 60.0, "exercise": EXERCISE_MIN if "xwarp_exercise" in nb.metadata else 0.0}
    return sum(parts.values()), parts


def children_cpu_s():
    """CPU seconds of this process's reaped children and their reaped descendants."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_notebook(name, folder):
    """(wall seconds to execute every cell of the shipped notebook, the kernel's start excluded;
    CPU seconds of the kernel and every process it started, its start included)."""
    before = children_cpu_s()
    wall = run_cells(name, folder)
    return wall, children_cpu_s() - before  # the kernel is reaped by now: its tree's CPU is counted


def run_cells(name, folder):
    work = folder / name
    work.mkdir()
    shutil.copy2(NOTEBOOKS / f"{name}.ipynb", work)
    if (NOTEBOOKS / "recorded").is_dir():
        shutil.copytree(NOTEBOOKS / "recorded", work / "recorded")
    nb = nbformat.read(work / f"{name}.ipynb", as_version=4)
    km = KernelManager(kernel_name="xwarp")
    client = NotebookClient(nb, km=km, timeout=1800, resources={"metadata": {"path": str(work)}})
    try:
        with client.setup_kernel(stderr=subprocess.DEVNULL):  # the kernel's start banner
            started = time.perf_counter()
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
            return time.perf_counter() - started
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated notebook names")
    parser.add_argument("--path-only", action="store_true", help="only the 90-minute path's notebooks")
    parser.add_argument("--estimate", action="store_true",
                        help="execute nothing: the reader's minutes from the README's \"runs in\" figures")
    parser.add_argument("--students", type=int, default=20, help="learners on one hub (default 20)")
    parser.add_argument("--cores", type=int, default=2, help="the hub's CPU cores (default 2)")
    args = parser.parse_args()
    course, path, path_minutes = promised()
    names = sorted(course, key=list(course).index)
    if args.path_only:
        names = [n for n in names if n in path]
    if args.only:
        names = [n.strip() for n in args.only.split(",")]
        unknown = [n for n in names if not (NOTEBOOKS / f"{n}.ipynb").exists()]
        if unknown:
            sys.exit(f"no such notebook: {', '.join(unknown)}")
    folder = Path(tempfile.mkdtemp(prefix="xwarp-lesson-path-"))
    measured, reader, cpu = {}, {}, {}
    try:
        print(f"{'notebook':<28} {'probes':>9} {'CPU':>8}  {'README says':<12} reader's minutes "
              "(prose+code+reports+probes+exercise)")
        for name in names:
            if args.estimate:
                measured[name] = seconds_said(course.get(name))
            else:
                measured[name], cpu[name] = run_notebook(name, folder)
            reader[name], parts = estimate(name, measured[name])
            shown_cpu = f"{cpu[name]:>7.1f}s" if name in cpu else f"{'-':>8}"
            print(f"{name:<28} {measured[name]:>8.1f}s {shown_cpu}  {course.get(name, '-'):<12} {reader[name]:5.1f} = "
                  + " + ".join(f"{v:.1f}" for v in parts.values()), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    on_path = [n for n in path if n in measured]
    if on_path:
        total = sum(measured[n] for n in on_path)
        whole = " (the whole path)" if len(on_path) == len(path) else f" ({len(on_path)} of its {len(path)} notebooks)"
        print(f"the 90-minute path's probes: {total / 60:.1f} min{whole}; the README says about {path_minutes} minutes")
        print(f"the 90-minute path for a reader: {sum(reader[n] for n in on_path):.1f} min estimated{whole}, "
              f"set-up and slack aside")
        if all(n in cpu for n in on_path):
            class_room(sum(cpu[n] for n in on_path), total, sum(reader[n] for n in on_path), args.students, args.cores)


def class_room(cpu_s, wall_s, reader_min, students, cores):
    """What a hub gives a class, from one learner's path measured here: CPU-seconds, the probes'
    wait on this machine's cores, and the reader's minutes the probes are spread over."""
    here = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    busy = cpu_s / wall_s if wall_s > 0 else 0.0  # cores one learner's probes keep busy while they run
    queue_min = students * cpu_s / cores / 60.0
    print(f"one learner's path: {cpu_s:.0f} CPU-s in {wall_s / 60:.1f} min of probes on {here} core(s) here "
          f"({busy:.2f} cores busy while probing)")
    print(f"{students} learners on {cores} core(s): the path's probes are {queue_min:.1f} min of work per core; "
          f"probing all at once, each waits about {max(wall_s / 60.0, queue_min):.1f} min instead of {wall_s / 60:.1f}")
    spread = students * cpu_s / (reader_min * 60.0) if reader_min > 0 else 0.0
    print(f"cores a class of {students} needs: {spread:.1f} on average (probes spread over the path's "
          f"{reader_min:.0f} reader's minutes, {spread / students:.2f} per learner); {students * busy:.1f} for each "
          f"to wait no longer than alone here when all probe at once ({busy:.2f} per learner)")


if __name__ == "__main__":
    main()
