"""A plain module with two kernels, heavy enough that its build is worth doing in parallel."""
import warp as wp


@wp.func
def wobble(x: float):
    y = x
    for k in range(12):
        y = wp.sin(y) * wp.cos(x + float(k)) + wp.sqrt(wp.abs(y) + 1.0)
    return y


@wp.kernel
def square(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = wobble(a[i] * a[i])


@wp.kernel
def total(a: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    wp.atomic_add(out, 0, wobble(a[wp.tid()]))
