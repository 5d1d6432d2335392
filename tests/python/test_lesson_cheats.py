"""Answers that skip the work do not meet an exercise. Each cheat (lesson_solutions.CHEATS) is the
solution with one edit a class would try: a kernel swapped for another with the same arguments, a
repeated launch, a kernel whose body does nothing, a deleted option. Probed in the real xwarp
kernel against the lesson's broken form, each is *not met*, and the clause that says no is the
one that checks that kind of work: kernels=same, results=same, option:..., or the limit the
option moves. (The deleted launch is tried on every exercise in test_lessons.py.)"""

import re

from lesson_runner import ExerciseKernel, exercises, skipped_here
from lesson_solutions import CHEATS, SOLUTIONS


def refused_by(text, clause):
    """Whether the expectation's text has `clause` among the limits not met."""
    return re.search(r"^\s*(CHANGED|NOT MET|OVER|UNDER)\s+" + re.escape(clause) + r"\b", text, re.M) is not None


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
    finally:
        kernel.close()
    assert tried >= 12
    assert list(tmp_path.iterdir()) == [], "the probes left files behind"
