# CS-4 grouped: the same four kernels in one module: one build.
import warp as wp


@wp.kernel
def blur(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 0.5 * a[i] + 0.25


@wp.kernel
def sharpen(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 2.0 * a[i] - 0.5


@wp.kernel
def clamp01(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.clamp(a[i], 0.0, 1.0)


@wp.kernel
def invert(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 1.0 - a[i]


a = wp.ones(64, dtype=float)
for k in (blur, sharpen, clamp01, invert):
    wp.launch(k, dim=64, inputs=[a])
print(float(a.numpy().sum()))
