# parallel-preload does not pay: the second module is imported only after the first launch, so
# a preload at the first launch finds one module to build and nothing to overlap it with.
import warp as wp


@wp.kernel
def first(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


a = wp.zeros(64, dtype=float)
wp.launch(first, dim=64, inputs=[a])

import lazy_second  # noqa: E402  (imported late on purpose: a plugin loaded on demand)

wp.launch(lazy_second.second, dim=64, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
