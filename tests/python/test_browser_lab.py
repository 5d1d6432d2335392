"""A real browser: JupyterLab (PyPI, in .tools-venv) with Debian's Chromium driven by
Playwright. Open the overview notebook, run all cells, find the report table in the DOM, and
keep a screenshot as a test artifact."""

import os
import shutil
import socket
import subprocess
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

from conftest import BUILD, ROOT

TOOLS = Path(os.environ.get("XWARP_TOOLS_VENV", ROOT / ".tools-venv"))
ARTIFACTS = Path(os.environ.get("XWARP_TEST_ARTIFACTS", ROOT / "test-artifacts"))
REQUIRED = os.environ.get("XWARP_REQUIRE_BROWSER") == "1"


class Lab(str):
    """The server's URL, with the path of its log."""

    def __new__(cls, url, log):
        lab = super().__new__(cls, url)
        lab.log = log
        return lab


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    jupyter = TOOLS / "bin" / "jupyter"
    if not jupyter.exists():
        if REQUIRED:
            pytest.fail(f"{jupyter} missing: scripts/test.sh installs JupyterLab and Playwright there")
        pytest.skip("no .tools-venv with JupyterLab (scripts/test.sh creates it)")
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy2(ROOT / "notebooks" / "overview.ipynb", root / "overview.ipynb")
    home = tmp_path / "home"
    home.mkdir()
    port = _free_port()
    env = dict(
        os.environ,
        HOME=str(home),  # JupyterLab's settings and workspaces stay in the test's folder
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PATH=str(BUILD / "share" / "jupyter"),
    )
    log = open(tmp_path / "lab.log", "w")
    proc = subprocess.Popen(
        [str(jupyter), "lab", "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--IdentityProvider.token=xwarp-test", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
        + (["--allow-root"] if os.geteuid() == 0 else []),
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            urllib.request.urlopen(f"{url}/api/status?token=xwarp-test", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])
    yield Lab(url, tmp_path / "lab.log")
    os.killpg(proc.pid, 15)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
    log.close()


def test_jupyterlab_runs_the_overview_and_shows_the_report(lab):
    # Playwright lives in the tools venv: the browser part runs there.
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "jupyterlab-overview.png"
    proc = subprocess.run(
        [str(TOOLS / "bin" / "python"), str(Path(__file__).with_name("browser_lab_driver.py")), lab, str(shot)],
        capture_output=True, text=True, timeout=1500)
    # the server's log says whether the kernel died or the websocket dropped
    log = lab.log.read_text(errors="replace")[-4000:] if lab.log.exists() else ""
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:] + "\n--- jupyter lab log:\n" + log
    assert "identities table visible" in proc.stdout
    if "did not start the cells" in proc.stdout:
        # a click on Run All Cells that JupyterLab ignored costs 15 s each: say so, to find out why
        warnings.warn("Run All Cells needed another click: " + " / ".join(
            line for line in proc.stdout.splitlines() if "did not start the cells" in line))
    if "a Select Kernel dialog opened" in proc.stdout:
        warnings.warn("JupyterLab asked for a kernel although the server said the xwarp kernel was idle")
    if "RETRY:" in proc.stdout:
        # passed on the second run: keep the first run's page in the log, never silently
        warnings.warn("JupyterLab's first Run All stopped without the report and the second passed:\n"
                      + proc.stdout[proc.stdout.index("RETRY:"):][:6000] + "\n--- jupyter lab log:\n" + log)
    assert shot.stat().st_size > 20_000
