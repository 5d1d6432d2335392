"""The magics' engine (C++, libxwarp_engine.so) reached through ctypes: the library has a C
interface (include/xwarp/fronts/ipython/c_abi.h) and no CPython ABI, so one wheel serves every
CPython 3, as warp-lang's does. This module turns the library's callbacks into IPython's
(display, the user's namespace, the interrupt flag) and its statuses into Python exceptions."""

import ctypes
import json
import os
import threading

C_ABI_VERSION = 1

_OK, _USAGE, _EXPECTATION, _PROGRAM_FAILED, _INTERRUPTED, _INTERNAL, _NO_SESSION = range(7)


class WarpProbeReport(dict):
    """A warp-probe report: dict access to the JSON report; shows as HTML in notebooks."""

    def __init__(self, data, html):
        super().__init__(data)
        self._html = html

    def _repr_html_(self):
        return self._html


class WarpProbeUsageError(Exception):
    """A %%warp_probe magic was given options it cannot use; the message is its usage."""

    def _render_traceback_(self):
        return ["WarpProbeUsageError: " + str(self)]


class WarpProbeExpectationNotMet(AssertionError):
    """%%warp_probe --strict: the run did not meet its --expect."""

    def _render_traceback_(self):
        return ["WarpProbeExpectationNotMet: " + str(self)]


class WarpProbeProgramFailed(RuntimeError):
    """%%warp_probe: the probed program failed in every sample (see the report above)."""

    def _render_traceback_(self):
        return ["WarpProbeProgramFailed: " + str(self)]


_INTERRUPT_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
_SHOW_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int)
_BIND_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p)


class _Host(ctypes.Structure):
    _fields_ = [
        ("context", ctypes.c_void_p),
        ("working_directory", ctypes.c_char_p),
        ("python_executable", ctypes.c_char_p),
        ("interrupt_requested", _INTERRUPT_FN),
        ("show", _SHOW_FN),
        ("bind_variable", _BIND_FN),
    ]


def library_path():
    """The engine library: $XWARP_ENGINE_LIBRARY (a build tree's, for the tests), else the one
    installed in this package."""
    given = os.environ.get("XWARP_ENGINE_LIBRARY")
    if given:
        return given
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libxwarp_engine.so")


_library = None
_library_lock = threading.Lock()


def load_library():
    """The engine library, loaded once, its C interface checked and its functions typed."""
    global _library
    with _library_lock:
        if _library is not None:
            return _library
        path = library_path()
        try:
            lib = ctypes.CDLL(path)  # CDLL: the GIL is released while a magic runs
        except OSError as error:
            raise ImportError(f"xwarp: the engine library {path} could not be loaded ({error}); "
                              "reinstall with pip install xwarp") from None
        lib.xwarp_c_abi_version.restype = ctypes.c_int
        found = lib.xwarp_c_abi_version()
        if found != C_ABI_VERSION:
            raise ImportError(f"xwarp: the engine library {path} has C interface {found}, this package needs "
                              f"{C_ABI_VERSION}: reinstall with pip install xwarp")
        lib.xwarp_version.restype = ctypes.c_char_p
        lib.xwarp_start_session.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
        lib.xwarp_start_session.restype = ctypes.c_int
        lib.xwarp_magic_names.restype = ctypes.c_void_p
        lib.xwarp_run_magic.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_Host),
                                        ctypes.POINTER(ctypes.c_void_p)]
        lib.xwarp_run_magic.restype = ctypes.c_int
        lib.xwarp_free.argtypes = [ctypes.c_void_p]
        lib.xwarp_free.restype = None
        _library = lib
        return lib


def _taken(lib, pointer):
    """A string the library allocated, as Python text, freed."""
    if not pointer:
        return ""
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib.xwarp_free(pointer)


def _encoded(text):
    return text.encode("utf-8", "surrogateescape")


def _publish(bundle, display_id, update):
    from IPython import display

    if not display_id:
        display.display(bundle, raw=True)
    elif update:
        display.update_display(bundle, raw=True, display_id=display_id)
    else:
        display.display(bundle, raw=True, display_id=display_id)


class _Call:
    """One magic's run: the callbacks it hands the library, and what they saw. A callback never
    lets an exception out (ctypes would print and drop it): the first is kept and raised once
    the library returns."""

    def __init__(self, shell):
        self.shell = shell
        self.interrupted = False
        self.error = None
        self.callbacks = (_INTERRUPT_FN(self._interrupt_requested), _SHOW_FN(self._show), _BIND_FN(self._bind))

    def host(self):
        import sys

        interrupt, show, bind = self.callbacks
        return _Host(None, _encoded(os.getcwd()), _encoded(sys.executable), interrupt, show, bind)

    def _interrupt_requested(self, _context):
        # Python's SIGINT handler runs on the main thread when Python code does: here, where the
        # magic polls. Its KeyboardInterrupt is kept and raised when the library has cleaned up.
        if self.interrupted:
            return 1
        try:
            if threading.current_thread() is threading.main_thread():
                ctypes.pythonapi.PyErr_CheckSignals()
        except KeyboardInterrupt:
            self.interrupted = True
        except BaseException as error:  # noqa: BLE001 - kept and raised after the call
            self.error = self.error or error
            return 1
        return 1 if self.interrupted else 0

    def _show(self, _context, bundle, display_id, update):
        try:
            _publish(json.loads(bundle.decode("utf-8", "replace")), display_id.decode("utf-8", "replace"), bool(update))
        except KeyboardInterrupt:
            self.interrupted = True
        except BaseException as error:  # noqa: BLE001
            self.error = self.error or error

    def _bind(self, _context, name, report, html):
        try:
            value = WarpProbeReport(json.loads(report.decode("utf-8", "replace")), html.decode("utf-8", "replace"))
            self.shell.user_ns[name.decode("utf-8", "replace")] = value
        except KeyboardInterrupt:
            self.interrupted = True
        except BaseException as error:  # noqa: BLE001
            self.error = self.error or error


def run_magic(shell, name, line, cell):
    """Runs magic `name` (cell None: as a line magic) and raises what its status means."""
    lib = load_library()
    call = _Call(shell)
    host = call.host()
    message = ctypes.c_void_p()
    status = lib.xwarp_run_magic(_encoded(name), _encoded(line or ""), None if cell is None else _encoded(cell),
                                 ctypes.byref(host), ctypes.byref(message))
    text = _taken(lib, message.value)
    if status == _INTERRUPTED or call.interrupted:
        raise KeyboardInterrupt
    if call.error is not None:
        raise call.error
    if status == _OK:
        return None
    if status == _PROGRAM_FAILED:
        raise WarpProbeProgramFailed(text)
    if status == _EXPECTATION:
        raise WarpProbeExpectationNotMet(text)
    if status == _USAGE:
        raise WarpProbeUsageError(text)
    raise RuntimeError(text or f"xwarp: magic {name} ended with status {status}")


def register_magics(shell, shim_dir, guide_text, exercises_text=""):
    """Registers %%warp_probe and the other warp magics with an IPython shell (one session per
    process, as in the xwarp kernel: %load_ext twice keeps the runs)."""
    lib = load_library()
    if lib.xwarp_start_session(_encoded(shim_dir), _encoded(guide_text), _encoded(exercises_text)) != 0:
        raise ImportError("xwarp: the engine library could not start its session")
    for entry in json.loads(_taken(lib, lib.xwarp_magic_names())):
        name = entry["name"]

        def magic(line, cell=None, _name=name):
            return run_magic(shell, _name, line, cell)

        magic.__name__ = name
        magic.__doc__ = f"xwarp magic %{name}: run it with --help for its options"
        shell.register_magic_function(magic, entry["kind"], name)
