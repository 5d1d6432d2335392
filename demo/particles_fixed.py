"""particles_churn.py with `collide` hoisted to module scope: one module identity, one build.

The kernel keeps its name and every launch stays the same (same order, dims, dtypes), so
`warp-probe compare` can credit the gain to compilation alone.
"""

import numpy as np
import warp as wp


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    v[i] = v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


@wp.kernel
def collide(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    if x[i][1] < 0.0:
        x[i] = wp.vec3(x[i][0], 0.0, x[i][2])
        v[i] = wp.vec3(v[i][0], -0.5 * v[i][1], v[i][2])


def main():
    n = 4096
    rng = np.random.default_rng(42)
    x = wp.array(rng.random((n, 3)), dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)

    for _ in range(20):
        wp.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0])

    for _ in range(20):
        wp.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0])
        wp.launch(collide, dim=n, inputs=[x, v])

    print("lowest particle:", float(x.numpy()[:, 1].min()))


if __name__ == "__main__":
    main()
