# Run as `python -m pkg_app`.
import warp as wp


@wp.kernel
def fill(a: wp.array(dtype=float)):
    a[wp.tid()] = 3.0


a = wp.zeros(8, dtype=float)
wp.launch(fill, dim=8, inputs=[a])
print("pkg_app", float(a.numpy().sum()))
