# backward-off pays: a forward-only program whose kernel is heavy math (its generated adjoint is
# as large again), built without the shared precompiled header so the kernel dominates the build.
import warp as wp

wp.config.use_precompiled_headers = False


@wp.kernel
def relax(a: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    for j in range(12):
        x = wp.sin(x) * 0.9 + wp.cos(x * 1.5) + wp.sqrt(wp.abs(x) + 1.0)
        x = wp.exp(-x * x) + wp.tanh(x) * 0.3 + wp.log(wp.abs(x) + 2.0)
        x = wp.atan2(x, 1.2) + wp.cosh(x * 0.1) - wp.floor(x) * 0.01
    a[i] = x


a = wp.zeros(64, dtype=float)
wp.launch(relax, dim=64, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
