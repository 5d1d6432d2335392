# A generic kernel meets a new dtype after its module loaded: a new overload, a new hash (CS-6).
from typing import Any

import warp as wp


@wp.kernel
def add_one(a: wp.array(dtype=Any)):
    i = wp.tid()
    a[i] = a[i] + a.dtype(1)


a32 = wp.zeros(8, dtype=wp.float32)
wp.launch(add_one, dim=8, inputs=[a32])

a64 = wp.zeros(8, dtype=wp.float64)
wp.launch(add_one, dim=8, inputs=[a64])  # float64 instance created here, after load
print(float(a32.numpy().sum()), float(a64.numpy().sum()))
