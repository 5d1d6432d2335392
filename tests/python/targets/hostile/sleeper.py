"""Starts a sleeper in a session of its own, says so on a file the test watches, then waits:
the test kills the probe with SIGKILL while this runs."""
import os
import subprocess
import sys
import time

subprocess.Popen(["sleep", "1011"], start_new_session=True)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
time.sleep(120)
