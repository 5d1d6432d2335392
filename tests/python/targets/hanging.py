# Starts a grandchild, says so where the test says, then hangs. Both command lines hold that path,
# so the test finds them from outside (their pids are the run's PID namespace's, not the test's).
import os
import subprocess
import sys
import time

pid_file = sys.argv[1]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", pid_file])
with open(pid_file + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child.pid}\n")
os.replace(pid_file + ".tmp", pid_file)
time.sleep(600)
