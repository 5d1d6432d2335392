import warp as wp


@wp.kernel
def invert(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.5 + 0.25


def run(a, block_dim):
    wp.launch(invert, dim=a.shape[0], inputs=[a], block_dim=block_dim)
