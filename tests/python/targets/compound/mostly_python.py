"""compile-small-share: one small build, then 22 s of work that is not compilation (a stand-in
for data loading), so compile time is a small share of the run."""
import time

import warp as wp


@wp.kernel
def step(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


a = wp.zeros(64, dtype=float)
wp.launch(step, dim=64, inputs=[a])
wp.synchronize()
time.sleep(22.0)
print("ok", a.numpy()[0])
