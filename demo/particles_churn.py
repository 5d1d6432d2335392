"""A small particle simulation that builds its Warp module twice.

`collide` is defined inside `main()`, after `integrate` was first launched. Defining a
kernel changes the module's identity (its live kernel set), so Warp codegens and compiles
the whole module again, `integrate` included. particles_fixed.py is the same program with
both kernels at module scope.
"""

import numpy as np
import warp as wp


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    v[i] = v[i] + wp.vec3(0.0, -9.8, 0.0) * dt
    x[i] = x[i] + v[i] * dt


def main():
    n = 4096
    rng = np.random.default_rng(42)
    x = wp.array(rng.random((n, 3)), dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)

    for _ in range(20):
        wp.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0])

    # Collision handling was added later in the program's life, next to where it is used.
    @wp.kernel
    def collide(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        if x[i][1] < 0.0:
            x[i] = wp.vec3(x[i][0], 0.0, x[i][2])
            v[i] = wp.vec3(v[i][0], -0.5 * v[i][1], v[i][2])

    for _ in range(20):
        wp.launch(integrate, dim=n, inputs=[x, v, 1.0 / 60.0])
        wp.launch(collide, dim=n, inputs=[x, v])

    print("lowest particle:", float(x.numpy()[:, 1].min()))


if __name__ == "__main__":
    main()
