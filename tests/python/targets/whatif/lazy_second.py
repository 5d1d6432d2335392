import warp as wp


@wp.kernel
def second(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0
