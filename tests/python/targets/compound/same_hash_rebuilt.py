"""same-hash-rebuilt: the module is unloaded and the kernel cache cleared between two launches,
so the same identity compiles twice in one process."""
import warp as wp


@wp.kernel
def decay(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * 0.9


a = wp.ones(128, dtype=float)
wp.launch(decay, dim=128, inputs=[a])
wp.synchronize()
wp.get_module(__name__).unload()
wp.clear_kernel_cache()
wp.launch(decay, dim=128, inputs=[a])
wp.synchronize()
print("ok", a.numpy()[0])
