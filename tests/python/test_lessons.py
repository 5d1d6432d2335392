"""The lessons' exercises check themselves: each solution (lesson_solutions.py) meets the
exercise's --expect with --strict in the real xwarp kernel, after the lesson's own setup cell.
(test_teaching_notebooks.py checks that each exercise, as shipped, starts "not met".)"""

import os

import nbformat
import pytest
from jupyter_client.manager import KernelManager

from conftest import BUILD, ROOT
from lesson_solutions import SOLUTIONS

os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTATION_MIME = "application/vnd.xwarp.expectation+json"


def exercises():
    out = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        if "xwarp_exercise" in nb.metadata:
            setup = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%warp_setup")]
            out.append((path.stem, setup[0], nb.metadata["xwarp_exercise"]["expect"]))
    return out


@pytest.mark.quick
def test_every_exercise_has_a_solution_and_every_solution_an_exercise():
    names = {name for name, _, _ in exercises()}
    assert len(names) >= 9
    assert names == set(SOLUTIONS)


def test_every_solution_meets_its_exercise(tmp_path):
    km = KernelManager(kernel_name="xwarp")
    km.start_kernel(env=dict(os.environ, TMPDIR=str(tmp_path)), cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        for name, setup, expect in exercises():
            outputs = []
            reply = kc.execute_interactive(setup, timeout=120)
            assert reply["content"]["status"] == "ok", (name, reply["content"])
            reply = kc.execute_interactive(
                f'%%warp_probe --samples 1 --name {name}-solution --expect "{expect}" --strict\n' + SOLUTIONS[name],
                timeout=600, output_hook=outputs.append)
            assert reply["content"]["status"] == "ok", (name, reply["content"].get("evalue"))
            met = [m["content"]["data"][EXPECTATION_MIME] for m in outputs
                   if m["msg_type"] == "display_data" and EXPECTATION_MIME in m["content"]["data"]]
            assert met == [{"met": True, "expect": expect}], (name, met)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"
