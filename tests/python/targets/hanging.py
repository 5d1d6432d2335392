# Starts a grandchild, records its pid and its own where the test says, then hangs.
import os
import subprocess
import sys
import time

pid_file = sys.argv[1]
child = subprocess.Popen(["sleep", "600"])
with open(pid_file + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child.pid}\n")
os.replace(pid_file + ".tmp", pid_file)
time.sleep(600)
