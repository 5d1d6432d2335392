"""dependency-change: a @wp.func the kernel calls is redefined after the module loaded; the
kernel's own source never changes."""
import warp as wp


@wp.func
def weight(x: float):
    return x * 0.5


@wp.kernel
def apply(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = weight(a[i])


a = wp.ones(128, dtype=float)
wp.launch(apply, dim=128, inputs=[a])


@wp.func
def weight(x: float):  # noqa: F811  (the redefinition is the point)
    return x * 0.25


wp.launch(apply, dim=128, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
