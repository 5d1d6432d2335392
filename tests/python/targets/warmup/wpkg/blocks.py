"""One module launched at two block_dims: two identities, two builds."""
import warp as wp


@wp.kernel
def add_one(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    v = a[i]
    for _ in range(8):
        v = wp.sin(v) + 1.0
    a[i] = v


def run(a, block_dim):
    wp.launch(add_one, dim=a.shape[0], inputs=[a], block_dim=block_dim)
