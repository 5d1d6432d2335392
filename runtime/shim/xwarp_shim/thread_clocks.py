"""The loading thread's clocks that the machine's load does not move: its CPU time and how long it
waited for a CPU (the kernel's run-queue delay, /proc/thread-self/schedstat), and, where the kernel
counts them for this process, the user-space instructions it retired (perf_event_open). Warp builds
on the thread that loads: code generation, clang and NVRTC all run there."""

import os
import struct
import time

from . import state

_SCHEDSTAT = "/proc/thread-self/schedstat"

# perf_event_open's system call number, by machine; another machine counts no instructions.
_PERF_SYSCALL = {"x86_64": 298, "aarch64": 241}
_PERF_TYPE_HARDWARE = 0
_PERF_COUNT_HW_INSTRUCTIONS = 1
_PERF_ATTR_SIZE = 128
# perf_event_attr's flag bits: exclude_kernel (5) and exclude_hv (6): user space only, which a
# process may count of itself where perf_event_paranoid is 2 (the default).
_PERF_FLAGS = (1 << 5) | (1 << 6)

# None until the first thread tried; False once the kernel refused (no counter in this VM, no
# permission): no other thread tries again.
_perf_usable = None


def _schedstat():
    """(CPU ns, run-queue wait ns) of the calling thread, or None."""
    try:
        with open(_SCHEDSTAT, "rb") as f:
            fields = f.read().split()
        return int(fields[0]), int(fields[1])
    except Exception:
        return None


def _open_counter():
    global _perf_usable
    try:
        import ctypes

        number = _PERF_SYSCALL.get(os.uname().machine)
        if number is None:
            _perf_usable = False
            return -1
        attr = bytearray(_PERF_ATTR_SIZE)
        struct.pack_into("IIQ", attr, 0, _PERF_TYPE_HARDWARE, _PERF_ATTR_SIZE, _PERF_COUNT_HW_INSTRUCTIONS)
        struct.pack_into("Q", attr, 40, _PERF_FLAGS)
        buf = (ctypes.c_char * _PERF_ATTR_SIZE).from_buffer(attr)
        libc = ctypes.CDLL(None, use_errno=True)
        # pid 0, cpu -1: this thread, on whichever CPU it runs
        fd = libc.syscall(number, buf, 0, -1, -1, 0)
        _perf_usable = fd >= 0
        return fd
    except Exception:
        _perf_usable = False
        return -1


def _counter():
    """The calling thread's instruction counter's fd, opened at its first load, or None."""
    if _perf_usable is False:
        return None
    tls = state.tls
    held = getattr(tls, "perf_counter", None)
    # a counter the thread opened before a fork counts the parent's thread: open another
    if held is None or held[0] != os.getpid():
        held = (os.getpid(), _open_counter())
        tls.perf_counter = held
    return held[1] if held[1] >= 0 else None


def _instructions(fd):
    try:
        return struct.unpack("Q", os.read(fd, 8))[0]
    except Exception:
        return None


def start():
    """What the clocks read when a load starts."""
    fd = _counter()
    return (_schedstat(), time.thread_time_ns(), fd, _instructions(fd) if fd is not None else None)


def since(started):
    """The load's fields from the clocks: cpu_ms, cpu_wait_ms, instructions (those it could read)."""
    sched0, thread0, fd, instr0 = started
    out = {}
    sched1 = _schedstat() if sched0 is not None else None
    if sched0 is not None and sched1 is not None:
        out["cpu_ms"] = round((sched1[0] - sched0[0]) / 1e6, 3)
        out["cpu_wait_ms"] = round((sched1[1] - sched0[1]) / 1e6, 3)
    else:
        out["cpu_ms"] = round((time.thread_time_ns() - thread0) / 1e6, 3)
    if fd is not None and instr0 is not None:
        instr1 = _instructions(fd)
        if instr1 is not None:
            out["instructions"] = instr1 - instr0
    return out
