"""Several mechanisms in one program: a generic (Any-typed) kernel family in one module, its
instances created at their first launch (CS-6), launched at two block_dims with CPU blocks on
(CS-5: `scale` is built at 128 but only launched at 64), then with a second dtype at one of
them; and four one-kernel modules beside it, two launched at each block_dim (not CS-4: merged,
a module builds at every block_dim its kernels launch at)."""
from typing import Any

import warp as wp

import small_blur
import small_clamp
import small_invert
import small_sharpen

wp.config.enable_cpu_blocks = True
wp.init()


@wp.kernel
def fill(a: wp.array(dtype=Any), v: Any):
    a[wp.tid()] = v


@wp.kernel
def scale(a: wp.array(dtype=Any), s: Any):
    i = wp.tid()
    a[i] = a[i] * s


N = 256
a32 = wp.zeros(N, dtype=wp.float32)
a64 = wp.zeros(N, dtype=wp.float64)
wp.launch(fill, dim=N, inputs=[a32, wp.float32(1.0)], block_dim=64)
wp.launch(scale, dim=N, inputs=[a32, wp.float32(2.0)], block_dim=64)
wp.launch(fill, dim=N, inputs=[a32, wp.float32(1.0)], block_dim=128)
# a second dtype, after the module loaded at both block_dims, launched at one of them
wp.launch(fill, dim=N, inputs=[a64, wp.float64(1.0)], block_dim=64)
wp.launch(scale, dim=N, inputs=[a64, wp.float64(2.0)], block_dim=64)
small_blur.run(a32, 64)
small_clamp.run(a32, 128)
small_invert.run(a32, 64)
small_sharpen.run(a32, 128)
wp.synchronize()
print("ok", a32.numpy()[0], a64.numpy()[0])
