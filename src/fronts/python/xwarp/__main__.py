"""python -m xwarp install-kernel [--user | --sys-prefix | --prefix P] [--name N] [--xeus [--binary B]]

Names an xwarp kernel to Jupyter, without root. By default it is this environment's own
ipykernel with the warp magics loaded (`--ext=xwarp`): Jupyter lists it as "xwarp (Python 3.x)",
and it needs only what pip installed here (ipykernel: pip install 'xwarp[notebook]'). With
--xeus, it is the xeus-python kernel built by scripts/setup.sh or a source build (its binary
named by --binary, or found beside this Python).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def find_kernel_binary(explicit):
    """The xeus kernel binary: --binary, else beside this Python (a source build's prefix). Never
    one found on PATH: that is another install's, whose magics and version may not be these."""
    candidates = [explicit] if explicit else [str(Path(sys.executable).parent / "xwarp")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


def ipykernel_spec():
    """This environment's ipykernel with the extension loaded, or None when ipykernel is missing."""
    try:
        import ipykernel  # noqa: F401  (the kernel it names must be importable here)
    except ImportError:
        return None
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    return {
        "display_name": f"xwarp (Python {version})",
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=xwarp"],
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": True},
    }


def xeus_spec(binary):
    spec = {
        "display_name": "Python 3 (xwarp: Warp compile probe)",
        "argv": [binary, "-f", "{connection_file}"],
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }
    python = os.environ.get("XWARP_PYTHON")
    if python:
        spec["env"] = {"XWARP_PYTHON": python}
    return spec


def install_kernel(args):
    if args.xeus:
        binary = find_kernel_binary(args.binary)
        if binary is None:
            print("xwarp: no xwarp kernel binary beside this Python (name it with --binary). The pip package does "
                  "not build it (it embeds Debian's Python through xeus-python): build it with scripts/setup.sh, "
                  "or leave out --xeus for this environment's ipykernel with the magics loaded.", file=sys.stderr)
            return 66
        spec, what = xeus_spec(binary), f"the xeus kernel {binary}"
    else:
        spec = ipykernel_spec()
        if spec is None:
            print(f"xwarp: install-kernel names this environment's ipykernel ({sys.executable}), which is not "
                  "installed: pip install ipykernel (or pip install 'xwarp[notebook]')", file=sys.stderr)
            return 69
        what = f"ipykernel of {sys.executable} with %load_ext xwarp"
    # ipykernel brings jupyter_client: it decides where a kernelspec goes, as `jupyter kernelspec` does
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        print("xwarp: install-kernel needs jupyter_client (pip install jupyter_client)", file=sys.stderr)
        return 69
    name = args.name or ("xwarp" if args.xeus else f"xwarp-python{sys.version_info[0]}.{sys.version_info[1]}")
    with tempfile.TemporaryDirectory(prefix="xwarp-kernelspec-") as tmp:
        folder = Path(tmp) / "spec"
        folder.mkdir()
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        prefix = sys.prefix if args.sys_prefix else args.prefix
        try:
            where = KernelSpecManager().install_kernel_spec(str(folder), name, user=args.user, prefix=prefix)
        except ValueError as error:  # a name Jupyter does not allow
            print(f"xwarp: {error}", file=sys.stderr)
            return 64
    print(f"xwarp: kernelspec {name} ({spec['display_name']}) installed in {where}: {what}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m xwarp", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    ik = commands.add_parser("install-kernel", help="install an xwarp kernelspec")
    where = ik.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="in the user's Jupyter data folder (the default)")
    where.add_argument("--sys-prefix", action="store_true", help="in this environment (sys.prefix)")
    where.add_argument("--prefix", help="under this prefix (PREFIX/share/jupyter/kernels)")
    ik.add_argument("--name", help="the kernelspec's name (default: xwarp-python3.X; with --xeus, xwarp)")
    ik.add_argument("--xeus", action="store_true", help="the xeus-python kernel of a source build, not ipykernel")
    ik.add_argument("--binary", help="with --xeus: the xwarp kernel binary (default: beside this Python)")
    args = parser.parse_args(argv)
    if args.binary and not args.xeus:
        parser.error("--binary names the xeus kernel: use it with --xeus")
    if args.command == "install-kernel":
        if not (args.user or args.sys_prefix or args.prefix):
            args.user = True  # never the system's folders unless asked
        return install_kernel(args)
    return 64


if __name__ == "__main__":
    sys.exit(main())
