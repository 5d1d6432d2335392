"""Where code lives: the installed packages' and the test runners' folders (never the user's
code), and the Python module a frame or file belongs to."""

import os
import sys


def site_prefixes():
    """Where installed packages live (inside the standard library's folder in a venv or pyenv)."""
    try:
        import sysconfig

        paths = sysconfig.get_paths()
        found = {paths.get("purelib"), paths.get("platlib")}
    except Exception:
        found = set()
    for entry in sys.path:
        if entry.endswith(("site-packages", "dist-packages")):
            found.add(entry)
    return tuple(os.path.join(p, "") for p in found if p)


RUNNER_PACKAGES = ("_pytest", "pytest", "pluggy", "xdist", "execnet")
runner_dirs = {}


def runner_prefixes():
    """The folders of the test runners imported so far (looked up as they appear)."""
    if len(runner_dirs) < len(RUNNER_PACKAGES):
        for name in RUNNER_PACKAGES:
            if name not in runner_dirs:
                file = getattr(sys.modules.get(name), "__file__", None)
                if isinstance(file, str):
                    runner_dirs[name] = os.path.dirname(os.path.abspath(file)) + os.sep
    return tuple(runner_dirs.values())


def caller_module(frame):
    """The Python module Warp would resolve for a call made from `frame`, as an object with
    __name__ (which every Warp version accepts for module=)."""
    import types

    name = frame.f_globals.get("__name__")
    if not name:
        spec = frame.f_globals.get("__spec__")
        name = spec.name if spec is not None else None
    module = sys.modules.get(name) if name else None
    if module is not None and getattr(module, "__dict__", None) is frame.f_globals:
        return module
    return types.SimpleNamespace(__name__=name)


def user_module_name(file):
    # set_module_options(module=None) targets the caller's Python module: its __name__.
    for mod in list(sys.modules.values()):
        if getattr(mod, "__file__", None) == file:
            return mod.__name__
    return None
