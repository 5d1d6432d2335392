"""A notebook run end to end with nbclient on the xwarp kernel, then rendered by headless
Chromium: %%warp_setup, two %%warp_probe cells (one sampling until settled), %warp_compare --until-settled
(which adds a sample to the run that has fewer)."""

import html.parser
import os

REPORT_MIME = "application/vnd.xwarp.report+json"
COMPARISON_MIME = "application/vnd.xwarp.comparison+json"
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter

from conftest import BUILD, ROOT, execute_notebook, validate_report

# one pytest-xdist worker for this file: its module fixtures are made once (conftest.ONE_WORKER)
pytestmark = pytest.mark.xdist_group("test_notebook")

os.environ["JUPYTER_PATH"] = str(BUILD / "share" / "jupyter") + os.pathsep + os.environ.get("JUPYTER_PATH", "")
ARTIFACTS = Path(os.environ.get("XWARP_TEST_ARTIFACTS", ROOT / "test-artifacts"))

SETUP = "%%warp_setup\nimport warp as wp\nN = 16"
LATE = """%%warp_probe --samples auto --max-samples 2 --name late
@wp.kernel
def first(a: wp.array(dtype=float)):
    a[wp.tid()] += 1.0

a = wp.zeros(N, dtype=float)
wp.launch(first, dim=N, inputs=[a])

@wp.kernel
def second(a: wp.array(dtype=float)):
    a[wp.tid()] *= 2.0

wp.launch(second, dim=N, inputs=[a])"""
HOISTED = """%%warp_probe --samples 1 --name hoisted
@wp.kernel
def first(a: wp.array(dtype=float)):
    a[wp.tid()] += 1.0

@wp.kernel
def second(a: wp.array(dtype=float)):
    a[wp.tid()] *= 2.0

a = wp.zeros(N, dtype=float)
wp.launch(first, dim=N, inputs=[a])
wp.launch(second, dim=N, inputs=[a])"""


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nb")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("A kernel defined after the first launch, and the fix."),
        nbformat.v4.new_code_cell(SETUP),
        nbformat.v4.new_code_cell(LATE),
        nbformat.v4.new_code_cell(HOISTED),
        nbformat.v4.new_code_cell("%warp_compare late hoisted --until-settled --max-samples 2"),
    ]
    before = sorted(p.name for p in folder.iterdir())
    execute_notebook(nb, "xwarp", folder, timeout=900)
    assert sorted(p.name for p in folder.iterdir()) == before, "the probe wrote into the notebook's folder"
    path = folder / "executed.ipynb"
    nbformat.write(nb, path)
    return nb, path


def report_of(cell):
    (data,) = [o["data"] for o in cell.outputs if o.get("output_type") == "display_data" and REPORT_MIME in o["data"]]
    return data


def test_setup_cell_confirms(executed):
    nb, _ = executed
    text = "".join(o["data"]["text/plain"] for o in nb.cells[1].outputs if o.get("output_type") == "display_data")
    assert "warp_setup stored (2 lines)" in text


def test_probe_cells_carry_html_text_and_a_valid_report(executed):
    nb, _ = executed
    late = report_of(nb.cells[2])
    report = late[REPORT_MIME]
    validate_report(report)
    assert report["label"] == "late" and report["setup_code"] == "import warp as wp\nN = 16"
    assert report["summary"]["samples_ok"] == 2
    assert report["settings"]["sampling"] == "auto (2 to 2)" and report["settings"]["stopped_because"]
    (cs1,) = [f for f in report["findings"] if f["mechanism"] == "CS-1"]
    # the location is in the notebook's terms: the @wp.kernel line of `second` in the cell
    cell_lines = LATE.splitlines()[1:]
    assert cs1["location"] == {"file": "<cell>", "line": cell_lines.index("def second(a: wp.array(dtype=float)):")}
    assert 'data-xwarp="identities"' in late["text/html"] and "CS-1" in late["text/html"]
    assert "hash churn" in late["text/plain"]
    hoisted = report_of(nb.cells[3])[REPORT_MIME]
    assert len(hoisted["summary"]["identities"]) == 1
    assert not [f for f in hoisted["findings"] if f["mechanism"] == "CS-1"]


def test_compare_cell_shows_the_verdict_with_receipts(executed):
    nb, _ = executed
    (data,) = [o["data"] for o in nb.cells[4].outputs
               if o.get("output_type") == "display_data" and COMPARISON_MIME in o["data"]]
    c = data[COMPARISON_MIME]
    assert c["workload"]["status"] == "same"
    assert c["verdict"] in ("improved", "inconclusive")  # two samples a side: the band decides
    # hoisted had one sample: one was added; two a side cannot run the rank test, so not settled
    assert c["until_settled"] == {"added_before": 0, "added_after": 1, "max_samples": 2, "settled": False, "interrupted": False,
                                  "stopped_because": "reached --max-samples 2 a side without settling"}
    assert c["before"]["samples_total"] == 2 and c["after"]["samples_total"] == 2
    assert "until settled: added 0 sample(s) before and 1 after (now 2 and 2" in data["text/plain"]
    assert 'data-xwarp="until-settled"' in data["text/html"]
    (receipt,) = [r for r in c["receipts"] if r["module"] == "__main__"]
    assert receipt["changed"] and len(receipt["before"]) == 2 and len(receipt["after"]) == 1
    assert 'data-xwarp="verdict"' in data["text/html"]
    assert "VERDICT:" in data["text/plain"]


class _TableFinder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables = []

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append(dict(attrs).get("data-xwarp"))


def test_chromium_renders_the_executed_notebook(executed, tmp_path):
    nb, _ = executed
    body, _ = HTMLExporter().from_notebook_node(nb)
    page = tmp_path / "notebook.html"
    page.write_text(body)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is not installed (scripts/setup.sh installs it)"
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--disable-background-networking", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run(flags + ["--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    finder = _TableFinder()
    finder.feed(dom.stdout)
    assert "identities" in finder.tables and "receipts" in finder.tables
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "notebook.png"
    subprocess.run(flags + ["--window-size=1280,2400", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10000
