# CS-6: a generic kernel meets float64, then float16, after its module loaded with float32.
from typing import Any

import warp as wp

# Each build self-contained (no shared precompiled header): the savings test compares the
# broken and fixed programs' module work, which a header written once per thread would swamp
# with its own noise on a small machine.
wp.config.use_precompiled_headers = False

@wp.kernel
def relax(a: wp.array(dtype=Any)):
    i = wp.tid()
    x = a[i]
    for j in range(12):
        x = wp.sin(x) * a.dtype(0.9) + wp.cos(x * a.dtype(1.5)) + wp.sqrt(wp.abs(x) + a.dtype(1.0))
        x = wp.exp(-x * x) + wp.tanh(x) * a.dtype(0.3) + wp.log(wp.abs(x) + a.dtype(2.0))
        x = wp.atan2(x, a.dtype(1.2)) + wp.cosh(x * a.dtype(0.1)) - wp.floor(x) * a.dtype(0.01)
    a[i] = x


a32 = wp.zeros(8, dtype=wp.float32)
a64 = wp.zeros(8, dtype=wp.float64)
a16 = wp.zeros(8, dtype=wp.float16)
wp.launch(relax, dim=8, inputs=[a32])
wp.launch(relax, dim=8, inputs=[a64])  # a new instance after load: the module builds again
wp.launch(relax, dim=8, inputs=[a16])  # and again
