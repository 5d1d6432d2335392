"""A generic kernel: each dtype it is launched with is an instance the module's hash folds in."""
from typing import Any

import warp as wp


@wp.func
def smooth(x: Any, s: Any):
    y = x * s
    for _ in range(12):
        y = y * s + x * wp.abs(y)
    return y


@wp.kernel
def scale(a: wp.array(dtype=Any), s: Any):
    i = wp.tid()
    a[i] = smooth(a[i], s)
