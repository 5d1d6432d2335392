"""The solutions of the lessons' exercises (notebooks/*.ipynb, "## Exercise"). They live here, not
in the notebooks, so a learner meets the broken form first; test_lessons.py checks that each one
meets its exercise's --expect, and test_teaching_notebooks.py that each broken form does not.
CHEATS are the answers that skip the work (test_lesson_cheats.py checks each is not met)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("make_notebooks",
                                               Path(__file__).resolve().parents[2] / "notebooks" / "make_notebooks.py")
NOTEBOOKS = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(NOTEBOOKS)

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
wp.set_module_options({"optimization_level": 3})

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
    # refine in a named module of its own, given its option before its first launch: __main__
    # keeps the default, and each module builds once
    "cs3_option_after_load": f'''{stage("advance", "1.5")}


{NOTEBOOKS.REFINE.replace("@wp.kernel", '@wp.kernel(module="refine_ops")')}


wp.set_module_options({{"max_unroll": 32}}, module="refine_ops")
wp.launch(advance, dim=64, inputs=[a, m])
wp.launch(refine, dim=64, inputs=[a, m])''',
    # both instances registered, with every generic argument typed, before the first launch
    "cs6_generic_after_load": '''@wp.kernel
def axpy(x: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any):
    i = wp.tid()
    y[i] = alpha * x[i] + y[i]


wp.overload(axpy, [wp.array(dtype=wp.float32), wp.array(dtype=wp.float32), wp.float32])
wp.overload(axpy, {"x": wp.array(dtype=wp.float64), "y": wp.array(dtype=wp.float64), "alpha": wp.float64})

y32 = wp.zeros(8, dtype=wp.float32)
y64 = wp.zeros(8, dtype=wp.float64)
wp.launch(axpy, dim=8, inputs=[a32, y32, wp.float32(0.5)])
wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])''',
    # the setup's @wp.func already created the module, so a wp.config global here comes too late
    # (the next lesson's trap): each kernel carries the option itself, and Warp generates no
    # adjoint for it (wp.set_module_options({"enable_backward": False}) first would do as well)
    "cs10_unused_backward": f'''{stage("push", "0.5").replace("@wp.kernel", "@wp.kernel(enable_backward=False)")}

{stage("pull", "0.25").replace("@wp.kernel", "@wp.kernel(enable_backward=False)")}

wp.launch(push, dim=64, inputs=[a, m])
wp.launch(pull, dim=64, inputs=[a, m])''',
    # the global is set before `import scene_lib`, whose own import creates solver_lib's module
    "option_not_arrived": '''import warp as wp

wp.config.enable_backward = False  # before scene_lib imports solver_lib, which creates the module

import scene_lib

a, m = scene_lib.make_state(64)
wp.launch(scene_lib.smooth, dim=64, inputs=[a, m])''',
    # the four modules, the export's included, built by two workers before the loop
    "cs13_serial_builds": f'''{stage("collide", "0.25").replace("@wp.kernel", '@wp.kernel(module="collide_ops")')}


{stage("integrate", "0.5").replace("@wp.kernel", '@wp.kernel(module="integrate_ops")')}


{stage("constrain", "0.75").replace("@wp.kernel", '@wp.kernel(module="constrain_ops")')}


{stage("export", "1.25").replace("@wp.kernel", '@wp.kernel(module="export_ops")')}


wp.force_load(device="cpu", modules=[k.module for k in (collide, integrate, constrain, export)], block_dim=1,
              max_workers=2)
for step in range(2):
    for k in (collide, integrate, constrain):
        wp.launch(k, dim=64, inputs=[a, m])
wp.launch(export, dim=64, inputs=[a, m])''',
}

SOLUTIONS["cs5_block_dims_cpu"] = (
    # one named module per stable block_dim: each built once, at the block_dim of its launches
    NOTEBOOKS.CPU_BLOCKS_EXERCISE.replace("@wp.kernel\ndef integrate", '@wp.kernel(module="integrate_bd64")\ndef integrate')
    .replace("@wp.kernel\ndef collide", '@wp.kernel(module="collide_bd128")\ndef collide'))

# The GPU lesson's exercise (gpu_mechanisms.ipynb), probed only on a CUDA device: one module per
# stable block_dim, the same launches, each module built once.
# Other correct answers, each of which must be met as the solution is (an exercise that refuses a
# right answer teaches the wrong thing): Warp's own idiom for a kernel with options of its own.
ALTERNATIVES = {
    "cs3_option_after_load": [
        ("module=\"unique\" with module_options", f'''{stage("advance", "1.5")}


{NOTEBOOKS.REFINE.replace("@wp.kernel", '@wp.kernel(module="unique", module_options={"max_unroll": 32})')}


wp.launch(advance, dim=64, inputs=[a, m])
wp.launch(refine, dim=64, inputs=[a, m])'''),
    ],
}

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

# Answers that skip the work, each an edit of the solution: (what it does, text replaced, its
# replacement, the clause of the --expect that must say no). Every exercise gets the kinds that
# apply to it: a kernel swapped for another with the same arguments, a repeated launch, a kernel
# whose body does nothing, a deleted option. (The deleted launch is tried on every broken form:
# test_lessons.py.)
NOOP_KERNEL = """@wp.kernel
def smooth(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    pass


wp.launch(smooth, dim=64, inputs=[a, m])"""

COPIED_KERNEL = f"""{NOTEBOOKS.HEAVY}


@wp.kernel
def smooth(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 1.0)


wp.launch(smooth, dim=64, inputs=[a, m])"""

CHEATS = {
    "capstone": [
        ("the option deleted", 'wp.set_module_options({"optimization_level": 3})\n', "", "option"),
        ("one stage launched three times", "for s in (0.5, 1.5, 2.5)]", "for s in (0.5, 0.5, 0.5)]", "results"),
    ],
    "cs1_kernels_after_load": [
        ("integrate launched twice, damp dropped", "wp.launch(damp, dim=64", "wp.launch(integrate, dim=64", "kernels"),
    ],
    "cs2_cache_thrown_away": [
        ("a kernel that does nothing", "a[i] = churn(a[i], m[i], 0.75)", "a[i] = a[i]", "results"),
    ],
    "cs3_option_after_load": [
        ("the option deleted", 'wp.set_module_options({"max_unroll": 32}, module="refine_ops")\n', "", "option"),
        ("refine given a unique module (its option set on a module that never loads)", 'module="refine_ops")\ndef refine',
         'module="unique")\ndef refine', "option"),
        ("advance launched twice, refine dropped", "wp.launch(refine, dim=64", "wp.launch(advance, dim=64", "kernels"),
        ("advance moved into refine_ops too (it no longer keeps the default)", "@wp.kernel\ndef advance",
         '@wp.kernel(module="refine_ops")\ndef advance', "option"),
    ],
    "cs6_generic_after_load": [
        ("the float32 launch repeated in place of the float64 one",
         "wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])",
         "wp.launch(axpy, dim=8, inputs=[a32, y32, wp.float32(0.5)])", "workload"),
    ],
    "cs10_unused_backward": [
        ("the option deleted", "@wp.kernel(enable_backward=False)\ndef pull", "@wp.kernel\ndef pull", "backward-modules"),
        ("push launched twice, pull dropped", "wp.launch(pull, dim=64", "wp.launch(push, dim=64", "kernels"),
    ],
    "option_not_arrived": [
        ("the option deleted", "wp.config.enable_backward = False  # before scene_lib", "# before scene_lib",
         "backward-modules"),
        ("a kernel of the same name that does nothing",
         "wp.launch(scene_lib.smooth, dim=64, inputs=[a, m])", NOOP_KERNEL, "results"),
        # the same work and the same kernel name, built without backward code, while the library's
        # module never loads: only the clause on solver_lib's own options can say no
        ("the library's kernel copied into the cell under its name",
         "wp.launch(scene_lib.smooth, dim=64, inputs=[a, m])", COPIED_KERNEL, "option"),
    ],
    "module_granularity": [
        ("offset launched three times", "for k in ops + [offset]:", "for k in [offset, offset, offset]:", "kernels"),
        ("one factor used twice", "ops = [make_scale(2.0), make_scale(0.5)]", "ops = [make_scale(2.0), make_scale(2.0)]",
         "results"),
    ],
    "cs5_block_dims_cpu": [
        ("collide launched at block_dim 64 (one block_dim for both)", "inputs=[a], block_dim=128)",
         "inputs=[a], block_dim=64)", "workload"),
        ("integrate launched in place of collide", "wp.launch(collide, dim=1024", "wp.launch(integrate, dim=1024",
         "kernels"),
    ],
    "cs13_serial_builds": [
        ("the export left out of the preload", "for k in (collide, integrate, constrain, export)]",
         "for k in (collide, integrate, constrain)]", "launch-builds"),
        ("collide launched in place of the export", "wp.launch(export, dim=64", "wp.launch(collide, dim=64", "kernels"),
    ],
}

# Answers that make the measurement lie instead of doing the work: the broken form, edited to point
# Warp at a kernel cache the student keeps (STUDENT_CACHE: a folder the test makes and removes).
# (what it does, text replaced, its replacement, how many runs of it the class would try). Each
# run is not judged: a cache outside the probe's holds builds from before.
CACHE_CHEATS = {
    # the clear kept, the cache moved after it: the warm pass finds what the cold pass wrote there
    "cs2_cache_thrown_away": [
        ("the clear kept, the cache pointed at a folder of the student's",
         "wp.clear_kernel_cache()  # added while debugging a stale build",
         'wp.clear_kernel_cache()  # added while debugging a stale build\nwp.config.kernel_cache_dir = "STUDENT_CACHE"',
         1),
    ],
    # the broken cell twice on a kept cache: the second run builds nothing at either block_dim
    "cs5_block_dims_cpu": [
        ("the broken cell run twice on a kept cache", "@wp.kernel\ndef integrate",
         'wp.config.kernel_cache_dir = "STUDENT_CACHE"\n\n\n@wp.kernel\ndef integrate', 2),
        # the cache read at exit is the probe's again: only the cache in force at each load says
        # where the modules came from
        ("the broken cell twice on a kept cache, kernel_cache_dir set back as its last line", [
            ("@wp.kernel\ndef integrate", 'private_cache = wp.config.kernel_cache_dir\n'
             'wp.config.kernel_cache_dir = "STUDENT_CACHE"\n\n\n@wp.kernel\ndef integrate'),
            ("    wp.launch(collide, dim=1024, inputs=[a], block_dim=128)",
             "    wp.launch(collide, dim=1024, inputs=[a], block_dim=128)\nwp.config.kernel_cache_dir = private_cache")],
         None, 2),
    ],
}

# Answers that make the recorder lie: the broken form, edited so that what the program did differs
# from what a record read at its end would say. (what it does, [(text replaced, its replacement)],
# the clause that must say no.) Each is not met: the checker judges each launch at the block_dim
# it ran at, and counts a launch when Warp returned from it.
RECORDER_CHEATS = {
    "cs5_block_dims_cpu": [
        ("enable_cpu_blocks off for the launches and on again as the cell's last line", [
            ("@wp.kernel\ndef integrate", "wp.config.enable_cpu_blocks = False\n\n\n@wp.kernel\ndef integrate"),
            ("    wp.launch(collide, dim=1024, inputs=[a], block_dim=128)",
             "    wp.launch(collide, dim=1024, inputs=[a], block_dim=128)\nwp.config.enable_cpu_blocks = True")],
         "workload"),
    ],
    "cs6_generic_after_load": [
        ("the module's load patched to raise, the float64 launch caught and y64 filled with numpy", [
            ("wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])  # a second instance, after the first load",
             "def no_build(*args, **kwargs):\n    raise RuntimeError(\"not built\")\n\n\n"
             "axpy.module.load = no_build\n"
             "try:\n    wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])\n"
             "except RuntimeError:\n    y64 = wp.array(0.5 * a64.numpy() + y64.numpy(), dtype=wp.float64)")],
         "workload"),
    ],
}


def edited(code, old, new):
    """The code with one edit (old -> new), or with each of a list of edits (old is the list)."""
    for before, after in (old if isinstance(old, list) else [(old, new)]):
        assert before in code, before
        code = code.replace(before, after)
    return code
