# CS-11: nested constant loops that Warp unrolls (each within max_unroll) multiply the
# generated source; the build is the module's only one.
import warp as wp

wp.config.use_precompiled_headers = False


@wp.kernel
def stencil(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for j in range(8):
        for k in range(12):
            acc += wp.sin(a[i] * float(j) + float(k)) * wp.cos(float(k) + a[i])
    b[i] = acc


a = wp.ones(64, dtype=float)
b = wp.zeros(64, dtype=float)
wp.launch(stencil, dim=64, inputs=[a, b])
print(b.numpy()[0])
