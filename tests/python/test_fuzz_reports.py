"""A whole-report mutation fuzzer, bounded for CI: every key path of a real report (the analysis of
a recorded real-Warp stream) is deleted, nulled, retyped, made huge, negative or deeply nested,
and `warp-probe report` and `compare` must answer 0 (or a verdict) or 65, never an internal
error (70) and never a signal; every 65 names the field's path and what was expected there. A seeded sample of the mutations runs within about 50 seconds;
XWARP_FUZZ_SECONDS and XWARP_FUZZ_SEED widen or vary it (the libFuzzer target in tests/fuzz
covers the loader byte by byte, outside CI)."""

import json
import os
import random
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import PROBE, ROOT

STREAM = ROOT / "tests" / "fixtures" / "streams" / "generic_block_dims-warp1.19.0"
SECONDS = float(os.environ.get("XWARP_FUZZ_SECONDS", "20"))
SEED = int(os.environ.get("XWARP_FUZZ_SEED", "20261203"))


def key_paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from key_paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):  # the first elements stand for the rest
            yield from key_paths(v, path + (i,))


def deep(levels):
    v = []
    for _ in range(levels):
        v = [v]
    return v


MUTATIONS = {
    "delete": None,
    "null": lambda v: None,
    "string": lambda v: "xx",
    "number": lambda v: 7,
    "float": lambda v: 1.5,
    "bool": lambda v: True,
    "array": lambda v: [1, "two", None],
    "object": lambda v: {"unexpected": [1]},
    "huge": lambda v: 1e308,
    "negative": lambda v: -1,
    "big_int": lambda v: 18446744073709551615,
    "deep": lambda v: deep(200),
    "empty": lambda v: [] if isinstance(v, list) else {} if isinstance(v, dict) else "",
}


def mutate(doc, path, how):
    d = json.loads(json.dumps(doc))
    if not path:
        return MUTATIONS[how](d) if MUTATIONS[how] else {}
    node = d
    for k in path[:-1]:
        node = node[k]
    if how == "delete":
        if isinstance(node, dict):
            del node[path[-1]]
        else:
            node.pop(path[-1])
    else:
        node[path[-1]] = MUTATIONS[how](node[path[-1]])
    return d


def run(args):
    proc = subprocess.run([str(PROBE), *args], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stderr[-500:]


def names_its_field(err):
    """A refusal names where (a JSON pointer: "at /samples/0/cold/wall_ms") and what was expected."""
    return " at /" in err and ("expected" in err or "nested deeper than" in err)


def test_mutated_reports_never_crash_the_cli(tmp_path):
    base = tmp_path / "base.json"
    made = subprocess.run([str(PROBE), "report", str(STREAM), "--format", "json", "-o", str(base)],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    doc = json.loads(base.read_text())
    cases = [(p, how) for p in key_paths(doc) for how in MUTATIONS]
    random.Random(SEED).shuffle(cases)

    failures = []
    done = [0]
    deadline = time.monotonic() + SECONDS

    def one(case):
        if time.monotonic() > deadline:
            return
        path, how = case
        with tempfile.NamedTemporaryFile("w", suffix=".json", dir=tmp_path, delete=False) as f:
            json.dump(mutate(doc, path, how), f)
        try:
            code, err = run(["report", f.name])
            if code not in (0, 65) or (code == 65 and not names_its_field(err)):
                failures.append(("report", "/".join(map(str, path)), how, code, err))
            if done[0] % 4 == 0:  # compare on a quarter of them: it analyses both sides
                code, err = run(["compare", str(base), f.name])
                if code not in (0, 1, 2, 3, 4, 5, 65) or (code == 65 and not names_its_field(err)):
                    failures.append(("compare", "/".join(map(str, path)), how, code, err))
        finally:
            os.unlink(f.name)
            done[0] += 1

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(one, cases))
    print(f"mutation fuzzer: {done[0]} of {len(cases)} mutations in {SECONDS:.0f} s (seed {SEED}), "
          f"{len(failures)} failure(s)")
    assert done[0] >= 200, f"only {done[0]} mutations ran: the sample says little"
    assert not failures, failures[:10]
