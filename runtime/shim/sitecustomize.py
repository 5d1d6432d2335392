# xwarp probe shim entry point.
#
# warp-probe puts this directory first on PYTHONPATH, so Python's `site` imports
# this file at start-up in every Python process of the measured command. It starts
# the recorder (only when the probe asked for it) and then runs the application's
# own sitecustomize, which this file would otherwise hide.
#
# Nothing here may change whether the target runs: every step is guarded.

import os as _os
import sys as _sys


def _xwarp_start():
    if not _os.environ.get("XWARP_RECORD_DIR"):
        return
    try:
        _here = _os.path.dirname(_os.path.abspath(__file__))
        if _here not in _sys.path:
            _sys.path.insert(0, _here)
        import xwarp_shim

        xwarp_shim.start()
    except Exception as exc:  # never break the target
        try:
            _sys.stderr.write(f"xwarp shim: recorder not started: {exc!r}\n")
        except Exception:
            pass


def _xwarp_chain():
    """Import the next `sitecustomize` on sys.path, the one this file shadows."""
    try:
        import importlib.machinery

        here = _os.path.dirname(_os.path.abspath(__file__))
        rest = [p for p in _sys.path if _os.path.abspath(p or ".") != here]
        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
        if spec is None or spec.loader is None:
            return
        # The module made as importlib.util.module_from_spec makes it, without importing
        # importlib.util: it pulls in contextlib and collections, 3-4 ms of every measured
        # process's start-up (Debian's Python has a sitecustomize of its own to chain).
        module = spec.loader.create_module(spec) if hasattr(spec.loader, "create_module") else None
        if module is None:
            module = type(_sys)(spec.name)
        module.__spec__ = spec
        module.__loader__ = spec.loader
        if spec.has_location:
            module.__file__ = spec.origin
            if spec.cached:
                module.__cached__ = spec.cached
        _sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)
    except Exception as exc:
        # The application's sitecustomize raised: report it as Python would, then go on.
        try:
            _sys.stderr.write(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{type(exc).__name__}: {exc}\n")
        except Exception:
            pass


_xwarp_start()
_xwarp_chain()
