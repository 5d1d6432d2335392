"""Kernels in modules whose names carry a right-to-left override, terminal controls and a
newline, and a 200-character name."""
import warp as wp

NAMES = ["rtl\u202eevil", "ctl\x1b[2J\rname\nnext", "n" * 200]
kernels = []
for i, name in enumerate(NAMES):

    @wp.kernel(module=name)
    def k(a: wp.array(dtype=float)):
        a[wp.tid()] = 1.0

    kernels.append(k)

a = wp.zeros(4, dtype=float)
for k in kernels:
    wp.launch(k, dim=4, inputs=[a])
wp.synchronize()
