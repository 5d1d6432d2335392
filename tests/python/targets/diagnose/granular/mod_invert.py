import warp as wp


@wp.kernel
def invert(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 1.0 - a[i]
