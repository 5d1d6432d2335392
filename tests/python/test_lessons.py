"""The lessons' exercises check themselves: each solution (lesson_solutions.py) meets the
exercise's --expect with --strict in the real xwarp kernel, after the lesson's own setup cell.
(test_teaching_notebooks.py checks that each exercise, as shipped, starts "not met".)"""

import importlib.util
import os
import re
import subprocess

import nbformat
import pytest
from jupyter_client.manager import KernelManager

from conftest import BUILD, ROOT, VENV_PYTHON
from lesson_solutions import GPU_SOLUTIONS, SOLUTIONS

os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTATION_MIME = "application/vnd.xwarp.expectation+json"


def exercises():
    out = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        if "xwarp_exercise" in nb.metadata:
            code = [c.source for c in nb.cells if c.cell_type == "code"]
            setup = [c for c in code if c.startswith("%%warp_setup")]
            (broken,) = [c.split("\n", 1)[1] for c in code if c.startswith("%%warp_probe --samples 1 --name exercise_broken\n")]
            out.append((path.stem, setup[0], nb.metadata["xwarp_exercise"]["expect"], broken))
    return out


def gpu_exercises():
    """The GPU lesson's exercise: its cells probe only where there is a CUDA device."""
    spec = importlib.util.spec_from_file_location("make_notebooks", ROOT / "notebooks" / "make_notebooks.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
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
    assert names == set(SOLUTIONS)
    for name, _, expect, _ in exercises():
        assert expect.endswith(",workload=same"), (name, expect)


def test_every_solution_meets_its_exercise_and_deleting_work_does_not(tmp_path):
    check_exercises(exercises(), SOLUTIONS, tmp_path)


def test_the_gpu_exercise_is_met_by_its_solution_on_a_cuda_device(tmp_path):
    gpus = subprocess.run([str(VENV_PYTHON), "-c", "import warp as wp; print(wp.get_cuda_device_count())"],
                          capture_output=True, text=True).stdout.strip().splitlines()
    if not gpus or gpus[-1] == "0":
        pytest.skip("no CUDA device: the GPU lesson's exercise is probed only on one (tests/gpu/run_on_device.sh)")
    check_exercises(gpu_exercises(), GPU_SOLUTIONS, tmp_path)


def check_exercises(items, solutions, tmp_path):
    km = KernelManager(kernel_name="xwarp")
    km.start_kernel(env=dict(os.environ, TMPDIR=str(tmp_path)), cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()

    def probe(code, name, expect, strict):
        outputs = []
        reply = kc.execute_interactive(f'%%warp_probe --samples 1 --name {name} --compare {base} --expect "{expect}"'
                                       + (" --strict" if strict else "") + "\n" + code,
                                       timeout=600, output_hook=outputs.append)
        met = [m["content"]["data"][EXPECTATION_MIME] for m in outputs
               if m["msg_type"] == "display_data" and EXPECTATION_MIME in m["content"]["data"]]
        texts = [m["content"]["data"].get("text/plain", "") for m in outputs if m["msg_type"] == "display_data"]
        return reply["content"], met, "\n".join(texts)

    try:
        kc.wait_for_ready(timeout=60)
        for name, setup, expect, broken in items:
            if "build-overlap" in expect and (os.cpu_count() or 1) < 2:
                continue  # the exercise says it needs 2 cores: nothing overlaps on one
            reply = kc.execute_interactive(setup, timeout=120)
            assert reply["content"]["status"] == "ok", (name, reply["content"])
            base = f"{name}-broken"
            reply = kc.execute_interactive(f"%%warp_probe --samples 1 --name {base}\n{broken}", timeout=600)
            assert reply["content"]["status"] == "ok", (name, reply["content"].get("evalue"))
            content, met, _ = probe(solutions[name], f"{name}-solution", expect, strict=True)
            assert content["status"] == "ok", (name, content.get("evalue"))
            assert met == [{"met": True, "expect": expect}], (name, met)
            # the broken form with a launch deleted: not met, and it says the workload changed
            content, met, text = probe(without_last_launch(broken), f"{name}-deleted", expect, strict=False)
            assert content["status"] == "ok" and met == [{"met": False, "expect": expect}], (name, met)
            # changed, or unverified when no launch is left; either way it names what went missing
            assert re.search(r"CHANGED workload (changed|unverified)", text) and "missing: " in text, (name, text[-2000:])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"
