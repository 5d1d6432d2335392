"""A program that plants what would hang or exhaust a reader in its own records folder: a FIFO
and a link to /dev/zero, each named as a record file."""
import os

import warp as wp

folder = os.environ.get("XWARP_RECORD_DIR")
if folder:
    os.mkfifo(os.path.join(folder, "proc-1-1.jsonl"))
    os.symlink("/dev/zero", os.path.join(folder, "proc-2-2.jsonl"))


@wp.kernel
def k(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


wp.launch(k, dim=1, inputs=[wp.zeros(1, dtype=float)])
print("planted", os.getppid() != 1)
