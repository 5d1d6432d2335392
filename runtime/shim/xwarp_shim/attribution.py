"""Which test is running: pytest's current test (from its runner, or inherited from the parent
process) and unittest's, so that each build and each first launch of a module is charged to
the test that paid for it (test_use records)."""

import os
import sys


# The test running in this process, each from where its runner keeps it, never decided once:
# pytest's node id as pytest's own runner sets PYTEST_CURRENT_TEST (the environment hook sees the
# assignment and checks who made it: a value the program wrote is no test), the unittest test
# TestCase.run is running (wrapped when unittest.case is imported, before or after Warp), and the
# test whose process started this one (the id it inherited). None outside any test.
inherited_test = os.environ.get("PYTEST_CURRENT_TEST")
inherited_name = inherited_test.rsplit(" (", 1)[0] if isinstance(inherited_test, str) and inherited_test else None
pytest_now = [None]
unittest_now = [None]
TEST_USE_CAP = 20000  # test_use records a process writes at most


def pytest_set(key, value, frame):
    """Called by the environment hook for PYTEST_CURRENT_TEST: taken only from pytest's own runner,
    whose frame holds the item (its node id lacks its file under --pyargs: the file is added)."""
    try:
        code = frame.f_code
        if code.co_name == "_update_current_test_var" and "_pytest" in code.co_filename:
            if not (isinstance(value, str) and value):
                pytest_now[0] = None
                return
            nodeid = value.rsplit(" (", 1)[0]
            if nodeid.startswith("::"):
                path = getattr(frame.f_locals.get("item"), "path", None)
                if path is not None:
                    nodeid = test_file(os.fspath(path)) + nodeid
            pytest_now[0] = nodeid
    except Exception:
        pass


def test_file(path):
    """A test file as a test id names it: relative to the current folder when it is in it."""
    try:
        rel = os.path.relpath(path)
        return path if rel.startswith(os.pardir) else rel
    except ValueError:
        return path


def unittest_id(case):
    """A unittest test's id, whole like pytest's (path/to/test_x.py::Class::test), so that a suite's
    tests read the same whichever runner ran them; its own id() when its file is unknown."""
    cls = type(case)
    module = sys.modules.get(getattr(cls, "__module__", ""))
    file = getattr(module, "__file__", None)
    method = getattr(case, "_testMethodName", None)
    if isinstance(file, str) and isinstance(method, str):
        return f"{test_file(file)}::{cls.__qualname__}::{method}"
    name = case.id()
    return name if isinstance(name, str) else None


def current_test():
    """The test that is running, for a load (never on the launch path): test_now(), else the id of
    a unittest.TestCase whose method is on the stack (a test whose run() began before unittest was
    watched)."""
    now = test_now()
    if now is not None:
        return now
    unittest = sys.modules.get("unittest")
    case = getattr(unittest, "TestCase", None)
    if case is None:
        return None
    f = sys._getframe(2)
    while f is not None:
        code = f.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            owner = f.f_locals.get("self")
            if isinstance(owner, case):
                try:
                    return unittest_id(owner)
                except Exception:
                    return None
        f = f.f_back
    return None


def watch_unittest():
    """Wraps unittest's TestCase.run so that a launch knows its test in one list read. What the
    test does is unchanged; an id() that is not a string is no test name."""
    case = getattr(sys.modules.get("unittest.case"), "TestCase", None)
    run = getattr(case, "run", None)
    if run is None or getattr(run, "_xwarp_watch", False):
        return

    def watched_run(self, *args, **kwargs):
        previous = unittest_now[0]
        try:
            unittest_now[0] = unittest_id(self)
        except Exception:
            pass
        try:
            return run(self, *args, **kwargs)
        finally:
            unittest_now[0] = previous

    watched_run._xwarp_watch = True
    watched_run.__wrapped__ = run
    watched_run.__doc__ = getattr(run, "__doc__", None)
    case.run = watched_run


def test_now():
    """The test running now, on the launch path: three list reads."""
    return pytest_now[0] or unittest_now[0] or inherited_name


def note_test_use(rec, test, module, device):
    """A test's first launch of a module on a device: who reused what another test paid for."""
    try:
        use = (test, module, device)
        uses = rec.test_uses
        if use in uses or len(uses) >= TEST_USE_CAP:
            return
        uses.add(use)
        rec.emit({"type": "call", "function": "test_use", "args": {"test": test, "module": module, "device": device},
                  "file": None, "line": None})
    except Exception:
        pass
