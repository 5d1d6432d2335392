# A program that differentiates: backward code is used (no CS-10).
import warp as wp

@wp.func
def churn(v: wp.vec3, m: wp.mat33, s: float):
    for j in range(6):
        v = m @ v + wp.cross(v, wp.vec3(1.0, 2.0, 3.0)) * wp.sin(s + float(j))
        v = wp.normalize(v) * wp.length(v + wp.vec3(0.5))
    return v


@wp.kernel
def loss(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, wp.length(churn(a[i], m[i], 1.0)))


a = wp.ones(8, dtype=wp.vec3, requires_grad=True)
m = wp.zeros(8, dtype=wp.mat33, requires_grad=True)
out = wp.zeros(1, dtype=float, requires_grad=True)
tape = wp.Tape()
with tape:
    wp.launch(loss, dim=8, inputs=[a, m, out])
tape.backward(loss=out)
print(a.grad.numpy()[0])
