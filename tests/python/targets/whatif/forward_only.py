# backward-off pays: a forward-only program of three kernels of heavy math (each one's generated
# adjoint is as large again), built without the shared precompiled header so the kernels
# dominate the build. Three, not one: the saving (about 40% of the build here) must stand well
# clear of a noisy machine's band, where one kernel's quarter did not.
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


@wp.kernel
def damp(a: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    for j in range(12):
        x = wp.cos(x) * 0.8 + wp.sin(x * 1.3) + wp.sqrt(wp.abs(x) + 2.0)
        x = wp.exp(-x * x * 0.5) + wp.tanh(x) * 0.2 + wp.log(wp.abs(x) + 3.0)
        x = wp.atan2(x, 1.1) + wp.sinh(x * 0.1) - wp.floor(x) * 0.02
    a[i] = x


@wp.kernel
def settle(a: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    for j in range(12):
        x = wp.sin(x * 0.7) + wp.cos(x) * 1.1 + wp.sqrt(wp.abs(x) + 3.0)
        x = wp.exp(-x * x * 0.3) + wp.tanh(x * 0.5) + wp.log(wp.abs(x) + 1.5)
        x = wp.atan2(x, 0.9) + wp.cosh(x * 0.2) - wp.floor(x) * 0.03
    a[i] = x


a = wp.zeros(64, dtype=float)
wp.launch(relax, dim=64, inputs=[a])
wp.launch(damp, dim=64, inputs=[a])
wp.launch(settle, dim=64, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
