# A kernel factory: three closure kernels, three launches.
import warp as wp


def make_scale(s: float):
    @wp.kernel
    def scale(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * s

    return scale


a = wp.ones(32, dtype=float)
for s in (2.0, 3.0, 4.0):
    wp.launch(make_scale(s), dim=32, inputs=[a])
print(float(a.numpy().sum()))
