"""Drives the lessons' exercises in the real xwarp kernel over the real protocol: the lesson's own
setup cell, the broken form probed as the run to compare with, then any answer probed with the
exercise's --expect against it. Shared by test_lessons.py (solutions, deleted launches) and
test_lesson_cheats.py (answers that skip the work)."""

import os

import nbformat
from jupyter_client.manager import KernelManager

from conftest import BUILD, ROOT

os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXPECTATION_MIME = "application/vnd.xwarp.expectation+json"


def exercises():
    """(lesson, setup cell, --expect, broken form) of every notebook with an exercise."""
    out = []
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        if "xwarp_exercise" in nb.metadata:
            code = [c.source for c in nb.cells if c.cell_type == "code"]
            setup = [c for c in code if c.startswith("%%warp_setup")]
            (broken,) = [c.split("\n", 1)[1] for c in code if c.startswith("%%warp_probe --samples 1 --name exercise_broken\n")]
            out.append((path.stem, setup[0], nb.metadata["xwarp_exercise"]["expect"], broken))
    return out


def skipped_here(expect):
    """The overlap exercise says it needs 2 cores: nothing overlaps on one."""
    return "build-overlap" in expect and (os.cpu_count() or 1) < 2


class ExerciseKernel:
    """One xwarp kernel, started in `tmp_path` (its TMPDIR too, so leftovers show)."""

    def __init__(self, tmp_path):
        self.km = KernelManager(kernel_name="xwarp")
        self.km.start_kernel(env=dict(os.environ, TMPDIR=str(tmp_path)), cwd=str(tmp_path))
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.base = None

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)

    def start(self, name, setup, broken):
        """The lesson's setup, then its broken form probed as the run answers are compared with."""
        reply = self.kc.execute_interactive(setup, timeout=120)
        assert reply["content"]["status"] == "ok", (name, reply["content"])
        self.base = f"{name}-broken"
        reply = self.kc.execute_interactive(f"%%warp_probe --samples 1 --name {self.base}\n{broken}", timeout=600)
        assert reply["content"]["status"] == "ok", (name, reply["content"].get("evalue"))

    def answer(self, code, name, expect, strict):
        """Probes an answer against the broken form: (reply content, expectation bundles, text shown)."""
        return self.cell(f'%%warp_probe --samples 1 --name {name} --compare {self.base} --expect "{expect}"'
                         + (" --strict" if strict else ""), code)

    def cell(self, magic_line, code):
        """Runs one cell, `magic_line` over `code`: (reply content, expectation bundles, text shown)."""
        outputs = []
        reply = self.kc.execute_interactive(magic_line + "\n" + code, timeout=600, output_hook=outputs.append)
        met = [m["content"]["data"][EXPECTATION_MIME] for m in outputs
               if m["msg_type"] == "display_data" and EXPECTATION_MIME in m["content"]["data"]]
        texts = [m["content"]["data"].get("text/plain", "") for m in outputs if m["msg_type"] == "display_data"]
        errors = [f"{m['content']['ename']}: {m['content']['evalue']}" for m in outputs if m["msg_type"] == "error"]
        return reply["content"], met, "\n".join(texts + errors)
