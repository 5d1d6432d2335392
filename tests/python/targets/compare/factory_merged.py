# "Fixed" by merging the three launches into one: fewer builds, but not the same work.
import warp as wp


@wp.kernel
def scale_all(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 24.0


a = wp.ones(32, dtype=float)
wp.launch(scale_all, dim=32, inputs=[a])
print(float(a.numpy().sum()))
