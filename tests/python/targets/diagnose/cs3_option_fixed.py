# CS-3 fixed: the option is set before the first load.
import warp as wp

# Each build self-contained (no shared precompiled header): the savings test compares the
# broken and fixed programs' module work, which a header written once per thread would swamp
# with its own noise on a small machine.
wp.config.use_precompiled_headers = False

@wp.func
def churn(v: wp.vec3, m: wp.mat33, s: float):
    for j in range(6):
        v = m @ v + wp.cross(v, wp.vec3(1.0, 2.0, 3.0)) * wp.sin(s + float(j))
        v = wp.normalize(v) * wp.length(v + wp.vec3(0.5))
    return v


@wp.kernel
def stage_a(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 1.0)


wp.set_module_options({"fast_math": True})
a = wp.zeros(8, dtype=wp.vec3)
m = wp.zeros(8, dtype=wp.mat33)
wp.launch(stage_a, dim=8, inputs=[a, m])
wp.launch(stage_a, dim=8, inputs=[a, m])
