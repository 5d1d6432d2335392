"""The lessons' exercises check themselves: each solution (lesson_solutions.py) meets the
exercise's --expect with --strict in the real xwarp kernel, after the lesson's own setup cell.
(test_teaching_notebooks.py checks that each exercise, as shipped, starts "not met".)"""

import re
import subprocess

import nbformat
import pytest

from conftest import ROOT, VENV_PYTHON
from lesson_runner import ExerciseKernel, exercises, skipped_here
from lesson_solutions import ALTERNATIVES, CHEATS, GPU_SOLUTIONS, NOTEBOOKS, SOLUTIONS


def gpu_exercises():
    """The GPU lesson's exercise: its cells probe only where there is a CUDA device."""
    make = NOTEBOOKS
    nb = nbformat.read(ROOT / "notebooks" / "gpu_mechanisms.ipynb", as_version=4)
    (setup,) = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%warp_setup")]
    return [("gpu_mechanisms", setup, make.GPU_EXERCISE["expect"], make.GPU_EXERCISE["code"])]


def without_last_launch(code):
    """The broken form with work deleted: its last launch gone (the answer that cheats)."""
    lines = code.splitlines()
    last = max(i for i, line in enumerate(lines) if "wp.launch(" in line)
    indent = len(lines[last]) - len(lines[last].lstrip())
    lines[last] = " " * indent + "pass"
    return "\n".join(lines)


@pytest.mark.quick
def test_every_exercise_has_a_solution_and_every_solution_an_exercise():
    names = {name for name, _, _, _ in exercises()}
    assert len(names) >= 9
    assert names == set(SOLUTIONS) == set(CHEATS)
    for name, _, expect, _ in exercises():
        # the work kept: the same launches, the same kernels, the same values left in the arrays
        assert expect.endswith(",workload=same,kernels=same,results=same"), (name, expect)
        for what, old, _, _ in CHEATS[name]:
            assert old in SOLUTIONS[name], (name, what, "the cheat edits text the solution no longer has")


def test_every_solution_meets_its_exercise_and_deleting_work_does_not(tmp_path):
    check_exercises(exercises(), SOLUTIONS, tmp_path)


def test_the_gpu_exercise_is_met_by_its_solution_on_a_cuda_device(tmp_path):
    gpus = subprocess.run([str(VENV_PYTHON), "-c", "import warp as wp; print(wp.get_cuda_device_count())"],
                          capture_output=True, text=True).stdout.strip().splitlines()
    if not gpus or gpus[-1] == "0":
        pytest.skip("no CUDA device: the GPU lesson's exercise is probed only on one (tests/gpu/run_on_device.sh)")
    check_exercises(gpu_exercises(), GPU_SOLUTIONS, tmp_path)


def check_exercises(items, solutions, tmp_path):
    kernel = ExerciseKernel(tmp_path)
    try:
        for name, setup, expect, broken in items:
            if skipped_here(expect):
                continue
            kernel.start(name, setup, broken)
            content, met, _ = kernel.answer(solutions[name], f"{name}-solution", expect, strict=True)
            assert content["status"] == "ok", (name, content.get("evalue"))
            assert met == [{"met": True, "expect": expect}], (name, met)
            for i, (what, answer) in enumerate(ALTERNATIVES.get(name, []) if solutions is SOLUTIONS else []):
                content, met, text = kernel.answer(answer, f"{name}-alternative-{i}", expect, strict=True)
                assert content["status"] == "ok" and met == [{"met": True, "expect": expect}], (name, what, text[-2000:])
            # the broken form with a launch deleted: not met, and it says the workload changed
            content, met, text = kernel.answer(without_last_launch(broken), f"{name}-deleted", expect, strict=False)
            assert content["status"] == "ok" and met == [{"met": False, "expect": expect}], (name, met)
            # changed, or unverified when no launch is left; either way it names what went missing (a
            # launch deleted inside a loop: the kernel now launched 0 times)
            assert re.search(r"CHANGED workload (changed|unverified)", text), (name, text[-2000:])
            assert re.search(r"missing: |launched 0 time\(s\)", text), (name, text[-2000:])
    finally:
        kernel.close()
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"
