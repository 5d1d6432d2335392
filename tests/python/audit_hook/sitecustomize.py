"""Installed in every Python process of a warm-up file that tests/python/test_warmup_hostile.py
runs (this folder goes first on PYTHONPATH): a sys.addaudithook that blocks and logs every event a
warm-up file has no business raising: a process other than its own workers, a socket, a write
outside Warp's kernel cache and the temporary folder, and exec of code that is not from a file
on disk (or the file's own filtered entry definitions). The log goes to $XWARP_AUDIT_LOG, through
a descriptor opened before the hook (writing it raises no event)."""

import os
import sys

_LOG = os.environ.get("XWARP_AUDIT_LOG")
_ALLOWED = [os.path.realpath(p) for p in os.environ.get("XWARP_AUDIT_WRITABLE", "").split(os.pathsep) if p]
_ALLOWED_WRITES = tuple(p + os.sep for p in _ALLOWED)
_WARMUP_FILE = os.path.realpath(os.environ.get("XWARP_AUDIT_FILE", "/nonexistent"))
_LIBRARIES = tuple({os.path.dirname(os.__file__) + os.sep, "<frozen"}
                   | {p + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages"))})


def _install():
    if not _LOG:
        return
    fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    executable = os.path.realpath(sys.executable)
    inside = [False]

    def report(event, detail):
        os.write(fd, f"{os.getpid()} {event} {detail!r}\n".encode("utf-8", "backslashreplace"))
        raise RuntimeError(f"audit: {event} is not something a warm-up file may do")

    def writable(path):
        try:
            real = os.path.realpath(os.fsdecode(path))
        except Exception:
            return False
        # the results file is written into a new file beside it (.results-*) and renamed over it
        beside = os.path.basename(real).startswith(".results-") and any(
            os.path.dirname(real) == os.path.dirname(p) and not os.path.isdir(p) for p in _ALLOWED)
        return real == "/dev/null" or real in _ALLOWED or real.startswith(_ALLOWED_WRITES) or beside

    def hook(event, args):
        if inside[0]:
            return
        inside[0] = True
        try:
            if event == "subprocess.Popen":
                executable_arg, argv = args[0], list(args[1] or [])
                own_worker = (len(argv) >= 3 and os.path.realpath(os.fsdecode(argv[0])) == executable
                              and os.path.realpath(os.fsdecode(argv[1])) == _WARMUP_FILE and argv[2] == "--serve")
                # Warp's start-up asks platform.processor(), which runs uname -p
                platform_query = argv == ["uname", "-p"]
                if not own_worker and not platform_query:
                    report(event, argv[:4])
            elif event in ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn",
                           "webbrowser.open") or event.startswith("socket.") or event.startswith("ftplib.") \
                    or event.startswith("http.client.") or event.startswith("smtplib.") or event.startswith("urllib."):
                report(event, args[:2])
            elif event == "open":
                path, mode, flags = args[0], args[1], args[2]
                writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
                    isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC))
                if writing and isinstance(path, (str, bytes, os.PathLike)) and not writable(path):
                    report(event, (path, mode))
            elif event in ("os.remove", "os.rmdir", "os.rename", "os.truncate", "shutil.rmtree", "os.chmod", "os.symlink",
                           "os.link"):
                # a path relative to a directory descriptor (shutil.rmtree's) is read from it
                fds = [a for a in args[1:] if type(a) is int and a >= 0]
                base = None
                if fds:
                    try:
                        base = os.readlink(f"/proc/self/fd/{fds[-1]}")
                    except OSError:
                        base = None
                paths = [os.path.join(base, os.fsdecode(a)) if base else a
                         for a in args if isinstance(a, (str, bytes, os.PathLike))]
                if not all(writable(p) for p in paths):
                    report(event, paths[:2])
            elif event == "exec":
                code = args[0]
                filename = getattr(code, "co_filename", "")
                from_file = isinstance(filename, str) and (os.path.isfile(filename) or filename.endswith("notebook_cell_warmup.py"))
                # the standard library and installed packages build code from text themselves
                # (namedtuple, dataclasses): an exec they make is theirs; one made from the
                # file's own code, or from a cell's, is not
                if not from_file:
                    try:
                        caller = sys._getframe(1).f_code.co_filename
                    except ValueError:
                        caller = "<no Python frame>"
                    if not caller.startswith(_LIBRARIES):
                        report(event, (filename, caller))
        finally:
            inside[0] = False

    sys.addaudithook(hook)


_install()
