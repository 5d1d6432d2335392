"""hash-thrash: a module option switched on for one launch and back off, so the module's hash
goes A -> B -> A (CS-3 on the way out, a cached reload on the way back)."""
import warp as wp


@wp.kernel
def blend(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.5 + 0.5


a = wp.ones(128, dtype=float)
wp.launch(blend, dim=128, inputs=[a])
wp.set_module_options({"fast_math": True})
wp.launch(blend, dim=128, inputs=[a])
wp.set_module_options({"fast_math": False})
wp.launch(blend, dim=128, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
