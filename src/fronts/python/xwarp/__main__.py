"""python -m xwarp install-kernel [--user | --sys-prefix | --prefix P] [--name N]

Names the xwarp kernel (the xeus-python kernel with the warp magics) to Jupyter, without root:
its kernelspec points at the xwarp binary where it was built or installed. Every other kernel
gets the same magics with %load_ext xwarp.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path


def find_kernel_binary(explicit):
    """The xwarp kernel binary: --binary, then beside this Python, then on PATH."""
    candidates = [explicit] if explicit else [str(Path(sys.executable).parent / "xwarp"), shutil.which("xwarp")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    return None


def install_kernel(args):
    binary = find_kernel_binary(args.binary)
    if binary is None:
        print("xwarp: no xwarp kernel binary here (beside this Python or on PATH). The pip package does not "
              "build it (it embeds Debian's Python through xeus-python): build it with scripts/setup.sh, or "
              "use %load_ext xwarp in the kernel you already run.", file=sys.stderr)
        return 66
    try:
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError:
        print("xwarp: install-kernel needs jupyter_client (pip install jupyter_client)", file=sys.stderr)
        return 69
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
    with tempfile.TemporaryDirectory(prefix="xwarp-kernelspec-") as tmp:
        folder = Path(tmp) / args.name
        folder.mkdir()
        (folder / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
        prefix = sys.prefix if args.sys_prefix else args.prefix
        where = KernelSpecManager().install_kernel_spec(str(folder), args.name, user=args.user, prefix=prefix)
    print(f"xwarp: kernelspec {args.name} installed in {where} (kernel {binary})")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m xwarp", description=__doc__.split("\n\n")[1])
    commands = parser.add_subparsers(dest="command", required=True)
    ik = commands.add_parser("install-kernel", help="install the xwarp kernelspec")
    where = ik.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="in the user's Jupyter data folder")
    where.add_argument("--sys-prefix", action="store_true", help="in this environment (sys.prefix)")
    where.add_argument("--prefix", help="under this prefix (PREFIX/share/jupyter/kernels)")
    ik.add_argument("--name", default="xwarp", help="the kernelspec's name (default: xwarp)")
    ik.add_argument("--binary", help="the xwarp kernel binary (default: beside this Python, then on PATH)")
    args = parser.parse_args(argv)
    if args.command == "install-kernel":
        if not (args.user or args.sys_prefix or args.prefix):
            args.user = True  # never the system's folders unless asked
        return install_kernel(args)
    return 64


if __name__ == "__main__":
    sys.exit(main())
