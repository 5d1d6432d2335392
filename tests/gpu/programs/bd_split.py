# CS-5 fixed: one named module per stable block_dim; the same launches.
import warp as wp


@wp.kernel(module="ops_bd128")
def scale(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel(module="ops_bd256")
def shift(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


a = wp.zeros(1 << 20, dtype=float, device="cuda:0")
wp.launch(scale, dim=a.shape, inputs=[a], block_dim=128)
wp.launch(shift, dim=a.shape, inputs=[a], block_dim=256)
wp.synchronize()
