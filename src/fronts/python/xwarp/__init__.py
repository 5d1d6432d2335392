"""xwarp: measure, explain and cut NVIDIA Warp's cold-start compile time.

In IPython or a stock Jupyter kernel::

    %load_ext xwarp

registers the warp magics (``%%warp_probe``, ``%%warp_setup``, ``%warp_probe``,
``%warp_compare``, ``%warp_whatif``, ``%warp_fix``, ``%warp_warmup``, ``%warp_report``, ``%warp_history``,
``%warp_export``): the same C++ code as the xwarp kernel's, in libxwarp_engine.so (a C interface
loaded with ctypes, so one wheel serves every CPython 3), publishing through IPython.display.
``warp-probe`` (the command-line probe) is installed on the environment's PATH.
``python -m xwarp install-kernel`` names this environment's ipykernel with the magics loaded to
Jupyter, as "xwarp (Python 3.x)"; ``--xeus`` names a source build's xeus kernel instead.
"""

import os
import site
import sys
from importlib import metadata
from pathlib import Path

__all__ = ["data_dir", "load_ipython_extension"]

try:
    __version__ = metadata.version("xwarp")
except metadata.PackageNotFoundError:  # imported from a source tree
    __version__ = "0+unknown"


def data_dir():
    """The installed share/xwarp folder (the shim the probe injects, the mechanism guide), or
    None. Found through the package's own file list, so a venv, --user and --prefix install
    all work; then the usual prefixes."""
    given = os.environ.get("XWARP_ENGINE_LIBRARY")
    if given:  # a build tree's library (the tests): its share/xwarp is beside it
        beside = Path(given).resolve().parent / "share" / "xwarp"
        if (beside / "shim" / "sitecustomize.py").exists():
            return beside
    try:
        for f in metadata.files("xwarp") or []:
            if f.name == "sitecustomize.py" and f.parent.name == "shim":
                return Path(f.locate()).resolve().parent.parent
    except metadata.PackageNotFoundError:
        pass
    for base in (sys.prefix, site.USER_BASE, "/usr/local"):
        candidate = Path(base) / "share" / "xwarp"
        if (candidate / "shim" / "sitecustomize.py").exists():
            return candidate
    return None


def load_ipython_extension(ipython):
    """%load_ext xwarp: register the warp magics with this IPython shell."""
    from . import _engine

    share = data_dir()
    if share is None:
        raise ImportError("xwarp: the probe's shim (share/xwarp/shim) is not installed beside this package; "
                          "reinstall with pip install xwarp")
    guide = share / "references" / "mechanisms.md"
    exercises = share / "exercises.json"  # the lessons' exercises as shipped (%%warp_probe --exercise)
    _engine.register_magics(ipython, str(share / "shim"), _installed_text(guide), _installed_text(exercises))


def _installed_text(path, limit=4 << 20):
    """A data file of the install, read once: a regular file of at most `limit` bytes, never a
    FIFO or a device (which would hang or fill the kernel's start); "" otherwise, with why."""
    import stat
    import sys

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return ""
    except OSError as error:
        print(f"xwarp: {path}: {error.strerror or error}: not read", file=sys.stderr)
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            print(f"xwarp: {path} is not a regular file: not read", file=sys.stderr)
            return ""
        data = os.read(fd, limit + 1)
        if len(data) > limit:
            print(f"xwarp: {path} is larger than {limit >> 20} MiB: not read", file=sys.stderr)
            return ""
        return data.decode("utf-8", "replace")
    finally:
        os.close(fd)
