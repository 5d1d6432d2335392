"""CS-1 through a kernel factory whose instances replace each other (k = make_stage(s) in a loop):
each new closure rebuilds the module, and because Warp hashes a callee in its caller's context
the callee's recorded hash moves too; the recorded redefinition says it was the kernel."""
import warp as wp


@wp.func
def churn(v: float, s: float):
    return v * s


def make_stage(s: float):
    @wp.kernel
    def stage(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = churn(a[i], s)

    return stage


a = wp.zeros(8, dtype=float)
for s in (1.0, 2.0, 3.0):
    k = make_stage(s)
    wp.launch(k, dim=8, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
