# A program with no churn: one module identity, built once.
import warp as wp


@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


a = wp.ones(32, dtype=float)
for _ in range(5):
    wp.launch(scale, dim=32, inputs=[a, 2.0])
print("max", float(a.numpy().max()))
