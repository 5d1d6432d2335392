import warp as wp


@wp.kernel
def sharpen(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 2.0 * a[i] - 0.5
