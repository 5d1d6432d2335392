"""Answers that skip the work do not meet an exercise. Each cheat (lesson_solutions.CHEATS) is the
solution with one edit a class would try: a kernel swapped for another with the same arguments, a
repeated launch, a kernel whose body does nothing, a deleted option. Probed in the real xwarp
kernel against the lesson's broken form, each is *not met*, and the clause that says no is the
one that checks that kind of work: kernels=same, results=same, option:..., or the limit the
option moves. Cheats on the measurement itself (lesson_solutions.CACHE_CHEATS: Warp pointed at a
kernel cache the student keeps, run as often as a class would, also set back before the cell ends)
are not judged at all; cheats on the recorder (lesson_solutions.RECORDER_CHEATS: a config set back
after the launches, a launch that raised counted as run) are not met. (The deleted launch is tried
on every exercise in test_lessons.py.)"""

import json
import re
import shutil
import tempfile
from pathlib import Path

from conftest import ROOT
from lesson_runner import ExerciseKernel, exercises, skipped_here
from lesson_solutions import CACHE_CHEATS, CHEATS, RECORDER_CHEATS, SOLUTIONS, edited


def refused_by(text, clause):
    """Whether the expectation's text has `clause` among the limits not met."""
    return re.search(r"^\s*(CHANGED|NOT MET|NOT JUDGED|OVER|UNDER)\s+" + re.escape(clause) + r"\b", text, re.M) is not None


def test_every_cheat_is_not_met_and_the_clause_that_checks_its_kind_says_why(tmp_path):
    kernel = ExerciseKernel(tmp_path)
    tried = 0
    try:
        for name, setup, expect, broken in exercises():
            if skipped_here(expect):
                continue
            kernel.start(name, setup, broken)
            for i, (what, old, new, clause) in enumerate(CHEATS[name]):
                cheat = SOLUTIONS[name].replace(old, new)
                assert cheat != SOLUTIONS[name], (name, what)
                content, met, text = kernel.answer(cheat, f"{name}-cheat-{i}", expect, strict=False)
                assert content["status"] == "ok", (name, what, content.get("evalue"))
                assert met == [{"met": False, "expect": expect}], (name, what, text[-2000:])
                assert refused_by(text, clause), (name, what, clause, text[-2000:])
                tried += 1
            for i, (what, edits, clause) in enumerate(RECORDER_CHEATS.get(name, [])):
                cheat = edited(broken, edits, None)
                content, met, text = kernel.answer(cheat, f"{name}-recorder-{i}", expect, strict=False)
                assert content["status"] == "ok", (name, what, content.get("evalue"))
                assert met == [{"met": False, "expect": expect}], (name, what, text[-2000:])
                assert refused_by(text, clause), (name, what, clause, text[-2000:])
                tried += 1
            for what, old, new, runs in CACHE_CHEATS.get(name, []):
                kept = tempfile.mkdtemp(prefix="xwarp-student-cache-")
                try:
                    cheat = edited(broken, old, new).replace("STUDENT_CACHE", kept)
                    assert cheat != broken, (name, what)
                    for run in range(runs):
                        content, met, text = kernel.answer(cheat, f"{name}-cache-{run}", expect, strict=False)
                        assert content["status"] == "ok", (name, what, content.get("evalue"))
                        assert met == [{"met": False, "expect": expect}], (name, what, run, text[-2000:])
                        # every limit of the expectation, the exercise's own first, is not judged
                        assert refused_by(text, expect.split(",")[0].split("<")[0].split(">")[0]), (name, what, text[-2000:])
                        assert f"kernel cache {kept}" in text and "not judged" in text, text[-2000:]
                    assert any(Path(kept).rglob("*.o")), "the cheat's cache was not where the cell pointed Warp"
                finally:
                    shutil.rmtree(kept, ignore_errors=True)
                tried += 1
    finally:
        kernel.close()
    assert tried == sum(map(len, CHEATS.values())) + sum(map(len, CACHE_CHEATS.values())) + sum(
        map(len, RECORDER_CHEATS.values()))
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"


def test_an_exercise_is_judged_as_shipped_whatever_the_student_edited(tmp_path):
    """--exercise NAME judges an answer against the exercise as it ships (share/xwarp/exercises.json,
    written with the notebooks): an exercise_broken cell the student edited (the float64 launch
    deleted) is not the baseline, so the same code as the answer is not met; an --expect of the
    student's own is refused beside it; the solution is met against the shipped form."""
    name = "cs6_generic_after_load"
    shipped = json.loads((ROOT / "notebooks" / "exercises.json").read_text())
    ((setup, expect, broken),) = [(s, e, b) for n, s, e, b in exercises() if n == name]
    # the notebook's metadata, cell and setup cell are what ships
    assert shipped[name] == {"expect": expect, "broken": broken, "setup": setup.split("\n", 1)[1].rstrip()}
    edited_broken = broken.replace("wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])", "")
    assert edited_broken != broken
    kernel = ExerciseKernel(tmp_path)
    try:
        reply = kernel.kc.execute_interactive(setup, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        content, _, text = kernel.cell("%%warp_probe --samples 1 --name exercise_broken", edited_broken)
        assert content["status"] == "ok", text[-2000:]
        content, met, text = kernel.cell(f"%%warp_probe --samples 1 --name exercise --exercise {name}", edited_broken)
        assert content["status"] == "ok", text[-2000:]
        assert "exercise_broken is not the exercise's broken form as shipped" in text, text[-2000:]
        assert met == [{"met": False, "expect": expect}], text[-2000:]
        assert refused_by(text, "workload"), text[-2000:]
        content, met, text = kernel.cell(f'%%warp_probe --samples 1 --name exercise --exercise {name} --expect "identities<=9"',
                                         SOLUTIONS[name])
        assert content["status"] == "error" and "leave out --expect and --compare" in text + content.get("evalue", ""), text[-2000:]
        assert met == []
        content, met, text = kernel.cell(f"%%warp_probe --samples 1 --name exercise --exercise {name}", SOLUTIONS[name])
        assert content["status"] == "ok", text[-2000:]
        assert "probing the broken form as shipped" not in text  # the shipped form probed once is kept
        assert met == [{"met": True, "expect": expect}], text[-2000:]
    finally:
        kernel.close()
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"


def test_an_edited_setup_cell_is_shown_and_the_exercise_is_judged_with_the_lessons_setup(tmp_path):
    """CS-5's setup turns enable_cpu_blocks on; with that line deleted every CPU launch runs at
    block_dim 1, so the broken form as it ships built each module once and was met. The exercise
    is now probed after the lesson's own setup (exercises.json), its broken form too, and the
    difference is shown: the same broken code is not met."""
    name = "cs5_block_dims_cpu"
    ((setup, expect, broken),) = [(s, e, b) for n, s, e, b in exercises() if n == name]
    edited_setup = re.sub(r"^wp\.config\.enable_cpu_blocks = True.*$", "", setup, flags=re.M)
    assert edited_setup != setup
    kernel = ExerciseKernel(tmp_path)
    try:
        reply = kernel.kc.execute_interactive(edited_setup, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        content, _, text = kernel.cell("%%warp_probe --samples 1 --name exercise_broken", broken)
        assert content["status"] == "ok", text[-2000:]
        content, met, text = kernel.cell(f"%%warp_probe --samples 1 --name exercise --exercise {name}", broken)
        assert content["status"] == "ok", text[-2000:]
        assert re.search(r"your %%warp_setup cell is not the lesson's as shipped \(line \d+: yours .*, the lesson's "
                         r"'wp\.config\.enable_cpu_blocks = True", text), text[-2000:]
        assert "exercise_broken is not the exercise's broken form as shipped" in text, text[-2000:]
        assert met == [{"met": False, "expect": expect}], text[-2000:]
    finally:
        kernel.close()
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"


def test_the_exercises_are_the_installed_ones_whatever_xwarp_shim_dir_names(tmp_path, monkeypatch):
    """A kernelspec the student owns could set XWARP_SHIM_DIR to a copy of the shim with an
    exercises.json of easier limits beside it: the probe may use that shim, but the exercises are
    read from the install only, so the broken form is still not met by the shipped limits."""
    from conftest import BUILD

    name = "cs1_kernels_after_load"
    ((setup, expect, broken),) = [(s, e, b) for n, s, e, b in exercises() if n == name]
    fake = tmp_path / "fake"
    shutil.copytree(BUILD / "share" / "xwarp" / "shim", fake / "shim")
    easier = json.loads((ROOT / "notebooks" / "exercises.json").read_text())
    easier[name]["expect"] = "identities<=99"
    (fake / "exercises.json").write_text(json.dumps(easier))
    monkeypatch.setenv("XWARP_SHIM_DIR", str(fake / "shim"))
    work = tmp_path / "work"
    work.mkdir()
    kernel = ExerciseKernel(work)
    try:
        reply = kernel.kc.execute_interactive(setup, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        content, met, text = kernel.cell(f"%%warp_probe --samples 1 --name exercise --exercise {name}", broken)
        assert content["status"] == "ok", text[-2000:]
        assert met == [{"met": False, "expect": expect}], text[-2000:]
    finally:
        kernel.close()
    assert list(work.iterdir()) == [], "the probes left files behind"
