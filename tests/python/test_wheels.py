"""The py3-none manylinux_2_28 wheels scripts/wheels.sh builds (issues 62 and 71), checked where
they will run.

XWARP_WHEELS_DIR names the folder the script filled. Without it every test here is skipped: the
wheels are checked by the nightly path (.ci/nightly: `scripts/test.sh --wheels`), since building
them takes longer than the whole suite may run on every stop. There:

- each wheel (one per CPU, for every CPython 3) is py3-none-manylinux_2_28 by its name and by
  `auditwheel show`, and carries warp-probe and libxwarp_engine.so for its CPU, with the shim,
  fixer and guide; the library exports its C interface only, and nothing in the wheel is tied to
  one Python's ABI;
- the x86_64 warp-probe runs in a Debian 11 root (glibc 2.31) made with debootstrap from Debian's
  own packages, and the aarch64 one under qemu-aarch64 on Debian 11's arm64 glibc: --version,
  report --records of recorded real-Warp runs, report of the JSON that wrote and compare of two
  such reports, each printing what this checkout's own build (GCC) prints on this machine, with
  the same exit code;
- in that Debian 11 root, Debian's own Python 3.9 installs the x86_64 wheel with pip and runs
  `%load_ext xwarp` and a `%%warp_probe` cell in IPython on the newest Warp for 3.9.

The x86_64 wheel installed into a venv with the demo probed, the magics loaded in a stock
ipykernel, install-kernel run by Jupyter, other CPythons (pyenv's 3.9 and 3.13) and the venv left
clean on uninstall is test_pip.py run with XWARP_WHEEL."""

import os
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from conftest import PROBE, ROOT, run_ok

CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"

pytestmark = pytest.mark.xdist_group("test_wheels")

WHEELS = os.environ.get("XWARP_WHEELS_DIR")
ARCHES = {"x86_64": 0x3E, "aarch64": 0xB7}  # ELF e_machine
FIXTURES = ROOT / "tests" / "fixtures" / "streams"
# one program recorded twice (the second from Warp's log lines alone), and a pytest-xdist suite:
# the records, the log and pytest's lines are each parsed by the regular expressions of the C++
# runtime linked in, libc++ in the wheels and libstdc++ in the build they are compared with
RECORDED = ["cs1_late-warp1.19.0", "cs1_late_log_only-warp1.19.0", "suite_xdist-warp1.19.0"]
DEBIAN_MIRROR = os.environ.get("XWARP_DEBIAN_MIRROR", "http://deb.debian.org/debian")

if not WHEELS:
    pytest.skip("XWARP_WHEELS_DIR is not set: the wheels are built and checked by scripts/test.sh --wheels "
                "(.ci/nightly)", allow_module_level=True)


def the_wheel(arch):
    found = sorted(Path(WHEELS).glob(f"xwarp-*-py3-none-manylinux_2_28_{arch}.whl"))
    assert len(found) == 1, f"one py3-none {arch} wheel expected in {WHEELS}: {[p.name for p in Path(WHEELS).iterdir()]}"
    return found[0]


def unpack_probe(wheel, dest):
    """The wheel's warp-probe and its share/xwarp, laid out as pip installs them."""
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            for prefix, target in ((".data/scripts/", dest / "bin"), (".data/data/share/", dest / "share")):
                where = name.find(prefix)
                if where >= 0 and not name.endswith("/"):
                    out = target / name[where + len(prefix):]
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_bytes(z.read(name))
    (dest / "bin" / "warp-probe").chmod(0o755)
    return dest / "bin" / "warp-probe"


EXPORTED_SYMBOLS = """
import sys
from elftools.elf.elffile import ELFFile
with open(sys.argv[1], "rb") as f:
    table = ELFFile(f).get_section_by_name(".dynsym")
    for s in table.iter_symbols():
        if s["st_shndx"] != "SHN_UNDEF" and s["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK") and s.name:
            print(s.name)
"""


def elf_machine(data: bytes) -> int:
    assert data[:4] == b"\x7fELF", "not an ELF file"
    return int.from_bytes(data[18:20], "little")


@pytest.fixture(scope="module")
def auditwheel(tmp_path_factory):
    venv = tmp_path_factory.mktemp("auditwheel") / "venv"
    run_ok(["/usr/bin/python3", "-m", "venv", venv])
    run_ok([venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", "auditwheel==6.4.2"], timeout=600)
    return venv / "bin" / "auditwheel"


C_INTERFACE = ["xwarp_c_abi_version", "xwarp_free", "xwarp_magic_names", "xwarp_run_magic", "xwarp_start_session",
               "xwarp_version"]


@pytest.mark.parametrize("arch", ARCHES)
def test_each_wheel_is_py3_none_manylinux_2_28_for_its_cpu(arch, auditwheel, tmp_path):
    wheel = the_wheel(arch)
    shown = run_ok([auditwheel, "show", wheel]).stdout
    # auditwheel wraps its sentence at a width that moves with the file name's length
    assert f'consistent with the following platform tag: "manylinux_2_28_{arch}"' in " ".join(shown.split()), shown
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (probe,) = [n for n in names if n.endswith(".data/scripts/warp-probe")]
        library = "xwarp/libxwarp_engine.so"
        assert library in names, names
        # nothing in it is built for one Python: no extension module, no Python version compiled in
        assert not [n for n in names if re.search(r"\.cpython-|\.abi3\.so$", n)], names
        for binary in (probe, library):
            assert elf_machine(z.read(binary)) == ARCHES[arch], f"{binary} is not built for {arch}"
        assert b"libpython" not in z.read(library) and b"PyInit_" not in z.read(library)
        (tmp_path / "engine.so").write_bytes(z.read(library))
        for carried in ("share/xwarp/shim/sitecustomize.py", "share/xwarp/fixer/xwarp_fix.py",
                        "share/xwarp/references/mechanisms.md", "share/xwarp/report.schema.json"):
            assert any(n.endswith(".data/data/" + carried) for n in names), carried
        assert "xwarp/__init__.py" in names and "xwarp/_engine.py" in names
    # the library exports its C interface only: the engine and the C++ runtime linked in stay
    # inside it (pyelftools, which auditwheel brings, reads either CPU's ELF)
    exported = run_ok([auditwheel.parent / "python", "-c", EXPORTED_SYMBOLS, tmp_path / "engine.so"]).stdout.split()
    assert sorted(exported) == C_INTERFACE, exported[:20]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A working folder with the recorded runs, read by every warp-probe below by relative paths."""
    work = tmp_path_factory.mktemp("recorded")
    for name in RECORDED:
        shutil.copytree(FIXTURES / name, work / "fx" / name)
    return work


def commands():
    late, late_again, suite = (f"fx/{n}" for n in RECORDED)
    return [
        ["--version"],
        ["report", "--records", late, "--history", "off"],
        ["report", "--records", late_again, "--history", "off"],
        ["report", "--records", suite, "--history", "off"],
        ["report", "--records", late, "--history", "off", "-f", "json", "-o", "out/a.json"],
        ["report", "--records", late_again, "--history", "off", "-f", "json", "-o", "out/b.json"],
        ["report", "out/a.json", "--history", "off"],
        ["compare", "out/a.json", "out/b.json", "--history", "off"],
    ]


def outcomes(launch, work):
    """Each command's exit code, stdout and stderr, run by launch(args) in the work folder (its out/ emptied)."""
    if (work / "out").exists():
        shutil.rmtree(work / "out")
    (work / "out").mkdir()
    seen = []
    for args in commands():
        done = launch(args)
        seen.append((args, done.returncode, done.stdout, done.stderr))
    return seen


@pytest.fixture(scope="module")
def reference(recorded):
    """What this checkout's own build prints here (GCC, libstdc++, glibc 2.36): the wheels are
    built from the same sources with another compiler and C++ runtime, and must print the same."""
    seen = outcomes(lambda args: subprocess.run([str(PROBE), *args], cwd=recorded, capture_output=True, text=True,
                                                timeout=120), recorded)
    by_command = {" ".join(a): (code, out) for a, code, out, _ in seen}
    assert by_command["--version"][1].startswith("warp-probe ")
    assert "cs1_late.py" in by_command[f"report --records fx/{RECORDED[0]} --history off"][1]
    assert by_command["compare out/a.json out/b.json --history off"][0] in (0, 1, 4), seen[-1]
    assert all(code == 0 for a, code, _, _ in seen if a[0] != "compare"), seen
    return seen


def served(suite):
    try:
        with urllib.request.urlopen(f"{DEBIAN_MIRROR}/dists/{suite}/InRelease", timeout=60):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def debian11_root(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the Debian 11 root is made with debootstrap and entered with chroot: run as root")
    if not served("bullseye"):
        pytest.skip(f"Debian 11 is no longer served by {DEBIAN_MIRROR}: the wheels are checked by their "
                    "symbol versions only (auditwheel show, above)")
    assert shutil.which("debootstrap"), "debootstrap is missing (scripts/test.sh --wheels installs it)"
    root = tmp_path_factory.mktemp("debian11") / "root"
    # Debian 11's own Python 3.9, with venv and pip, for the wheel's magics (the last test here)
    run_ok(["debootstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates", "bullseye", root,
            DEBIAN_MIRROR], timeout=900)
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_x86_64_probe_runs_in_a_debian_11_root_and_prints_what_it_prints_here(debian11_root, recorded,
                                                                                     reference):
    glibc = run_ok([CHROOT, debian11_root, "ldd", "--version"]).stdout.splitlines()[0]
    assert glibc.endswith(" 2.31"), glibc
    unpack_probe(the_wheel("x86_64"), debian11_root / "opt" / "xwarp")
    work = debian11_root / "work"
    shutil.copytree(recorded / "fx", work / "fx")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}

    def in_root(args):
        return subprocess.run([CHROOT, str(debian11_root), "/bin/sh", "-c",
                               'cd /work && exec /opt/xwarp/bin/warp-probe "$@"', "sh", *args],
                              capture_output=True, text=True, env=env, timeout=120)

    assert outcomes(in_root, work) == reference


@pytest.fixture(scope="module")
def arm64_glibc(tmp_path_factory):
    """Debian 11's arm64 glibc, unpacked (nothing installed): qemu-aarch64 -L runs the probe on it."""
    if not served("bullseye"):
        pytest.skip(f"Debian 11 is no longer served by {DEBIAN_MIRROR}: the aarch64 wheel is checked by its "
                    "symbol versions only (auditwheel show, above)")
    sysroot = tmp_path_factory.mktemp("arm64") / "sysroot"
    run_ok([sys.executable, ROOT / "scripts" / "debian_fetch.py", "--suite", "bullseye", "--arch", "arm64",
         "--cache", tmp_path_factory.mktemp("debian-cache"), "--unpack", sysroot, "libc6"], timeout=600)
    return sysroot


def test_the_aarch64_probe_runs_under_qemu_and_prints_what_it_prints_here(arm64_glibc, recorded, reference,
                                                                           tmp_path):
    qemu = shutil.which("qemu-aarch64")
    assert qemu, "qemu-aarch64 is missing (Debian's qemu-user; scripts/test.sh --wheels installs it)"
    probe = unpack_probe(the_wheel("aarch64"), tmp_path / "xwarp")
    glibc = subprocess.run([qemu, "-L", str(arm64_glibc), str(probe), "--version"], capture_output=True, text=True)
    assert glibc.returncode == 0, glibc.stderr

    def under_qemu(args):
        return subprocess.run([qemu, "-L", str(arm64_glibc), str(probe), *args], cwd=recorded, capture_output=True,
                              text=True, timeout=300)

    assert outcomes(under_qemu, recorded) == reference


def test_debian_11s_python_3_9_installs_the_wheel_and_runs_a_warp_probe_cell_in_ipython(debian11_root):
    wheel = the_wheel("x86_64")
    shutil.copy(wheel, debian11_root / "tmp" / wheel.name)
    shutil.copy("/etc/resolv.conf", debian11_root / "etc" / "resolv.conf")  # PyPI, from inside the root
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
    # this machine's own way to PyPI: the certificates its pip trusts (a proxy's among them), if any
    host_ca = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    if host_ca and Path(host_ca).is_file():
        shutil.copy(host_ca, debian11_root / "etc" / "host-ca.crt")
        env["PIP_CERT"] = "/etc/host-ca.crt"
    cell = ("import warp as wp\n\n@wp.kernel\ndef k(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n\n"
            "wp.launch(k, dim=4, inputs=[wp.zeros(4, dtype=float)])\n")
    (debian11_root / "tmp" / "cells.py").write_text(
        "from IPython.core.interactiveshell import InteractiveShell\nip = InteractiveShell.instance()\n"
        "ip.run_line_magic('load_ext', 'xwarp')\n"
        f"ip.run_cell_magic('warp_probe', '--samples 1 -q -o rep', {cell!r})\n"
        "rep = ip.user_ns['rep']\n"
        "print('seen', rep['environment']['python_version'], rep['samples'][0]['cold']['module_loads'][0]['status'])\n")
    # the probe reads /proc for the processes it runs: mounted for the script, and taken back
    script = ("set -e; mount -t proc proc /proc; trap 'umount /proc' EXIT; python3 -m venv /opt/v; "
              f"/opt/v/bin/pip install -q warp-lang ipython /tmp/{wheel.name}; "
              "cd /tmp && XWARP_HISTORY=/tmp/h.db /opt/v/bin/python cells.py")
    done = subprocess.run([CHROOT, str(debian11_root), "/bin/sh", "-c", script], capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert re.search(r"seen 3\.9\.\d+ compiled", done.stdout), done.stdout[-3000:]
