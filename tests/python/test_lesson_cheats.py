"""Answers that skip the work do not meet an exercise. Each cheat (lesson_solutions.CHEATS) is the
solution with one edit a class would try: a kernel swapped for another with the same arguments, a
repeated launch, a kernel whose body does nothing, a deleted option. Probed in the real xwarp
kernel against the lesson's broken form, each is *not met*, and the clause that says no is the
one that checks that kind of work: kernels=same, results=same, option:..., or the limit the
option moves. Cheats on the measurement itself (lesson_solutions.CACHE_CHEATS: Warp pointed at a
kernel cache the student keeps, run as often as a class would) are not judged at all. (The deleted
launch is tried on every exercise in test_lessons.py.)"""

import re
import shutil
import tempfile
from pathlib import Path

from lesson_runner import ExerciseKernel, exercises, skipped_here
from lesson_solutions import CACHE_CHEATS, CHEATS, SOLUTIONS


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
            for what, old, new, runs in CACHE_CHEATS.get(name, []):
                kept = tempfile.mkdtemp(prefix="xwarp-student-cache-")
                try:
                    cheat = broken.replace(old, new.replace("STUDENT_CACHE", kept))
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
    assert tried == sum(map(len, CHEATS.values())) + sum(map(len, CACHE_CHEATS.values()))
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"
