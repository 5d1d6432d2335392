import warp as wp


@wp.kernel
def clamp01(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.clamp(a[i], 0.0, 1.0)
