# CS-5: one module launched at two block_dims builds twice, each time with both kernels.
import warp as wp


@wp.kernel
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel
def shift(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


a = wp.zeros(1 << 20, dtype=float, device="cuda:0")
wp.launch(scale, dim=a.shape, inputs=[a], block_dim=128)
wp.launch(shift, dim=a.shape, inputs=[a], block_dim=256)
wp.synchronize()
