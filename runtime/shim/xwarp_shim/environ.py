"""Cache-related environment variables (CS-2): the program's assignments, recorded with their
file:line (and held by the keep-cache lever), and pytest's current test as it is set."""

import os
import sys

from . import state
from .attribution import pytest_set

# -- cache-related environment variables (CS-2) ----------------------------------------------

WATCHED_ENV = ("CUDA_CACHE_DISABLE", "CUDA_CACHE_PATH", "CUDA_CACHE_MAXSIZE", "WARP_CACHE_PATH")


def hook_environ(rec):
    """Record assignments of the cache variables through os.environ, with the user's line, and
    CUDA_CACHE_DISABLE when the command's environment already set it. The probe sets
    CUDA_CACHE_PATH and WARP_CACHE_PATH itself, so only the program's own changes count."""
    value = os.environ.get("CUDA_CACHE_DISABLE")
    if value:
        rec.emit_or_hold(
            {"type": "call", "function": "environ", "args": {"name": "CUDA_CACHE_DISABLE", "value": value, "inherited": True},
             "file": None, "line": None}
        )
    base = type(os.environ)

    def __setitem__(self, key, value):
        if key in WATCHED_ENV and state.lever is not None and state.lever.holds_environ(key):
            state.lever.count("environment_assignments_held")
            return
        base.__setitem__(self, key, value)
        if key == "PYTEST_CURRENT_TEST":
            pytest_set(key, value, sys._getframe(1))
        elif key in WATCHED_ENV:
            try:
                f = sys._getframe(1)
                rec.emit_or_hold(
                    {"type": "call", "function": "environ", "args": {"name": key, "value": str(value)},
                     "file": f.f_code.co_filename, "line": f.f_lineno}
                )
            except Exception:
                pass

    def __delitem__(self, key):
        base.__delitem__(self, key)
        if key == "PYTEST_CURRENT_TEST":  # pytest's runner pops it after each test's teardown
            try:
                f = sys._getframe(1)
                while f is not None and f.f_code.co_name in ("pop", "__delitem__"):
                    f = f.f_back
                pytest_set(key, None, f)
            except Exception:
                pass

    try:
        os.environ.__class__ = type("XwarpRecordedEnviron", (base,), {"__setitem__": __setitem__, "__delitem__": __delitem__})
    except TypeError:
        return False
    return True
