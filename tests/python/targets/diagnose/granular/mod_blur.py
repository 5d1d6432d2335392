import warp as wp


@wp.kernel
def blur(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 0.5 * a[i] + 0.25
