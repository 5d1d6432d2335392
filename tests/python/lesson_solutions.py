"""The solutions of the lessons' exercises (notebooks/*.ipynb, "## Exercise"). They live here, not
in the notebooks, so a learner meets the broken form first; test_lessons.py checks that each one
meets its exercise's --expect, and test_teaching_notebooks.py that each broken form does not."""

def stage(name, s):
    return f'''@wp.kernel
def {name}(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], {s})'''


SOLUTIONS = {
    # the factory's default and the decorator name one module, and both scale kernels exist before
    # the first launch (they already did): one module, built once
    "module_granularity": '''def make_scale(factor: float, module="image_ops"):
    @wp.kernel(module=module)
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * factor
    return scale


@wp.kernel(module="image_ops")
def offset(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


ops = [make_scale(2.0), make_scale(0.5)]
for k in ops + [offset]:
    wp.launch(k, dim=256, inputs=[a])''',
    # the stages in one named module, created before the first launch; the option and both
    # instances of scale in place before __main__ loads: two identities, each built once
    "capstone": '''from typing import Any

def make_stage(s: float, module="unique"):
    @wp.kernel(module=module)
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], s)
    return stage


@wp.kernel
def scale(x: wp.array(dtype=Any), f: Any):
    x[wp.tid()] = x[wp.tid()] * f


wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])
wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])
wp.set_module_options({"fast_math": True})

stages = [make_stage(s, module="stages") for s in (0.5, 1.5, 2.5)]
for step in stages:
    wp.launch(step, dim=64, inputs=[a, m])

x32 = wp.ones(64, dtype=wp.float32)
wp.launch(scale, dim=64, inputs=[x32, wp.float32(2.0)])
x64 = wp.ones(64, dtype=wp.float64)
wp.launch(scale, dim=64, inputs=[x64, wp.float64(2.0)])''',
    # both kernels exist before the module's first launch
    "cs1_kernels_after_load": f'''{stage("integrate", "0.5")}

{stage("damp", "0.25")}

wp.launch(integrate, dim=64, inputs=[a, m])
wp.launch(damp, dim=64, inputs=[a, m])''',
    # the leftover clear is gone: the warm pass loads what the cold pass cached
    "cs2_cache_thrown_away": f'''{stage("settle", "0.75")}

wp.launch(settle, dim=64, inputs=[a, m])''',
    # the option is set before the first load
    "cs3_option_after_load": f'''wp.set_module_options({{"fast_math": True}})

{stage("advance", "1.5")}

wp.launch(advance, dim=64, inputs=[a, m])
wp.launch(advance, dim=64, inputs=[a, m])''',
    # both instances registered before the first launch
    "cs6_generic_after_load": '''relax_f16 = wp.overload(relax, {"a": wp.array(dtype=wp.float16)})
relax_f32 = wp.overload(relax, {"a": wp.array(dtype=wp.float32)})

wp.launch(relax, dim=8, inputs=[a16])
wp.launch(relax, dim=8, inputs=[a32])''',
    # the setup's @wp.func already created the module, so a wp.config global here comes too late
    # (the next lesson's trap): each kernel carries the option itself, and Warp generates no
    # adjoint for it (wp.set_module_options({"enable_backward": False}) first would do as well)
    "cs10_unused_backward": f'''{stage("push", "0.5").replace("@wp.kernel", "@wp.kernel(enable_backward=False)")}

{stage("pull", "0.25").replace("@wp.kernel", "@wp.kernel(enable_backward=False)")}

wp.launch(push, dim=64, inputs=[a, m])
wp.launch(pull, dim=64, inputs=[a, m])''',
    # the global is set before the import that creates the library's module
    "option_not_arrived": '''import warp as wp

wp.config.enable_backward = False

import solver_lib

a = wp.zeros(64, dtype=wp.vec3)
m = wp.zeros(64, dtype=wp.mat33)
wp.launch(solver_lib.smooth, dim=64, inputs=[a, m])''',
    # the four modules built by two workers before the first launch
    "cs13_serial_builds": '''kernels = []
for n in range(4):
    @wp.kernel(module=f"exercise_mod_{n}")
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], 0.5)
    kernels.append(stage)

wp.force_load(device="cpu", modules=[k.module for k in kernels], block_dim=1, max_workers=2)
for k in kernels:
    wp.launch(k, dim=64, inputs=[a, m])''',
}

# The GPU lesson's exercise (gpu_mechanisms.ipynb), probed only on a CUDA device: one module per
# stable block_dim, the same launches, each module built once.
GPU_SOLUTIONS = {
    "gpu_mechanisms": '''@wp.kernel(module="bd64_ops")
def integrate(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 0.5

@wp.kernel(module="bd512_ops")
def collide(a: wp.array(dtype=float)):
    a[wp.tid()] = wp.max(a[wp.tid()], 0.0)

for step in range(3):
    wp.launch(integrate, dim=a.shape, inputs=[a], block_dim=64)
    wp.launch(collide, dim=a.shape, inputs=[a], block_dim=512)
wp.synchronize()''',
}
