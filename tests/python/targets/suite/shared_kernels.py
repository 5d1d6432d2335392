"""Kernels several test files use: one module, built by the first test that launches one."""
import warp as wp


@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


@wp.kernel
def shift(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] + s
