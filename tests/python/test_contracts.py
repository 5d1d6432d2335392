"""The contracts between warp-probe and the Python it runs, held from the Python side
(contracts/shim_inputs.schema.json, fixer_protocol.schema.json; the C++ side is
tests/unit/test_verdicts.cpp), and the real CLI driven on recorded shim streams
(--replay-streams, tests/fixtures/streams/*_replays, *_whatif): measure, whatif, fix --verify
--apply and warmup --verify judged on what real Warp did, without running Warp or the program."""

import contextlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from conftest import BUILD, PROBE, ROOT, TARGETS

pytestmark = pytest.mark.quick  # no Warp runs here: recorded streams and the Python sides only

SHIM_INPUTS = json.loads((ROOT / "contracts" / "shim_inputs.schema.json").read_text())
FIXER_PROTOCOL = json.loads((ROOT / "contracts" / "fixer_protocol.schema.json").read_text())
STREAMS = ROOT / "tests" / "fixtures" / "streams"
REPLAYS = STREAMS / "cs1_replays-warp1.19.0"
WHATIF = STREAMS / "grad_whatif-warp1.19.0"


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lever_variants():
    defs = SHIM_INPUTS["$defs"]
    return {defs[ref["$ref"].rsplit("/", 1)[1]]["properties"]["lever"]["const"]: defs[ref["$ref"].rsplit("/", 1)[1]]
            for ref in defs["whatif"]["oneOf"]}


def test_each_shim_lever_takes_its_parameters_from_the_contract_and_counts_its_effects():
    """The contract is the one place a lever's parameters and effects are written: the shim reads
    the parameters from it when it makes a lever, and counts every x-effects counter somewhere in
    its code (a lever that declared its own list could drift from the engine's judging)."""
    levers = load_module(ROOT / "runtime" / "shim" / "xwarp_shim" / "levers.py", "xwarp_levers_under_test")
    variants = lever_variants()
    assert set(levers.LEVERS) == set(variants)
    assert levers.contract_params() == {name: set(v["properties"]["params"].get("properties", {}))
                                        for name, v in variants.items()}
    source = "\n".join(p.read_text() for p in (ROOT / "runtime" / "shim" / "xwarp_shim").glob("*.py"))
    for name, cls in levers.LEVERS.items():
        assert not hasattr(cls, "effects") and not hasattr(cls, "params_known"), name
        for effect in variants[name]["x-effects"]:
            counted = f'"{effect}"' in source or (effect.endswith("_skipped") and f'"{effect[:-len("_skipped")]}"' in source)
            assert counted, (name, effect)
    # nor does the engine's lever table (a lever_def has no field for them): it judges a replay by
    # the compiled-in contract's x-effects
    assert not re.search(r"\beffects\b", (ROOT / "src" / "analysis" / "levers" / "lever.hpp").read_text())
    # a spec outside the contract changes nothing and says so (the engine then judges not-applied)
    refused = levers.make({"lever": "pch-off", "params": {"workers": 2}})
    assert refused.applied == {"spec_outside_contract": 1} and not refused.pinned
    assert levers.make({"lever": "no-such-lever", "params": {}}).applied == {"lever_unknown": 1}
    assert levers.make({"lever": "pch-off", "params": {}}).pinned == {"use_precompiled_headers": False}
    made = levers.make({"lever": "xdist-workers", "params": {"workers": 3}})
    assert type(made) is levers.LEVERS["xdist-workers"] and made.value() == "3"


def test_the_reports_lever_enum_is_generated_from_the_shims_variants_and_names_the_engines_levers():
    """The report schema's whatif lever enum is not written by hand: the build sets it from the
    shim-inputs variants, and the levers warp-probe plans (its --help) are the same set."""
    source = json.loads((ROOT / "contracts" / "report.schema.json").read_text())
    assert "enum" not in source["$defs"]["whatif"]["properties"]["lever"], "the lever enum is written by hand again"
    report_schema = json.loads((BUILD / "share" / "xwarp" / "report.schema.json").read_text())
    enum = None
    stack = [report_schema]
    while stack and enum is None:  # the whatif item's lever enum, wherever the schema keeps it
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "object" and "judged_on" in node.get("properties", {}) and "lever" in node["properties"]:
                enum = node["properties"]["lever"]["enum"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    assert enum is not None, "the report schema has no whatif lever enum"
    helped = subprocess.run([str(PROBE), "measure", "--help"], capture_output=True, text=True, check=True).stdout
    listed = re.search(r"LEVER\[,LEVER\.\.\.\] \(([^)]*)\)", " ".join(helped.split()))
    assert listed, helped
    engine = {name.strip() for name in listed.group(1).split(",")}
    assert set(enum) == set(lever_variants()) == engine, (sorted(enum), sorted(lever_variants()), sorted(engine))


def test_every_variable_the_shim_reads_is_in_the_contract():
    read = set()
    for source in (ROOT / "runtime" / "shim").rglob("*.py"):
        read |= set(re.findall(r"\bXWARP_[A-Z_]+\b", source.read_text()))
    assert read, "the shim reads no XWARP_ variable?"
    assert read <= set(SHIM_INPUTS["$defs"]["environment"]["properties"]), read - set(SHIM_INPUTS["$defs"]["environment"]["properties"])


def test_the_fixers_handlers_are_the_protocols_operations(tmp_path):
    fixer = load_module(ROOT / "runtime" / "fixer" / "xwarp_fix.py", "xwarp_fix_under_test")
    protocol_ops = FIXER_PROTOCOL["$defs"]["operation"]["properties"]["op"]["enum"]
    assert sorted(fixer.OPERATIONS) == sorted(protocol_ops)
    assert fixer.PROTOCOL == FIXER_PROTOCOL["x-protocol-version"]
    # every operation variant of the union has its handler's op name
    variants = [FIXER_PROTOCOL["$defs"][r["$ref"].rsplit("/", 1)[1]]["properties"]["op"]["const"]
                for r in FIXER_PROTOCOL["$defs"]["operation"]["oneOf"]]
    assert sorted(variants) == sorted(protocol_ops)
    # a request outside the protocol is one sentence and no response, never a traceback
    for request, said in (
        ({"protocol": fixer.PROTOCOL, "root": str(tmp_path), "fixes": [{"id": "x", "ops": [{"op": "rewrite_all"}]}]},
         f"not in protocol {fixer.PROTOCOL}"),
        ({"protocol": 99, "root": str(tmp_path), "fixes": []}, f"this fixer speaks {fixer.PROTOCOL}"),
    ):
        (tmp_path / "request.json").write_text(json.dumps(request))
        done = subprocess.run([sys.executable, str(ROOT / "runtime" / "fixer" / "xwarp_fix.py"), str(tmp_path / "request.json"),
                               str(tmp_path / "response.json")], capture_output=True, text=True, timeout=60)
        assert done.returncode != 0 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert not (tmp_path / "response.json").exists()


def test_the_warmup_runtimes_fields_are_the_plans_contract():
    """The warm-up plan and its targets are named records: the runtime's own reader (_PLAN_FIELDS,
    _TARGET_FIELDS) and warp-probe's writer (checked against warmup_targets.schema.json before a
    plan is written) name the same fields, so a column can never drift between them; and the
    rules that keep a plan data (the packages never the program's, the config rule) are the
    runtime's, not fields of the plan."""
    import ast

    schema = json.loads((ROOT / "contracts" / "warmup_targets.schema.json").read_text())
    runtime = (ROOT / "runtime" / "warmup" / "warmup_body.py").read_text()
    body = ast.parse(runtime)

    def fields_of(name):
        (fields,) = [node.value for node in body.body if isinstance(node, ast.Assign)
                     and any(getattr(t, "id", None) == name for t in node.targets)]
        return {k.value for k in fields.keys}

    target = schema["$defs"]["target"]
    assert fields_of("_TARGET_FIELDS") == set(target["properties"]) == set(target["required"])
    assert target["additionalProperties"] is False
    assert fields_of("_PLAN_FIELDS") == set(schema["properties"]) == set(schema["required"])
    assert schema["additionalProperties"] is False
    assert not {"never_the_programs", "config_rules", "config_rule"} & set(schema["properties"])
    # the runtime reads the contract's version it was written for
    (version,) = [node.value.value for node in body.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "PLAN_CONTRACT" for t in node.targets)]
    assert schema["x-contract-version"] == version == 4


def probe_cli(*args, timeout=120):
    return subprocess.run([str(PROBE), *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def replays(tmp_path):
    """The cs1 recording, pointed at a copy of its program in a folder of this test's own (the
    recording names the temporary folder it was made in) and at this interpreter."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(TARGETS / "diagnose" / "cs1_late.py", project / "cs1_late.py")
    streams = tmp_path / "streams"
    shutil.copytree(REPLAYS, streams)
    recorded_in = json.loads((streams / "run.json").read_text())["cwd"]
    for path in streams.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl"):
            path.write_text(path.read_text().replace(recorded_in, str(project)))  # the records name its files
    facts = json.loads((streams / "run.json").read_text())
    facts["cwd"] = str(project)
    facts["command"] = [sys.executable, "cs1_late.py"]
    (streams / "run.json").write_text(json.dumps(facts))
    report = tmp_path / "report.json"
    # the command given is never run: a path that does not exist proves it
    done = probe_cli("measure", "--quiet", "--samples", "1", "--replay-streams", streams, "--json", report, "--",
                     "/nonexistent/python", "cs1_late.py")
    assert done.returncode == 0, done.stderr
    return project, streams, report


def test_measure_on_recorded_streams_runs_nothing_and_finds_what_warp_did(replays):
    project, streams, report = replays
    r = json.loads(report.read_text())
    assert r["status"] == "ok" and r["cwd"] == str(project)
    assert any("--replay-streams" in w and "nothing ran" in w for w in r["warnings"])
    assert [f["mechanism"] for f in r["findings"]][:1] == ["CS-1"]


def test_fix_verify_and_apply_on_recorded_streams(replays, tmp_path):
    project, streams, report = replays
    before = (project / "cs1_late.py").read_text()
    out = tmp_path / "fixed.json"
    done = probe_cli("fix", report, "--verify", "--apply", "--samples", "1", "--run", "--quiet", "--history", "off",
                     "--replay-streams", streams, "--out", tmp_path / "patches", "--json", out)
    assert done.returncode == 0, done.stderr
    fixes = {f["mechanism"]: f for f in json.loads(out.read_text())["fixes"]}
    # the recorded patched copy built the module once where the program built it twice
    assert fixes["CS-1"]["verdict"] == "verified", fixes["CS-1"]
    assert fixes["CS-1"]["saving_ms"] > 0 and fixes["CS-1"]["applied"]
    after = (project / "cs1_late.py").read_text()
    assert after != before and "xwarp fix" in after
    assert (tmp_path / "patches").is_dir()


def test_a_replay_without_its_recording_is_invalid_and_says_why(replays, tmp_path):
    project, streams, report = replays
    shutil.rmtree(streams / "variants" / "CS-1__1")
    out = tmp_path / "fixed.json"
    done = probe_cli("fix", report, "--verify", "--samples", "1", "--run", "--quiet", "--history", "off",
                     "--finding", "CS-1", "--replay-streams", streams, "--out", tmp_path / "patches", "--json", out)
    assert done.returncode == 0, done.stderr
    (fix,) = json.loads(out.read_text())["fixes"]
    assert fix["verdict"] == "invalid" and "no recorded stream of CS-1 #1" in fix["reason"], fix


def test_warmup_verify_on_recorded_streams(replays, tmp_path):
    project, streams, report = replays
    plan = tmp_path / "plan.json"
    done = probe_cli("warmup", report, "--verify", "--samples", "1", "--run", "--quiet", "--history", "off",
                     "-o", tmp_path / "warm.py", "--replay-streams", streams, "--json", plan)
    assert done.returncode == 0, done.stdout + done.stderr
    check = json.loads(plan.read_text())["check"]
    assert check["verdict"] == "verified" and check["covered_built"] == [] and check["warmup_builds"] >= 1, check



def test_a_re_measure_changes_the_warmup_plan_and_never_its_runtime(replays, tmp_path):
    """The runtime is the same file for every plan of this xwarp; what a new measurement changes
    is the plan beside it, a field a line and a target a line: the diff a reviewer reads."""
    import difflib

    project, streams, report = replays
    written = {}
    for workers in ("2", "3"):
        out = tmp_path / f"w{workers}" / "warp_warmup.py"
        out.parent.mkdir()
        done = probe_cli("warmup", report, "--run", "--quiet", "--history", "off", "--workers", workers, "-o", out)
        assert done.returncode == 0, done.stdout + done.stderr
        written[workers] = (out.read_bytes(), out.with_suffix(".json").read_text())
    assert written["2"][0] == written["3"][0]
    changed = [line for line in difflib.unified_diff(written["2"][1].splitlines(), written["3"][1].splitlines(), n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == ['-  "workers": 2,', '+  "workers": 3,'], changed
    plan = json.loads(written["2"][1])
    jsonschema.validate(plan, json.loads((ROOT / "contracts" / "warmup_targets.schema.json").read_text()))
    assert all(line.startswith('    {"block_dim"') for line in written["2"][1].split('"targets": [\n', 1)[1].splitlines()[:-2])
    # --json beside -o may not take the plan's place
    clash = probe_cli("warmup", report, "--run", "--quiet", "--history", "off", "-o", tmp_path / "x.py",
                      "--json", tmp_path / "x.json")
    assert clash.returncode == 64 and "x.json" in clash.stderr and not (tmp_path / "x.py").exists(), clash.stderr

def test_whatif_on_recorded_streams_judges_the_recorded_lever(tmp_path):
    report = tmp_path / "grad.json"
    done = probe_cli("measure", "--quiet", "--samples", "2", "--replay-streams", WHATIF, "--json", report, "--",
                     "/nonexistent/python", "grad.py")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "whatif.json"
    done = probe_cli("whatif", report, "backward-off", "pch-off", "--samples", "1", "--run", "--quiet", "--history", "off",
                     "--replay-streams", WHATIF, "--json", out)
    assert done.returncode == 0, done.stderr
    results = {w["lever"]: w for w in json.loads(out.read_text())["whatif"]}
    # the recorded replay held enable_backward, and the lever's own rule judged it: this program
    # records a tape, so backward code is what it needs
    backward = results["backward-off"]
    assert backward["applied"].get("config_set", 0) >= 1, backward
    assert backward["verdict"] == "invalid" and "wp.Tape records gradients" in backward["reason"], backward
    # pch-off was never recorded: its replay could not start, and the verdict says so without
    # blaming the lever
    pch = results["pch-off"]
    assert pch["verdict"] == "invalid" and "no recorded stream of pch-off" in pch["reason"], pch
    assert "breaks the program" not in pch["reason"]
    # the compiled-in schema's lever enum (generated from the contract) refuses a lever it lacks
    assert probe_cli("report", out, "--history", "off", "-f", "html", "-o", tmp_path / "again.html").returncode == 0
    foreign = json.loads(out.read_text())
    foreign["whatif"][0]["lever"] = "no-such-lever"
    (tmp_path / "foreign.json").write_text(json.dumps(foreign))
    refused = probe_cli("report", tmp_path / "foreign.json", "--history", "off", "-f", "html", "-o", tmp_path / "foreign.html")
    assert refused.returncode == 65 and "lever" in refused.stderr, (refused.returncode, refused.stderr)


def test_the_fixer_request_warp_probe_sends_is_inside_the_protocol(replays, tmp_path):
    """What the C++ side emits, caught on its way to the fixer (a wrapper records the request)."""
    project, streams, report = replays
    seen = tmp_path / "requests"
    seen.mkdir()
    wrapper = tmp_path / "python-recording"
    wrapper.write_text(f"#!/bin/sh\ncp \"$2\" {seen}/$$.json\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    facts = json.loads((streams / "run.json").read_text())
    facts["command"] = [str(wrapper), "cs1_late.py"]
    (streams / "run.json").write_text(json.dumps(facts))
    done = probe_cli("measure", "--quiet", "--samples", "1", "--replay-streams", streams, "--json", report, "--",
                     "/nonexistent/python", "cs1_late.py")
    assert done.returncode == 0, done.stderr
    done = probe_cli("fix", report, "--run", "--quiet", "--history", "off", "--out", tmp_path / "patches")
    assert done.returncode == 0, done.stderr
    requests = list(seen.glob("*.json"))
    assert requests
    for path in requests:
        jsonschema.validate(json.loads(path.read_text()), {**FIXER_PROTOCOL, "$ref": "#/$defs/request"})


RECORDED_RUN = json.loads((ROOT / "contracts" / "recorded_run.schema.json").read_text())


def one_pass_folder(tmp_path, pass_facts):
    """A recorded cold pass of real Warp (cs1_late), in the one-pass form the pytest plugin writes."""
    folder = tmp_path / "one-pass"
    shutil.copytree(STREAMS / "cs1_late-warp1.19.0" / "sample-1" / "cold", folder)
    (folder / "pass.json").write_text(json.dumps(pass_facts))
    return folder


def test_a_recorded_folder_is_read_by_its_contract_in_both_its_forms(tmp_path):
    """contracts/recorded_run.schema.json is the folder's contract: what --keep-records writes is
    inside it, report --records reads the measured form and the pytest plugin's one-pass form by
    it, and a pass.json outside it is refused by its path and its fault, never half read."""
    kept = tmp_path / "kept"
    done = probe_cli("measure", "--quiet", "--samples", "2", "--history", "off", "--keep-records", kept, "--", "/bin/true")
    assert done.returncode == 0, done.stderr
    passes = sorted(kept.glob("sample-*/*/pass.json"))
    assert [p.parent.name for p in passes] == ["cold", "warm", "cold", "warm"], passes
    for p in passes:
        jsonschema.validate(json.loads(p.read_text()), RECORDED_RUN)
    read = probe_cli("report", "--records", kept, "--format", "json", "--history", "off")
    assert read.returncode == 0, read.stderr
    assert len(json.loads(read.stdout)["samples"]) == 2

    facts = {"label": "pytest", "command": ["pytest", "-q"], "cwd": str(tmp_path), "sampling": "one pass (a test)",
             "environment": {"python_version": "3.11.2", "cpu_count": 2}}
    one = one_pass_folder(tmp_path, {"wall_ms": 2500.0, "exit_code": 0, "one_pass": True, "warp_cache": "", "cache": {},
                                     "run": facts})
    jsonschema.validate(json.loads((one / "pass.json").read_text()), RECORDED_RUN)
    read = probe_cli("report", "--records", one, "--format", "json", "--history", "off")
    assert read.returncode == 0, read.stderr
    r = json.loads(read.stdout)
    assert r["label"] == "pytest" and r["command"] == ["pytest", "-q"] and r["settings"]["sampling"] == "one pass (a test)"
    assert len(r["samples"]) == 1 and r["samples"][0]["one_pass"] and r["samples"][0]["warm"] is None
    assert r["summary"]["identity_count"]["median"] >= 1 and [f["mechanism"] for f in r["findings"]][:1] == ["CS-1"]

    for broken, says in (({"wall_ms": 1.0, "one_pass": True, "run": facts, "surprise": 1}, "surprise"),
                         ({"wall_ms": "fast"}, "wall_ms"),
                         ({"wall_ms": 1.0, "one_pass": True}, "one-pass run's")):
        bad = one_pass_folder(tmp_path / str(len(says)), broken)
        refused = probe_cli("report", "--records", bad, "--history", "off")
        assert refused.returncode == 65, (broken, refused.returncode, refused.stderr)
        assert "pass.json" in refused.stderr and says in refused.stderr, refused.stderr
        with pytest.raises(jsonschema.ValidationError) if says != "one-pass run's" else contextlib.nullcontext():
            jsonschema.validate(broken, RECORDED_RUN)
