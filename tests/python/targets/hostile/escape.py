"""Leaves two processes running in sessions of their own: fork -> setsid -> fork -> exec, and a
Popen with start_new_session. Neither is in the target's process group."""
import os
import subprocess

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "1007"])
    os._exit(0)
os.waitpid(pid, 0)
subprocess.Popen(["sleep", "1008"], start_new_session=True)
print("left two sleepers behind")
