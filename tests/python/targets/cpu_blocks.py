"""CS-5 on the CPU: with enable_cpu_blocks on, one module launched at two block_dims builds twice."""
import warp as wp

wp.config.enable_cpu_blocks = True


@wp.kernel
def scale(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 2.0


@wp.kernel
def shift(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


a = wp.ones(256, dtype=float)
wp.launch(scale, dim=256, inputs=[a], block_dim=64)
wp.launch(shift, dim=256, inputs=[a], block_dim=128)
