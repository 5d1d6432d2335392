"""Every teaching notebook, executed headless on the xwarp kernel, must show what it teaches:
the finding named in its metadata, and the verdict of its %warp_compare."""

import os

REPORT_MIME = "application/vnd.xwarp.report+json"
COMPARISON_MIME = "application/vnd.xwarp.comparison+json"
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from conftest import BUILD, ROOT, validate_report

os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.quick
def test_there_are_notebooks_and_they_are_committed_without_outputs():
    names = {p.stem for p in NOTEBOOKS}
    for required in ("overview", "cs1_kernels_after_load", "cs2_cache_thrown_away", "cs3_option_after_load",
                     "option_not_arrived", "cs4_many_small_modules", "cs6_generic_after_load", "cs9_unique_modules",
                     "cs10_unused_backward", "cs13_serial_builds", "gpu_mechanisms", "whatif"):
        assert required in names
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "xwarp"
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{path.name} has outputs"


def outputs_of(nb):
    displays, text = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "display_data":
                displays.append(out["data"])
            elif out.get("output_type") == "stream":
                text.append(out["text"])
            elif out.get("output_type") == "error":
                raise AssertionError(f"a cell failed: {out['ename']}: {out['evalue']}")
    return displays, "".join(text)


def reports_by_label(displays):
    reports = {}
    for d in displays:
        j = d.get(REPORT_MIME)
        if isinstance(j, dict) and j.get("tool") == "warp-probe":
            validate_report(j)
            reports[j["label"]] = j
    return reports


def comparisons(displays):
    return [d[COMPARISON_MIME] for d in displays if isinstance(d.get(COMPARISON_MIME), dict)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_shows_what_it_teaches(path, tmp_path):
    shutil.copy2(path, tmp_path / path.name)
    nb = nbformat.read(tmp_path / path.name, as_version=4)
    expect = nb.metadata["xwarp"]["expect"]
    NotebookClient(nb, kernel_name="xwarp", timeout=1800, resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "the notebook's probes wrote into its folder"
    displays, text = outputs_of(nb)

    if expect.get("gpu"):
        if "none: the GPU probes below are skipped" in text:
            assert text.count("not probed") == 3  # says plainly, for each mechanism
        else:
            reports = reports_by_label(displays)
            assert {"two_block_dims", "tiles", "pch_on", "pch_off"} <= set(reports)
        return

    reports = reports_by_label(displays)
    for label, mechanisms in expect.get("findings", {}).items():
        assert label in reports, f"no report labelled {label}"
        found = {f["mechanism"] for f in reports[label]["findings"]}
        for m in mechanisms:
            assert m in found, f"{label}: expected {m}, found {sorted(found)}"
    for label, flags in expect.get("flags", {}).items():
        found = {f["id"] for f in reports[label]["summary"]["flags"]}
        assert set(flags) <= found, f"{label}: expected flags {flags}, found {sorted(found)}"
    for label, mechanisms in expect.get("absent", {}).items():
        found = {f["mechanism"] for f in reports[label]["findings"]}
        assert not found & set(mechanisms), f"{label}: did not expect {sorted(found & set(mechanisms))}"
    if "whatif" in expect:
        # the what-if notebook measures levers instead of comparing an edited program
        for label, levers in expect["whatif"].items():
            measured = {w["lever"]: w for w in reports[label]["whatif"]}
            for lever, verdict in levers.items():
                assert measured[lever]["verdict"] == verdict, measured[lever]
        assert "What-if replays" in str(displays)
        return
    cmps = comparisons(displays)
    assert cmps, "the notebook shows no comparison"
    final = cmps[-1]
    assert final["workload"]["status"] == "same"
    assert final["receipts"], "no hash receipts"
    if "verdict" in expect:
        assert final["verdict"] == expect["verdict"], f"verdict {final['verdict']}: {final['reasons']}"
    if "judged_on" in expect:
        assert expect["judged_on"] in final["judged_on"]
    if "option_check" in expect:
        before, after = expect["option_check"].split()
        (c,) = [c for c in cmps if c["before"]["path"] == before and c["after"]["path"] == after]
        assert c["option_checks"] and c["option_checks"][0]["option"] == "enable_backward"
    for line in expect.get("stdout", []):
        assert line in text
