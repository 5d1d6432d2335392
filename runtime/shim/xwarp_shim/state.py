"""The shim's process-wide state, one place for what every module reads: the recorder,
the per-thread stacks (once Warp is imported), the active what-if lever and the file name the
wrappers claim (see wrapping.hide). Modules read these as `state.rec`, never copy them: they
are set after the modules are imported."""

import os
import time


# threading is imported when Warp is (which imports it anyway): a Python process of the command
# that never imports Warp pays as little for the shim as can be.
threading = None

perf = time.perf_counter

rec = None  # the process's recorder
# Started by the pytest plugin (start(observer=True)): it only records. No lever, no timed launch,
# no NVRTC trace, no log fallback and no results, whatever XWARP_ variables the environment holds:
# the plugin never changes the run it observes.
observer = False
# The probe's switches, read once as the process starts: a program that sets one in os.environ
# before it imports Warp (a notebook answer turning the recorder's hooks off) changes nothing.
force_log_fallback = False
nvrtc_trace = False
tls = None  # threading.local(), from the moment Warp is imported


# -- what-if levers -----------------------------------------------------------------------------
#
# In a what-if replay ($XWARP_WHATIF set) the active lever (levers.py, imported only then):
# the hooks call its methods, and the exit record carries what it changed.

lever = None


def load_lever():
    global lever
    raw = os.environ.get("XWARP_WHATIF")
    if not raw:
        return
    try:
        import json

        from . import levers

        lever = levers.make(json.loads(raw))
        lever.at_start()
    except Exception:
        lever = None


hook_filename = None  # the file the wrappers' code objects claim, inside Warp's package (wrapping.hide)
