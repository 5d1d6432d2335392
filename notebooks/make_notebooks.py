#!/usr/bin/env python3
"""Writes the teaching notebooks of this folder (outputs stripped). The notebooks are the
product; this script is their source, so that a change of wording or of a probe stays one
edit. Run it with Debian's python3 (nbformat) after editing, and commit both.

Every mechanism notebook is a lesson of one shape: what you will learn; the mental model (with
the report's identity map, drawn from the lesson's own run); a prediction to make before
running; the problem, probed; how to read the report; the fix, probed; %warp_compare with its
verdict and hash receipts; the what-if lever that measures the fix without editing; what to
remember; and an exercise that checks itself (%%warp_probe --exercise NAME), starting broken.
tests/python executes each notebook with the xwarp kernel and checks the finding it teaches,
the verdict and that the exercise starts "not met"; tests/python/lesson_solutions.py holds the
solutions, which the tests check are "met".
"""

import json
import re
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
KERNELSPEC = {"name": "xwarp", "display_name": "Python 3 (xwarp: Warp compile probe)", "language": "python"}

# A Warp function heavy enough that a module build is clearly more than start-up noise.
HEAVY = """@wp.func
def churn(v: wp.vec3, m: wp.mat33, s: float):
    for j in range(6):
        v = m @ v + wp.cross(v, wp.vec3(1.0, 2.0, 3.0)) * wp.sin(s + float(j))
        v = wp.normalize(v) * wp.length(v + wp.vec3(0.5))
    return v"""

# The arrays the lessons' kernels work on: not zeros, so that what a cell computes shows in what
# it leaves (an exercise checks results=same against its broken form).
STATE = """a = wp.full(64, wp.vec3(1.0, 0.5, 0.25), dtype=wp.vec3)
m = wp.full(64, wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), dtype=wp.mat33)"""

SETUP = f"""%%warp_setup
import warp as wp

{HEAVY}

{STATE}"""


# A kernel whose loop runs past Warp's default unroll limit (max_unroll 16): compiled as a dynamic
# loop unless its module's max_unroll is at least 24 (codegen.py's fixed-range check).
REFINE = """@wp.kernel
def refine(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    v = a[i]
    for j in range(24):  # 24 steps: more than the default max_unroll (16) unrolls
        v = v + (m[i] @ v) * 0.01
    a[i] = v"""


# The course's set-up check (the primer's first cell): the magics, Warp, a CUDA device or not.
SETUP_CHECK = """import warp as wp

ready = get_ipython().find_cell_magic("warp_probe") is not None
print("xwarp magics:", "ready" if ready else "missing: choose the xwarp kernel, or run %load_ext xwarp")
print("Warp", wp.config.version, "| CUDA devices:", wp.get_cuda_device_count())"""


def kernel(name, s):
    return f"""@wp.kernel
def {name}(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], {s})"""


# CS-5 on the CPU: Warp 1.19 honours a launch's block_dim on the CPU only with enable_cpu_blocks on
# (context.py: a CPU launch otherwise runs at block_dim 1, and its module is built for 1).
CPU_BLOCKS_SETUP = """%%warp_setup
import warp as wp

wp.config.enable_cpu_blocks = True  # off by default: every CPU launch then runs at block_dim 1

{HEAVY}

a = wp.full(1024, 1.5, dtype=float)"""

CPU_BLOCKS_EXERCISE = '''@wp.kernel
def integrate(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 0.5 + 0.25


@wp.kernel
def collide(a: wp.array(dtype=float)):
    a[wp.tid()] = wp.max(a[wp.tid()] - 0.125, 0.0)


for step in range(3):
    wp.launch(integrate, dim=1024, inputs=[a], block_dim=64)
    wp.launch(collide, dim=1024, inputs=[a], block_dim=128)'''


# The lesson around each mechanism notebook (see lesson_cells). Exercises start broken; their
# solutions live in tests/python/lesson_solutions.py, where the tests check they are met.
LESSONS = {
    "capstone": {
        "learn": ["reading a report where several mechanisms meet, ranked by the time each puts at stake",
                  "why one fix can leave a rebuild in place until another lands: two changes that rebuild the same module",
                  "fixing in order, and proving the whole with --expect and --strict against the untouched program"],
        "predict": ("This program builds its pipeline stages with a factory, scales two arrays with a generic "
                    "kernel, and asks for `-O3` half-way (`optimization_level`, which Clang gets on the CPU as NVRTC does on CUDA). How many identities will it build, and how many "
                    "of them are waste?",
                    "Five. Each stage gets a `module=\"unique\"` module of its own (the factory's hidden default): "
                    "three builds of the same heavy function. `__main__` builds twice: the `optimization_level` change and "
                    "the new `float64` instance come between its two launches, and land in one rebuild. Two "
                    "identities are enough: one named module for the stages, one `__main__`."),
        "read": ("- **Findings** rank CS-9 (the unique modules), CS-3 (the late option) and CS-10 (adjoint code "
                 "no one uses) by time at stake; each *measured:* line is the replay of its lever on this very "
                 "program.\n"
                 "- **options-at-creation** moves the option before the load, yet its replay still builds "
                 "`__main__` twice: the late `float64` instance rebuilds it, and the CS-3 finding's measured line "
                 "says what else the fix needs. The report's hash churn row names both changes in one move. Two "
                 "changes rebuild the same module, so neither fix alone removes the rebuild; whatever that replay "
                 "measures is the option's effect on the builds, not a build saved.\n"
                 "- **shared-module** was *not applied*: the stages are created between launches, and a shared "
                 "module would rebuild at each new stage. The fix is two changes here too: a named module *and* "
                 "the stages created before the first launch."),
        "lever": ("The probe above ran `--whatif auto`: every lever with something to move was replayed on the "
                  "unmodified cell. `backward-off` is a decision about the application (does anything "
                  "differentiate?), not a fix: measure it, then choose. `warp-probe fix --verify` writes the code "
                  "forms of CS-9 and CS-3 as patches and proves each on a copy, for a program in files."),
        "remember": ["Read the measured line before the estimate: a replay that leaves a rebuild in place says what "
                     "else moves the same module.",
                     "Fix in the order the measurements say, and probe after each: a fix can start paying only "
                     "once the one before it landed.",
                     "Prove the whole against the untouched program: `--compare` with `workload=same` and "
                     "`--strict`."],
        "exercise": {
            "task": ("Fix the whole program, in the order the findings above say, until it builds no module "
                     "identity it does not need, with the option the program asks for. Every launch stays. Then "
                     "add `--strict`."),
            "hint": ("One change per finding, each the fix of a lesson you took (lessons 3, 4, 6 and 8): read "
                     "each finding's cause line, find the lesson that names its mechanism, and probe after each "
                     "change."),
            "expect": "identities<=2,builds-per-module<=1,option:__main__.optimization_level=3",
            "code": 'from typing import Any\n\n# a library-style factory: every stage gets a module of its own unless told otherwise\ndef make_stage(s: float, module="unique"):\n    @wp.kernel(module=module)\n    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):\n        i = wp.tid()\n        a[i] = churn(a[i], m[i], s)\n    return stage\n\n\n@wp.kernel\ndef scale(x: wp.array(dtype=Any), f: Any):\n    x[wp.tid()] = x[wp.tid()] * f\n\n\nfor s in (0.5, 1.5, 2.5):\n    step = make_stage(s)\n    wp.launch(step, dim=64, inputs=[a, m])\n\nx32 = wp.ones(64, dtype=wp.float32)\nwp.launch(scale, dim=64, inputs=[x32, wp.float32(2.0)])\nwp.set_module_options({"optimization_level": 3})\nx64 = wp.ones(64, dtype=wp.float64)\nwp.launch(scale, dim=64, inputs=[x64, wp.float64(2.0)])'},
    },
    "cs1_kernels_after_load": {
        "learn": ["why a kernel defined after its module's first launch rebuilds the whole module",
                  "how a kernel factory hides the same mistake, and how the report points at it",
                  "the fix: every kernel of a module exists before its first launch"],
        "predict": ("The cell below calls `make_stage` five times and launches each new kernel at once. "
                    "How many times will the module `__main__` be built?",
                    "Five times. Each call adds a kernel to a module that has already loaded, so each launch "
                    "needs a new identity holding every kernel alive so far. In the **Identity map**, `__main__` "
                    "has five boxes and each arrow reads *another closure of make_stage*."),
        "read": ("- **Modules built more than once** has one *hash churn* row for `__main__`: five hashes, five "
                 "builds, and under it why each hash followed the last.\n"
                 "- **Findings**: the CS-1 finding names the factory, the `@wp.kernel` line inside it and the line "
                 "that called it (`<cell>:line`), with what the fix should save.\n"
                 "- The **Identity map** shows the same as a picture: one row per module, one box per identity."),
        "lever": ("CS-1 has no run-time lever: moving a kernel definition is a change to the program itself, so "
                  "the fix is measured by `%warp_compare` as above. The other lessons' levers are replayed with "
                  "`%warp_whatif NAME LEVER` (see `whatif.ipynb`)."),
        "remember": ["A module's identity includes every kernel alive at its load: a kernel defined later rebuilds "
                     "all of them.",
                     "Create factory kernels up front, or give data-dependent kernels a module of their own.",
                     "The receipt to check: one hash for the module, the same launches."],
        "exercise": {
            "task": "This simulation step defines `damp` after `integrate` has already run. Make the module build once.",
            "hint": ('A module loads with the kernels it has at its first launch. Where must `damp` be defined for that launch to see it? Both launches must stay: the comparison with the broken run checks them.'),
            "expect": "identities<=1,builds-per-module<=1",
            "code": f'''{kernel("integrate", "0.5")}

wp.launch(integrate, dim=64, inputs=[a, m])

{kernel("damp", "0.25")}

wp.launch(damp, dim=64, inputs=[a, m])'''},
    },
    "cs2_cache_thrown_away": {
        "learn": ["what the warm pass tells you: whether Warp's kernel cache is reused at all",
                  "the ways programs throw the cache away (cache_kernels, clear_kernel_cache, temporary cache dirs)",
                  "why the verdict is judged on warm module work here"],
        "predict": ("The first probe turns `wp.config.cache_kernels` off. Its warm pass runs on the cache the cold "
                    "pass filled. How many modules will the warm pass build?",
                    "As many as the cold pass. With `cache_kernels=False` Warp 1.19 still writes every build into "
                    "`kernel_cache_dir`; it only skips looking there first. Written, never read: the warm pass "
                    "builds everything again, its module work is as large as the cold one, and the CS-2 finding "
                    "says so."),
        "read": ("- Compare **cold wall** and **warm wall**: they are close, where a reused cache makes the warm "
                 "pass a fraction of the cold one.\n"
                 "- The CS-2 finding lists every cause it saw, each with its own line: here the `cache_kernels` "
                 "assignment.\n"
                 "- The **Identity map** looks healthy (one identity): this mechanism wastes the next run, not this one."),
        "replay": "nocache keep-cache",
        "lever": ("`%warp_whatif nocache keep-cache` replays the cell with cache clears and per-run cache settings "
                  "made no-ops, and measures the warm module work it saves, without editing the cell."),
        "remember": ["A warm pass that compiles means the cache is not reused: every run pays cold start again.",
                     "Never clear a cache another process may use; keep CI caches between runs (references/ci.md).",
                     "`warm-builds<=0` in a budget asserts that the cache is reused."],
        "exercise": {
            "task": "A debugging leftover clears the kernel cache at start-up. Make the warm pass build nothing.",
            "hint": ('Which line makes the cache useless for the next run? The launch of `settle` stays.'),
            "expect": "warm-builds<=0",
            "code": f'''wp.clear_kernel_cache()  # added while debugging a stale build

{kernel("settle", "0.75")}

wp.launch(settle, dim=64, inputs=[a, m])'''},
    },
    "cs3_option_after_load": {
        "learn": ["that module options are part of the identity",
                  "why changing one after the first launch rebuilds the module",
                  "where options belong: before the first load, or in a module of their own"],
        "predict": ("The cell launches `stage_a`, changes `max_unroll`, and launches it again. How many identities "
                    "will `__main__` have?",
                    "Two: the same kernels under two option sets. The arrow in the **Identity map** reads "
                    "*option max_unroll: ... -> 4*."),
        "read": ("- The CS-3 finding names the option, its old and new value, and the `set_module_options` line.\n"
                 "- **Modules built more than once**: one hash churn row, and the option on its *why* line."),
        "replay": "late_option options-at-creation",
        "lever": ("`%warp_whatif late_option options-at-creation` replays the cell with each module given, when it "
                  "is created, the options it ended with, and measures the saving before you move the line."),
        "remember": ["Options are identity: set them before the module's first launch.",
                     "Kernels that really need other options belong in a module of their own.",
                     "A `wp.config` global set too late is a quieter variant: see option_not_arrived.ipynb."],
        "exercise": {
            "task": ("`refine`'s loop runs 24 steps, more than Warp's default unroll limit (`max_unroll` 16), so "
                     "Warp compiles it as a dynamic loop. The author wants it unrolled (`max_unroll` 32) and "
                     "`advance` left at the default, and today switches the option for the whole of `__main__` "
                     "between the two launches. Give `refine` a module of its own that has the option before its "
                     "first launch (a module named `refine_ops`, or Warp's own idiom: `module=\"unique\"` with "
                     "`module_options`), so that every module builds once and `advance` keeps 16."),
            "hint": ("A module has one set of options. Which argument of `@wp.kernel` gives `refine` the module "
                     "`refine_ops`, and which argument of `wp.set_module_options` names the module it sets? Both "
                     "launches stay, and the check reads the option from the build of the module that holds `refine` "
                     "(`option:@refine...`), and that `advance`'s module kept the default."),
            "expect": "identities<=2,builds-per-module<=1,option:@refine.max_unroll=32,option:@advance.max_unroll=16",
            "code": f'''{kernel("advance", "1.5")}


{REFINE}


wp.launch(advance, dim=64, inputs=[a, m])
wp.set_module_options({{"max_unroll": 32}})  # for refine's 24-step loop: too late, and for all of __main__
wp.launch(refine, dim=64, inputs=[a, m])'''},
    },
    "option_not_arrived": {
        "learn": ["which `wp.config` globals a module copies when it is created, and which it reads when it loads",
                  "why setting one after importing a library changes nothing, silently",
                  "how a hash receipt proves whether an option arrived"],
        "predict": ("The second probe sets `wp.config.enable_backward = False` after importing `solver_lib`. Will "
                    "the library's module hash change compared with the baseline?",
                    "No. The module copied `enable_backward=True` when `import solver_lib` created it; the global "
                    "set afterwards never reaches it. The compare's hash receipt shows the same hash on both sides."),
        "read": ("- The `option-not-arrived` finding names the assignment and the import that came before it.\n"
                 "- The **Identity map** of both runs shows the same single identity for `solver_lib`."),
        "replay": "too_late options-at-creation",
        "lever": ("The fix is the order of two lines in your entry point; `%warp_compare` with its hash receipt is "
                  "the measurement. `%warp_whatif too_late options-at-creation` replays the cell with the library's "
                  "module given, when it is created, the global it missed, before you move a line."),
        "remember": ["Set module-creation globals at the entry point, before importing Warp libraries.",
                     "Never set them in library code: another application may need gradients from it.",
                     "After changing an option, check the receipt: an unchanged hash means it never arrived."],
        "exercise": {
            "task": ("This entry point never imports `solver_lib`: it uses `scene_lib`, which re-exports the "
                     "solver's kernel. It wants forward-only builds, yet the kernel's module is still built with "
                     "backward code. Make the option arrive (library code stays as it is)."),
            "hint": ("Which line creates the module that holds `smooth`? Follow `scene_lib`'s own imports (the setup "
                     "cell wrote both files)."),
            # the option must arrive at the library's own module: a copy of its kernel in the cell
            # would build without backward code while solver_lib never loads
            "expect": "backward-modules<=0,option:solver_lib.enable_backward=false",
            "code": '''import warp as wp
import scene_lib

wp.config.enable_backward = False  # this application never differentiates

a, m = scene_lib.make_state(64)
wp.launch(scene_lib.smooth, dim=64, inputs=[a, m])'''},
    },
    "cs6_generic_after_load": {
        "learn": ["how generic (`Any`-typed) kernels get one instance per argument type",
                  "why a new type met after the first launch rebuilds the module",
                  "registering the instances up front with `wp.overload`"],
        "predict": ("`relax` is launched with float32, then float64, then float16 arrays. How many identities will "
                    "the module build?",
                    "Three: each new dtype adds an instance to a module that has already loaded. The **Identity "
                    "map** arrows read *generic instance of relax for ...*."),
        "read": ("- The CS-6 finding lists the instances created after the first load and where they were launched.\n"
                 "- Each *why* line under **Modules built more than once** names the new signature."),
        "replay": "on_demand preregister-overloads",
        "lever": ("`%warp_whatif on_demand preregister-overloads` replays the cell with the instances the baseline "
                  "built registered before the first load."),
        "remember": ["Register the signatures the program routinely uses before the first launch (the generic "
                     "kernel keeps the instances: the returned objects need not be kept).",
                     "Only those: every registered instance makes each build of the module bigger."],
        "exercise": {
            "task": ("`axpy` has three generic arguments, two arrays and a scalar, and meets float32 data first "
                     "and float64 data later. Make the module build once."),
            "hint": ("`wp.overload` takes the whole signature: every `Any` argument gets its concrete type, the "
                     "scalar `alpha` too (a list in argument order, or a dict by name). Both launches stay."),
            "expect": "identities<=1,builds-per-module<=1",
            "code": '''@wp.kernel
def axpy(x: wp.array(dtype=Any), y: wp.array(dtype=Any), alpha: Any):
    i = wp.tid()
    y[i] = alpha * x[i] + y[i]


y32 = wp.zeros(8, dtype=wp.float32)
y64 = wp.zeros(8, dtype=wp.float64)
wp.launch(axpy, dim=8, inputs=[a32, y32, wp.float32(0.5)])
wp.launch(axpy, dim=8, inputs=[a64, y64, wp.float64(0.5)])  # a second instance, after the first load'''},
    },
    "module_granularity": {
        "learn": ["the fixed cost every module build pays, whatever its size",
                  "two ways programs pay it too often: kernels scattered over tiny named modules (CS-4), and "
                  '`module="unique"` on stable kernels (CS-9), often hidden in a factory\'s default',
                  "which kernels should share a module, and which should not"],
        "predict": ("Four one-line kernels, each in a module of its own. How many module builds will the cold pass "
                    "make, and does it matter whether the modules are named or `module=\"unique\"`?",
                    "Four, one per module, and the fixed part of each build (compiler set-up, object emission, "
                    "loading) is paid four times. Named or unique makes no difference to the count: the **Identity "
                    "map** has four rows of one box each both times. It makes a difference to the fix: a unique "
                    "module is named after its kernel's hash, so it is meant for kernels that change."),
        "read": ("- **Module identities** lists four modules of similar, small cost, in both runs.\n"
                 "- The CS-4 finding estimates what merging the named modules saves; the CS-9 finding points at "
                 'each `module="unique"` (and at a factory default when the option hides there).'),
        "replay": "four_modules merge-modules",
        "lever": ("`%warp_whatif four_modules merge-modules` replays the cell with the small modules loaded as one "
                  "and measures the saving before you rename anything; `%warp_whatif unique shared-module` does "
                  "the same for the unique ones."),
        "remember": ["Each module build has a fixed cost: group kernels that always load together.",
                     'Keep `module="unique"` for kernels made per request or per plugin, which would otherwise '
                     "churn a shared module; look for it in factory helpers' defaults.",
                     "Keep apart kernels with different options, block_dims or edit cycles: a big module rebuilds "
                     "whole when one kernel changes."],
        "exercise": {
            "task": ("A factory makes two scaling kernels (with its default module) and an offset kernel lives in "
                     "a module of its own. Make all three one module, built once."),
            "hint": ("Two places choose a module here: the factory's keyword default and the offset's decorator. "
                     "A shared module builds once only if every kernel in it exists before its first launch. All "
                     "three launches stay."),
            "expect": "modules<=1,builds-per-module<=1",
            "code": '''def make_scale(factor: float, module="unique"):
    @wp.kernel(module=module)
    def scale(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] * factor
    return scale


@wp.kernel(module="offset_ops")
def offset(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] + 1.0


ops = [make_scale(2.0), make_scale(0.5)]
for k in ops + [offset]:
    wp.launch(k, dim=256, inputs=[a])'''},
    },
    "cs10_unused_backward": {
        "learn": ["that every kernel is compiled with its adjoint (backward) code by default",
                  "how to measure what a forward-only program pays for it",
                  "why switching it off blindly gives silently wrong gradients"],
        "predict": ("Two kernels, launched forward only, no `wp.Tape`. Will the report find anything wrong?",
                    "Only an **advisory** (CS-10): backward code was generated and never used. It is an opportunity "
                    "to measure, not an instruction, because the probe cannot know whether another program "
                    "differentiates through these kernels."),
        "read": ("- The CS-10 advisory gives the build time spent on modules with backward code and says why it "
                 "is only an advisory.\n"
                 "- After the fix, the **Identity map** still shows one identity: the module got smaller, not fewer."),
        "replay": "with_backward backward-off",
        "lever": ("`%warp_whatif with_backward backward-off` replays the cell with `enable_backward` held off from "
                  "the start; a program that records a tape makes that replay *invalid*, by design."),
        "remember": ["Turn backward code off only at the entry point of an application that never differentiates.",
                     "Never in library code; split forward-only kernels from differentiable ones instead.",
                     "With backward off, a tape skips those kernels' adjoints: gradients through them are missing "
                     "while the other kernels still add theirs, so they are wrong, not zeros (zeros only where "
                     "every path goes through such a kernel, as in the check below). Warp 1.19 logs a warning "
                     "for every recorded launch of such a kernel at every `backward()`, and a direct "
                     "`adjoint=True` launch raises; a warning in a long log is easy to miss, so check the "
                     "gradients."],
        "exercise": {
            "task": ("Start again from the first setup (backward code on, created by its `@wp.func`). These two "
                     "kernels run forward only: build their module without backward code, from this cell alone."),
            "setup": True,
            "hint": ('The module already exists when this cell runs: the global comes too late. Which option can a kernel carry itself?'),
            "expect": "backward-modules<=0",
            "code": f'''{kernel("push", "0.5")}

{kernel("pull", "0.25")}

wp.launch(push, dim=64, inputs=[a, m])
wp.launch(pull, dim=64, inputs=[a, m])'''},
    },
    "cs5_block_dims_cpu": {
        "learn": ["that the block_dim a module is launched at is part of its identity, on the CPU too once "
                  "`wp.config.enable_cpu_blocks` is on",
                  "why one module launched at two block_dims builds twice, every kernel both times (CS-5)",
                  "the fix that keeps every launch as it is: one named module per stable block_dim",
                  "what the measurement says a CPU build at a new block_dim costs: mostly its own precompiled header"],
        "predict": ("`integrate` runs at block_dim 64 and `collide` at 128, both in `__main__`, with CPU blocks "
                    "on. How many times is `__main__` built, and what does each build hold?",
                    "Twice, once per block_dim, and each build compiles both kernels: a module is built for the "
                    "block_dim of the launch that loads it, whichever of its kernels that launch runs. The "
                    "**Identity map** has two boxes for `__main__`; the arrow between them reads *block_dim*."),
        "read": ("- The CS-5 finding names the module, its block_dims and what the builds of kernels never "
                 "launched at a block_dim cost, and apart from that the precompiled headers those builds wrote.\n"
                 "- **Module identities** lists `__main__` twice, with the block_dim column telling them apart.\n"
                 "- The **Build timeline** splits each build: most of it is `header`, the precompiled header "
                 "Warp writes for each block_dim (`builtin_bd64_...pch`, then `builtin_bd128_...pch`)."),
        "replay": "two_block_dims_cpu pch-off",
        "lever": ("CS-5 has no run-time lever: splitting a module by block_dim is a change to the program, "
                  "measured by `%warp_compare` as above. Choosing one block_dim for both launches is not a fix "
                  "the compare accepts: it changes a launch, and the comparison says *invalid*. What the "
                  "timeline shows is most of the cost, the two headers, stays after the split: both block_dims are "
                  "still launched. Those are CS-12's: `%warp_whatif two_block_dims_cpu pch-off` replays the cell "
                  "with `wp.config.use_precompiled_headers = False`, each build parsing Warp's headers itself."),
        "remember": ["A module builds once per block_dim it is launched at, with every kernel it holds.",
                     "Keep kernels launched at one stable block_dim in a named module of their own; keep a "
                     "block_dim chosen at run time in a module of its own too.",
                     "On the CPU a new block_dim costs a precompiled header of its own, most of such a build: a "
                     "split keeps it, and saves only the kernels built at a block_dim nobody launches them at. "
                     "Measure `pch-off` for the headers. On a GPU Warp passes NVRTC a precompiled header too "
                     "(`wp.config.use_precompiled_headers`; the GPU lesson), so measure `pch-off` there as "
                     "well before you split."],
        "exercise": {
            "task": ("A solver step runs `integrate` at block_dim 64 and `collide` at 128, both in `__main__`. "
                     "Make every module build once, with every launch at the block_dim it has now."),
            "hint": ("A module is built once per block_dim. Which `@wp.kernel` argument puts each kernel in a "
                     "module that is only ever launched at one block_dim? The launches stay as they are."),
            "expect": "builds-per-module<=1",
            "code": CPU_BLOCKS_EXERCISE},
    },
    "cs13_serial_builds": {
        "learn": ["that independent modules build one after another at their first launches",
                  "how `wp.force_load(..., max_workers=N)` builds them in parallel",
                  "why this is judged on compile elapsed, never on summed module work"],
        "predict": ("Four independent modules, built serially, then preloaded with two workers. Which clock will "
                    "show the gain: summed module work, or compile elapsed?",
                    "Compile elapsed (time waited). Parallel builds add up to as much module work or more (each "
                    "worker writes its own precompiled header on the CPU), so summed work can even grow."),
        "read": ("- The **Build timeline** shows the four builds end to end in the serial run, and overlapping "
                 "in the parallel one.\n"
                 "- The *BUILDS_OVERLAPPED* flag on the parallel run says why compare judges compile elapsed."),
        "replay": "serial parallel-preload",
        "lever": ("`%warp_whatif serial parallel-preload` replays the serial cell with its modules preloaded at the "
                  "first launch, judged on compile elapsed, without writing the `force_load` call."),
        "remember": ["A parallel preload moves work, it does not remove it: judge it on compile elapsed.",
                     "Name the modules and the block_dim the launches use; with few cores there is little to overlap."],
        "exercise": {
            "task": ("A simulation loop launches three stages, each in a module of its own, and exports after the "
                     "loop: four modules, each built at its first launch, one after another. Preload all four with "
                     "two workers, so that no launch waits for a build (`launch-builds<=0`) and the builds overlap "
                     "(this needs 2 CPU cores: on one core nothing can overlap, and the test suite skips it "
                     "there). The limit is on overlap, not on time: how much "
                     "time that saves depends on the machine, so the verdict on time stays with `%warp_compare`."),
            "hint": ("`wp.force_load` takes the modules (`kernel.module`), the device, the block_dim the launches use "
                     "(1 on the CPU) and `max_workers`. Which modules does the program build, the one it needs only "
                     "at the end included?"),
            "expect": "build-overlap>=1.3,launch-builds<=0",
            "code": f'''{kernel("collide", "0.25").replace("@wp.kernel", '@wp.kernel(module="collide_ops")')}


{kernel("integrate", "0.5").replace("@wp.kernel", '@wp.kernel(module="integrate_ops")')}


{kernel("constrain", "0.75").replace("@wp.kernel", '@wp.kernel(module="constrain_ops")')}


{kernel("export", "1.25").replace("@wp.kernel", '@wp.kernel(module="export_ops")')}


for step in range(2):
    for k in (collide, integrate, constrain):
        wp.launch(k, dim=64, inputs=[a, m])
wp.launch(export, dim=64, inputs=[a, m])  # once, after the loop'''},
    },
}


MENTAL_MODEL = """## The mental model

Warp compiles **modules**, not kernels. A module's **identity** is

> its live kernels and the functions they call (in any module), the `wp.constant` and `wp.static`
> values they read, its options and the `wp.config` build flags folded in when it loads, the
> block_dim it is launched at (CUDA's; on the CPU always 1, whatever a launch asks, unless the
> experimental `wp.config.enable_cpu_blocks` is on), and its generic instances

(a list, not a product: a change to any one of them is a new identity), and every new identity is a
full code generation and native build of *every* kernel in the module.
The report's **Identity map** draws the identities this run built, in the order they loaded; each
arrow says why the next one was needed (a kernel added, an option changed, a generic instance, a
new block_dim). Cold start is roughly *identities touched × the size of each*."""


def exercise_expect(ex):
    """An exercise's limits, and the work kept: an answer must launch what the broken form did
    (workload=same), the same kernels (kernels=same: not one swapped for another with the same
    arguments) and leave the same values in its arrays (results=same: not a no-op kernel)."""
    return ex["expect"] + ",workload=same,kernels=same,results=same"


def lesson_cells(name, cells):
    """The lesson shape around a notebook's own cells: learn and model first, the prediction
    before its first probe, how to read the report after it, then lever, remember, exercise."""
    spec = LESSONS.get(name)
    if spec is None:
        return cells
    first_probe = next(i for i, c in enumerate(cells) if c[0] == "code" and c[1].startswith("%%warp_probe"))
    head = [("md", "## What you will learn\n\n" + "\n".join(f"- {x}" for x in spec["learn"])), ("md", MENTAL_MODEL)]
    predict = ("md", "## Predict\n\n" + spec["predict"][0] + "\n\n<details><summary>Answer (after you ran it)</summary>\n\n"
               + spec["predict"][1] + "\n\n</details>")
    read = ("md", "## Read the report\n\n" + spec["read"])
    tail = [("md", "## Measure the lever without editing\n\n" + spec["lever"])]
    if "replay" in spec:
        # one replay sample against the run's own samples keeps the lesson short: the verdict is then
        # the band's alone (no rank test); in class, leave out --reuse-baseline for fresh baseline
        # samples interleaved with the replays, and give it more --samples
        tail += [("md", "Run it here: one replay sample, judged against the run's own samples (`--reuse-baseline`; "
                        "leave it out for fresh baseline samples interleaved with the replay, and raise `--samples` "
                        "for a rank test):"),
                 ("code", f"%warp_whatif {spec['replay']} --samples 1 --reuse-baseline")]
    tail.append(("md", "## Remember\n\n" + "\n".join(f"- {x}" for x in spec["remember"])))
    if "exercise" in spec:
        ex = spec["exercise"]
        tail += [("md", "## Exercise\n\n" + ex["task"] + "\n\nFirst run the program as it is: the probe keeps it as "
                        "`exercise_broken`. Then edit the cell after it until it says **met** under its report. "
                        f"`--exercise {name}` judges your answer as the exercise ships: by its own limits "
                        f"(`{exercise_expect(ex)}`, in the grammar of `warp-probe measure --budget`), against its "
                        "broken form as shipped (if you edited `exercise_broken`, the probe runs the shipped form "
                        "itself). `workload=same` checks, as `%warp_compare` does, that your program still launches "
                        "what the broken form launched, so an answer that deletes work is *not met* and says which "
                        "launch went missing. Add `--strict` to make *not met* fail the cell."),
                 ("code", "%%warp_probe --samples 1 --name exercise_broken\n" + ex["code"]),
                 ("md", "<details><summary>Hint</summary>\n\n" + ex["hint"] + "\n\n</details>"),
                 ("code", f"%%warp_probe --samples 1 --name exercise --exercise {name}\n" + ex["code"])]
        if ex.get("setup"):
            # the lesson changed its setup on the way: the exercise starts again from the first one
            tail[-4:-4] = [("code", next(c[1] for c in cells if c[0] == "code" and c[1].startswith("%%warp_setup")))]
    else:
        tail.append(("md", "## Exercise\n\n" + spec["no_exercise"]))
    return head + cells[:first_probe] + [predict, cells[first_probe], read] + cells[first_probe + 1:] + tail


# Each exercise's %%warp_setup body as it ships: the setup cell in force at its --exercise cell
# (filled as the notebooks are written; --exercise probes with it, whatever the student edited).
EXERCISE_SETUPS = {}


def note_exercise_setups(cells):
    setup = None
    for kind, source in cells:
        if kind != "code":
            continue
        if source.startswith("%%warp_setup"):
            setup = source.split("\n", 1)[1] if "\n" in source else ""
        # the magic line, or the GPU lesson's run_cell_magic call (it probes only where a device is)
        found = re.search(r"warp_probe[^\n]*--exercise (\w+)", source)
        if found and setup is not None:
            EXERCISE_SETUPS[found.group(1)] = setup.rstrip()


def notebook(name, title, cells, expect):
    nb = new_notebook()
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata["language_info"] = {"name": "python"}
    # What tests/python/test_teaching_notebooks.py checks this notebook shows.
    if name in LESSONS:
        expect = dict(expect, lesson=True, exercise="exercise" in LESSONS[name])
        if "replay" in LESSONS[name]:
            run, lever = LESSONS[name]["replay"].split()
            expect["replay"] = {run: lever}
        if "exercise" in LESSONS[name]:
            nb.metadata["xwarp_exercise"] = {"expect": exercise_expect(LESSONS[name]["exercise"])}
    nb.metadata["xwarp"] = {"expect": expect}
    cells = lesson_cells(name, cells)
    note_exercise_setups(cells)
    title_cell = f"# {title}\n\n*The words the lessons use (lever, noise band, adjoint, ...) are in the [glossary](glossary.md).*"
    nb.cells = [new_markdown_cell(title_cell)] + [
        new_markdown_cell(c[1]) if c[0] == "md" else new_code_cell(c[1]) for c in cells
    ]
    for i, cell in enumerate(nb.cells):
        cell.id = f"{name[:40]}-{i}"  # stable ids: regenerating changes only what was edited
    nbformat.validate(nb)
    nbformat.write(nb, HERE / f"{name}.ipynb")


def setup_intro():
    return ("md", "The setup cell below is stored, not run here: every `%%warp_probe` cell runs it first, in "
                  "fresh processes with empty caches. It holds the imports and a Warp function heavy enough "
                  "that one module build is clearly visible.")


def lesson_primer():
    notebook(
        "primer",
        "Lesson 0: what Warp builds, and where cold start comes from",
        [
            ("md", """## Before you start

The course assumes you have written a little Warp: a `@wp.kernel` and its `wp.launch`, `wp.array`
with a `dtype`, a generic kernel argument typed `typing.Any`, and (for the CS-10 lesson) a `wp.Tape`.
Warp's own [basics](https://nvidia.github.io/warp/stable/user_guide/basics.html) cover all four. Run the cell below
first: it says whether this notebook runs on the xwarp kernel (or has `%load_ext xwarp`), which Warp
it found, and whether there is a CUDA device (every lesson but the GPU one runs on the CPU)."""),
            ("code", SETUP_CHECK),
            ("md", """Before any mechanism, the pipeline itself, drawn from a real run.

1. Warp gathers the kernels and functions of one Python module (here, one notebook cell run as a
   script) into one **module**.
2. At the module's first launch it generates **one source file** for all of them (C++ for the CPU,
   CUDA C++ for a GPU) and compiles it into **one binary**.
3. Before building, it computes a **hash** of everything the build depends on: that is the
   module's **identity**.
4. The binary goes into the **kernel cache**, in a folder named after the module and its hash. The
   next time any process loads the same identity, it reads the binary instead of building it.

So a build happens only for an identity the cache does not hold. Cold start bites when the cache
is empty or the identity is new: on a **new machine or container**, in **CI** (a fresh runner),
after a **Warp upgrade** (a new version builds everything again), and after **every edit** of a
module's code."""),
            setup_intro(),
            ("code", SETUP),
            ("md", """## One module, one build

The cell below defines one kernel and launches it once. `%%warp_probe` runs it twice in fresh
processes: a **cold** pass with an empty private cache, then a **warm** pass on the cache the cold
pass filled."""),
            ("code", f"""%%warp_probe --samples 1 --name one_module
{kernel("settle", "1.0")}

wp.launch(settle, dim=64, inputs=[a, m])"""),
            ("md", """## Read it

- **Module identities** has one row: the module `__main__` under one hash, built once, in
  *module work* (code generation plus the native compile).
- The report's **Identity map** draws that one identity. The **cache after cold** row says what
  the cold pass left behind: one binary (beside its generated source, in a folder of the kernel
  cache named after the module and its hash).
- The **warm pass** loaded the same identity from that cache: its wall is the program without the
  build. *Compile elapsed* (cold wall minus warm wall) is what a user waits for on a fresh machine."""),
            ("md", """## An edit is a new identity

Change one constant in the kernel and probe again. The module, the kernel and the launch are the
same; the hash is not."""),
            ("code", f"""%%warp_probe --samples 1 --name edited
{kernel("settle", "2.0")}

wp.launch(settle, dim=64, inputs=[a, m])"""),
            ("md", """The identity has a new hash, so the cache had nothing for it: **one identity, built again**.
Every edit of a module's code costs a full build of the module on the next run, which is why
developers feel cold start all day, not only on new machines."""),
            ("md", """## Every identity is cached, even the wasted ones

The cell below launches a kernel, then defines a second kernel in the same module and launches
it. The module changed after it loaded, so it builds a second time: that is **churn**, the
subject of the lessons that follow."""),
            ("code", f"""%%warp_probe --samples 1 --name churned
{kernel("settle", "1.0")}

wp.launch(settle, dim=64, inputs=[a, m])

{kernel("relax", "2.0")}

wp.launch(relax, dim=64, inputs=[a, m])"""),
            ("md", """The cold pass built **two identities**, one per form of the module. Look at the warm pass:
it builds nothing, but it still **loads two identities** from the cache: each is hashed and its
binary loaded, so churn is cheap on a warm cache, not free (a module emitted as PTX, where the
GPU driver is older than Warp's CUDA toolkit, is even compiled again at every load: the GPU lesson
shows 784 ms for one from a warm cache). The builds
themselves go unnoticed there; they are paid again in full wherever the cache is empty. That is why churn is worth
fixing even when your own machine feels fast, and why `warp-probe measure` always measures cold.

## Seeing it without xwarp

Warp says all this itself, one line per module load, at its default log level (the probe keeps
what the program printed: the report's JSON has it under `stdout_tail`):

    Module __main__ 81432c2 load on device 'cpu' took 1879.13 ms  (compiled)

the module, the first seven characters of its hash, the device, the time, and `compiled` or
`cached`. Two lines for one module with two hashes are churn. `wp.config.compile_time_trace = True`
writes a trace of each CUDA build's phases (NVRTC's, CUDA toolkit 12.8 or later; a CPU build
writes none). NVIDIA's pages on [code generation](https://nvidia.github.io/warp/codegen.html)
and on [reducing compilation and startup time](https://nvidia.github.io/warp/stable/user_guide/execution_and_performance/reducing_compilation_and_startup_time.html)
describe the same pipeline and the same fixes from Warp's side.

Next: [Reading a warp-probe report](overview.ipynb), then [What-if replays](whatif.ipynb)."""),
        ],
        {"claims_only": True,
         "claims": [{"says": "one row: the module `__main__` under one hash", "report": "one_module", "identities": 1,
                     "warm_builds_at_most": 0},
                    {"says": "the cold pass left behind: one binary", "report": "one_module", "cache_binaries": 1,
                     "output": "cache after cold"},
                    {"says": "one identity, built again", "report": "edited", "identities": 1,
                     "new_hash_vs": "one_module"},
                    {"says": "The cold pass built **two identities**", "report": "churned", "identities": 2,
                     "warm_builds_at_most": 0},
                    {"says": "it still **loads two identities** from the cache", "report": "churned",
                     "warm_loads_at_least": 2},
                    {"says": "Warp says all this itself, one line per module load", "report": "one_module",
                     "warp_log_line": "compiled"},
                    {"says": "whether this notebook runs on the xwarp kernel", "output": "xwarp magics: ready"}]},
    )


OWN_PROGRAM_STAND_IN = """import warp as wp


@wp.kernel
def advect(x: wp.array(dtype=float)):
    x[wp.tid()] = x[wp.tid()] * 0.5 + 0.25


x = wp.full(256, 1.5, dtype=float)
wp.launch(advect, dim=256, inputs=[x])


@wp.kernel  # defined after the first launch: the module builds again (CS-1)
def clamp(x: wp.array(dtype=float)):
    x[wp.tid()] = wp.min(x[wp.tid()], 1.0)


wp.launch(clamp, dim=256, inputs=[x])
print("done:", float(x.numpy().sum()))
"""

OWN_PROGRAM_CELL = f'''import os, shlex, shutil, sys, tempfile

PROGRAM = ""  # the path of your own Warp program, e.g. "sim/run_scene.py"; empty: a stand-in
stand_in = None
if not PROGRAM:
    stand_in = tempfile.mkdtemp(prefix="xwarp-own-program-")
    PROGRAM = os.path.join(stand_in, "my_program.py")
    with open(PROGRAM, "w") as f:
        f.write({OWN_PROGRAM_STAND_IN!r})
print("probing", PROGRAM, "with", sys.executable)'''


def lesson_own_script():
    notebook(
        "own_script",
        "Your own program: probe it, read Warp's own line, set it a budget",
        [
            ("md", """Every lesson so far probed a cell written for it. This one probes a program of yours, the way
you will after the class: the same probe, on a command instead of a cell.

Put the path of a Warp program you run in `PROGRAM` below (a script; it runs in this notebook's
folder, with this kernel's Python). Left empty, the cell writes a small stand-in program into a
temporary folder of its own (never into this notebook's folder), so that the notebook runs as
shipped."""),
            ("code", OWN_PROGRAM_CELL),
            ("md", """## Probe it

`%warp_probe [options] -- COMMAND` probes a command as `warp-probe measure` does in a terminal: in
fresh processes, cold then warm, on private caches (your own kernel cache is neither read nor
written). `-o mine` keeps the report in a variable as well."""),
            ("code", 'mine = None  # the report, once the probe has one\n'
                     'get_ipython().run_line_magic(  # --timeout: a program that waits on input (or a FIFO) ends, and says so\n'
                     '    "warp_probe",\n'
                     '    f"--samples 1 --timeout 600 --name mine -o mine -- {shlex.quote(sys.executable)} {shlex.quote(PROGRAM)}")'),
            ("md", """## Whose code it is

A finding names the line that caused it and whose code that line is: your project (the folder
above your program with its `pyproject.toml`, `setup.py` or `.git`, the notebook's folder, an
editable install of yours), an installed package (its RECORD lists the file), Python's own
library, or Warp itself. Only your project's lines are yours to edit; for the others the finding
says what you can do from your side. Where your program lies does not change that: run by its
path from here, it is still yours."""),
            ("code", 'for f in (mine or {}).get("findings", []):\n'
                     '    if f.get("owner"):\n'
                     '        print(f["mechanism"], f["location"]["file"], "->", f["owner"]["kind"])'),
            ("md", """## Warp's own line

Warp prints one line per module load at its default log level. Each line names the module, the
first seven characters of its hash, the device, the time, and `compiled` or `cached`. The report
keeps only the last 4,000 bytes of what the program printed, so a program that prints progress may
have pushed Warp's lines out of it; the probe's recorder saw every load, and the cell below prints
the same facts from it in Warp's shape, then counts Warp's own lines still in the printed tail:"""),
            ("code", 'cold = ((mine or {}).get("samples") or [{"cold": {}}])[0]["cold"]\n'
                     'for load in cold.get("module_loads", []):\n'
                     '    ms = load.get("total_ms")\n'
                     '    print(f"Module {load[\'module\']} {load[\'hash\'][:7]} load on device {load[\'device\']!r}",\n'
                     '          f"took {ms:.2f} ms" if ms is not None else "(time not recorded)", f"({load[\'status\']})")\n'
                     'own_lines = [l for l in cold.get("stdout_tail", "").splitlines() if " load on device " in l]\n'
                     'print(len(own_lines), "of Warp\'s own load lines are still in the last 4,000 bytes the program printed")'),
            ("md", """Two lines for one module under two hashes are churn: the module changed after it loaded. The
report's findings above name the mechanism and the line of your program that caused it; the
[cheat sheet](../references/cheatsheet.md) gives its fix, the lever that measures the fix without an
edit, and the lesson that teaches it.

## Set it a budget

A budget keeps a cold start from creeping back once it is fixed. Take what you measured as the
limit, so that a change that adds an identity is caught; once a finding is fixed, add
`builds-per-module<=1`. The cell below reads the number from the report and probes again with it:"""),
            ("code", 'measured = ((mine or {}).get("summary") or {}).get("identity_count", {}).get("median")\n'
                     'if measured is None:\n'
                     '    print("no budget: the probe above measured no run of the program (it says why)")\n'
                     'else:\n'
                     '    get_ipython().run_line_magic(\n'
                     '        "warp_probe",\n'
                     '        f\'--samples 1 --timeout 600 --name mine_budget --expect "identities<={int(measured)}" -- \'\n'
                     '        f\'{shlex.quote(sys.executable)} {shlex.quote(PROGRAM)}\')'),
            ("md", """In CI the same limit is `warp-probe measure --budget 'identities<=N' -- python PROGRAM`, which
exits 8 when a limit is not met ([ci.md](../references/ci.md) has the recipes, the kept caches
first)."""),
            ("code", 'if stand_in:\n    shutil.rmtree(stand_in)  # the stand-in program\'s folder; a program of yours is left as it is'),
            ("md", """Next: the second session, in the course's order (notebooks/README.md): [the import-order
trap](option_not_arrived.ipynb), CS-2, module granularity, CS-10, CS-13, CS-5 on the CPU, the GPU
lesson, and the [capstone](capstone.ipynb) last."""),
        ],
        {"claims_only": True,
         "findings": {"mine": ["CS-1"]},
         "claims": [{"says": "Warp prints one line per module load", "report": "mine", "warp_log_line": "compiled",
                     "identities": 2},
                    {"says": "Take what you measured as the", "output": "identities"}]},
    )


def lesson_capstone():
    notebook(
        "capstone",
        "Capstone: a real program, several mechanisms, fixed in order",
        [
            ("md", """Everything so far, in one program shaped like real code: a factory that hides a
`module="unique"` default, a generic kernel that meets a new dtype late, an option switched on
half-way, and modules built one after another. You will probe it with every replay, read what each
measurement says, fix it in order, and prove the result against the untouched program."""),
            setup_intro(),
            ("code", SETUP),
            ("code", "%%warp_probe --samples 1 --name capstone --whatif auto --whatif-budget 300\n"
                     + LESSONS["capstone"]["exercise"]["code"]),
        ],
        {"findings": {"capstone": ["CS-9", "CS-3", "CS-10"]}, "claims_only": True,
         "claims": [{"says": "Five. Each stage gets", "report": "capstone", "identities": 5},
                    {"says": "its replay still builds `__main__` twice", "report": "capstone",
                     "replay_needs": {"options-at-creation": "still built __main__ 2 times"}},
                    {"says": "**shared-module** was *not applied*", "report": "capstone",
                     "replay_verdict": {"shared-module": "not-applied"}}]},
    )


def lesson_overview():
    notebook(
        "overview",
        "Reading a warp-probe report",
        [
            ("md", """Warp compiles **modules**, not kernels. All the kernels defined in one Python module (here,
one notebook cell run as a script) form one Warp module. Its **identity** is:

> the live kernels and the functions they call (in any module), the `wp.constant` and `wp.static`
> values they read, the module's options and the `wp.config` build flags folded in when it loads,
> the block_dim, and the generic instances

A change to any one of them is a new identity. The **block_dim** is the number of threads per block a
CUDA launch uses (256 by default; the CPU runs 1 whatever a launch asks, unless the experimental
`wp.config.enable_cpu_blocks` is on and the launch gives one), so a
module used on both devices is two identities; a **generic instance** is the typed copy Warp makes of a kernel
written for `Any` when it meets argument types (lesson 6 takes them apart).

Each new identity is a full code generation and native build of *every* kernel in the module. So cold
start is roughly *identities touched × the size of each*, and the waste comes from two things:

- **churn**: a module that changes after it loaded builds again (and again);
- **duplication**: one module built several times, e.g. at several CUDA block dims.

`%%warp_probe` runs a cell in fresh processes with private, empty Warp and CUDA caches (the
**cold** pass), then again on the caches that pass filled (the **warm** pass), and records every
module load. Nothing touches your own caches or this folder."""),
            setup_intro(),
            ("code", SETUP),
            ("md", """This cell launches `stage_a`, then *defines* `stage_b` and launches it, then does the same
with `stage_c`. Probe it:"""),
            ("code", f"""%%warp_probe --samples 3 --name late
{kernel("stage_a", "1.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])

{kernel("stage_b", "2.0")}

wp.launch(stage_b, dim=64, inputs=[a, m])

{kernel("stage_c", "3.0")}

wp.launch(stage_c, dim=64, inputs=[a, m])"""),
            ("md", """How to read it:

- **Summary.** *cold wall* and *warm wall* are the two passes' wall times. **Compile elapsed** is
  cold wall − warm wall: what compiling cost you in waiting. **Module work** is the sum of Warp's
  module-load timers in the cold pass. These are *the two clocks*: module work counts every
  build, even builds that ran in parallel; compile elapsed counts only the time waited, but it
  carries the noise of the whole program. When builds overlap (overlap factor above 1.15),
  judge on compile elapsed.
- **Module identities.** One row per (module, hash, device, block_dim), by build time. Here
  `__main__` appears under **three** hashes: the module was built three times (each build with every
  kernel defined so far), grouped as *hash churn*.
- **Findings.** Each names a mechanism (here CS-1), the evidence, the line that caused it
  (`<cell>:line`), what to do, and what it should save. *Advisory* findings are things worth
  measuring, never instructions.

On the CPU, most of the first build is Warp writing a **precompiled header** (the Warp runtime's
header, compiled by the first build of each process and thread and reused by its later builds
that match it: Warp writes one per block_dim, build mode, optimisation level and compiler flags,
`builtin_bd64_...pch` beside `builtin_bd128_...pch`); the saving is the rest of the rebuilds.

Now the fix: define the three kernels before the first launch."""),
            ("code", f"""%%warp_probe --samples 3 --name hoisted
{kernel("stage_a", "1.0")}

{kernel("stage_b", "2.0")}

{kernel("stage_c", "3.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])
wp.launch(stage_b, dim=64, inputs=[a, m])
wp.launch(stage_c, dim=64, inputs=[a, m])"""),
            ("md", """`%warp_compare` credits the fix only if the program still does the same work (the same
launches, in the same order, with the same dims, dtypes, devices and block_dims) and the change is
beyond the **noise band** (how far the same figure moves between identical runs; the
[glossary](glossary.md) says how it is measured). The **hash receipts** show each module's hashes before and after.
Both probes here took 3 samples: a verdict from fewer than 3 a side says *indicative* beside it (two
samples can land either side of the band by chance), as the later lessons' two-sample compares do;
what they prove is counted (builds, identities), and the time is the hint."""),
            ("code", "%warp_compare late hoisted"),
            ("md", """Every run of this notebook is listed by `%warp_history`; `%warp_export NAME PATH` writes one as
JSON (the same format `warp-probe measure --json` writes) or as an HTML page."""),
            ("code", "%warp_history"),
        ],
        {"findings": {"late": ["CS-1"]}, "verdict": "improved"},
    )


def lesson_cs1_kernels_after_load():
    notebook(
        "cs1_kernels_after_load",
        "CS-1: kernels defined after their module loaded (and the kernel factory)",
        [
            setup_intro(),
            ("code", SETUP),
            ("md", """A helper creates a kernel for each constant it is given. Each call defines a **new** kernel
in the same module, after the module has already loaded, so each one rebuilds the module with every
kernel still alive."""),
            ("code", f"""%%warp_probe --samples 2 --name factory
def make_stage(s: float):
    @wp.kernel
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], s)

    return stage


for s in (1.0, 2.0, 3.0, 4.0, 5.0):
    k = make_stage(s)  # a new kernel, after the first launch
    wp.launch(k, dim=64, inputs=[a, m])"""),
            ("md", """The finding names the kernel factory, the `@wp.kernel` line inside it and the line that
called it. The fix keeps the factory but creates every instance **before** the first launch: the
module then builds once, with all five."""),
            ("code", f"""%%warp_probe --samples 2 --name factory_fixed
def make_stage(s: float):
    @wp.kernel
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], s)

    return stage


stages = [make_stage(s) for s in (1.0, 2.0, 3.0, 4.0, 5.0)]
for k in stages:
    wp.launch(k, dim=64, inputs=[a, m])"""),
            ("code", "%warp_compare factory factory_fixed"),
            ("md", """The same launches, one identity instead of five. Kernels that really depend on data known
only later (plugins, user input) cannot all exist up front: put them in a module of their own, so
that their churn stops rebuilding the stable kernels."""),
        ],
        {"findings": {"factory": ["CS-1"]}, "verdict": "improved",
         "claims": [{"says": "Five times. Each call adds a kernel", "report": "factory", "identities": 5}]},
    )


def lesson_cs2_cache_thrown_away():
    notebook(
        "cs2_cache_thrown_away",
        "CS-2: the kernel cache is never reused",
        [
            setup_intro(),
            ("code", SETUP),
            ("md", """This program turns Warp's kernel cache off, as debugging code sometimes does and forgets.
Every run then builds everything again, and the probe's **warm** pass, run on the cache the cold
pass just filled, compiles as much as the cold one."""),
            ("code", f"""%%warp_probe --samples 2 --name nocache
wp.config.cache_kernels = False

{kernel("stage_a", "1.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])"""),
            ("code", f"""%%warp_probe --samples 2 --name cached
{kernel("stage_a", "1.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])"""),
            ("md", """A cache that is thrown away shows in the warm pass, so compare judges the warm module work
here. The same holds for `wp.clear_kernel_cache()` at start-up, a temporary or timestamped
`WARP_CACHE_PATH`, and CI jobs that do not keep the cache between runs. Never clear a cache that
another process may be using."""),
            ("code", "%warp_compare nocache cached"),
        ],
        {"findings": {"nocache": ["CS-2"]}, "verdict": "improved",
         "claims": [{"says": "still writes every build into `kernel_cache_dir`", "report": "nocache", "cache_written": True,
                     "warm_builds_at_least": 1}]},
    )


def lesson_cs3_option_after_load():
    notebook(
        "cs3_option_after_load",
        "CS-3: module options changed after the first load",
        [
            setup_intro(),
            ("code", SETUP),
            ("md", """Options are part of a module's identity. Changing one after the module loaded makes a new
identity, and the whole module builds again."""),
            ("code", f"""%%warp_probe --samples 2 --name late_option
{kernel("stage_a", "1.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])
wp.set_module_options({{"max_unroll": 4}})  # after the first load
wp.launch(stage_a, dim=64, inputs=[a, m])"""),
            ("md", "The finding shows the option, its old and new value, and the line. Set it before the first load:"),
            ("code", f"""%%warp_probe --samples 2 --name early_option
wp.set_module_options({{"max_unroll": 4}})

{kernel("stage_a", "1.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])
wp.launch(stage_a, dim=64, inputs=[a, m])"""),
            ("code", "%warp_compare late_option early_option"),
            ("md", """If some kernels really need other options, give them a module of their own. A quieter form of
this mistake is setting a `wp.config` global too late: see `option_not_arrived.ipynb`."""),
        ],
        {"findings": {"late_option": ["CS-3"]}, "verdict": "improved",
         "claims": [{"says": "Two: the same kernels under two option sets", "report": "late_option", "identities": 2}]},
    )


def lesson_option_not_arrived():
    notebook(
        "option_not_arrived",
        "The import-order trap: a wp.config option that never arrives",
        [
            ("md", """Warp 1.19 modules copy six globals from `wp.config` **when they are created**, which happens when
their Python module is imported: `enable_backward`, `max_unroll`, `lineinfo`, `compile_time_trace`,
`deterministic` and `deterministic_max_records`. Setting one of those afterwards changes nothing for
those modules, silently. Others are read when the module **loads** (builds), so setting them before
the first launch is enough: `mode`, `optimization_level`, `use_precompiled_headers`, `verify_fp`
(and a few more build flags, such as `line_directives` and `llvm_cuda`).

This lesson uses `enable_backward`: whether each kernel also gets its **adjoint** (backward) code,
the code automatic differentiation runs; a program that never differentiates can build without it
(lesson 9 measures what that saves, and when it is unsafe).

The setup writes a small library to a temporary folder and puts it on the path, as if it were
an installed package."""),
            ("code", f"""%%warp_setup
import os, sys, tempfile
lib = tempfile.mkdtemp(prefix="xwarp-nb-lib-")
with open(os.path.join(lib, "solver_lib.py"), "w") as f:
    f.write('''import warp as wp

{HEAVY}


@wp.kernel
def smooth(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 1.0)
''')
with open(os.path.join(lib, "scene_lib.py"), "w") as f:
    f.write('''import warp as wp
from solver_lib import smooth  # re-exported: the scene's users launch it from here


def make_state(n):
    return (wp.full(n, wp.vec3(1.0, 0.5, 0.25), dtype=wp.vec3),
            wp.full(n, wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), dtype=wp.mat33))
''')
sys.path.insert(0, lib)"""),
            ("code", f"""%%warp_probe --samples 2 --name baseline
import warp as wp
import solver_lib

{STATE}
wp.launch(solver_lib.smooth, dim=64, inputs=[a, m])"""),
            ("md", """This "fix" turns backward code off, but **after** importing the library. The probe sees that the
library's module was built with `enable_backward=True` while the global said False, and names both
lines."""),
            ("code", f"""%%warp_probe --samples 2 --name too_late
import warp as wp
import solver_lib

wp.config.enable_backward = False  # too late: solver_lib's module already copied True

{STATE}
wp.launch(solver_lib.smooth, dim=64, inputs=[a, m])"""),
            ("md", "Compare calls it out: the module's hash did not move, so the option never arrived."),
            ("code", "%warp_compare baseline too_late"),
            ("md", "Set it at the entry point, **before** the import:"),
            ("code", f"""%%warp_probe --samples 2 --name in_time
import warp as wp

wp.config.enable_backward = False  # before the library creates its module

import solver_lib

{STATE}
wp.launch(solver_lib.smooth, dim=64, inputs=[a, m])"""),
            ("code", "%warp_compare baseline in_time"),
            ("md", """Now the hash moved and the build shrank (no adjoint code). Two rules: set such globals in the
application's entry point, never in library code (another application may need gradients from that
library); and after changing an option, check the receipt: an unchanged hash means it never
arrived."""),
        ],
        {"findings": {"too_late": ["option-not-arrived"]}, "verdict": "improved", "option_check": "baseline too_late"},
    )


def lesson_cs6_generic_after_load():
    notebook(
        "cs6_generic_after_load",
        "CS-6: generic instances created after the first load",
        [
            ("md", """A generic kernel (`dtype=Any`) gets one compiled instance per argument type. Meeting a new
type after the module loaded adds an instance, so the module builds again."""),
            ("code", """%%warp_setup
from typing import Any

import warp as wp


@wp.kernel
def relax(a: wp.array(dtype=Any)):
    i = wp.tid()
    x = a[i]
    for j in range(12):
        x = wp.sin(x) * a.dtype(0.9) + wp.cos(x * a.dtype(1.5)) + wp.sqrt(wp.abs(x) + a.dtype(1.0))
        x = wp.exp(-x * x) + wp.tanh(x) * a.dtype(0.3) + wp.log(wp.abs(x) + a.dtype(2.0))
    a[i] = x


a32 = wp.full(8, 1.5, dtype=wp.float32)
a64 = wp.full(8, 1.5, dtype=wp.float64)
a16 = wp.full(8, 1.5, dtype=wp.float16)"""),
            ("code", """%%warp_probe --samples 2 --name on_demand
wp.launch(relax, dim=8, inputs=[a32])
wp.launch(relax, dim=8, inputs=[a64])  # a new instance: the module builds again
wp.launch(relax, dim=8, inputs=[a16])  # and again"""),
            ("code", """%%warp_probe --samples 2 --name registered
wp.overload(relax, {"a": wp.array(dtype=wp.float32)})  # the generic kernel keeps each instance
wp.overload(relax, {"a": wp.array(dtype=wp.float64)})
wp.overload(relax, {"a": wp.array(dtype=wp.float16)})

wp.launch(relax, dim=8, inputs=[a32])
wp.launch(relax, dim=8, inputs=[a64])
wp.launch(relax, dim=8, inputs=[a16])"""),
            ("code", "%warp_compare on_demand registered"),
            ("md", """Register the signatures the program routinely uses with `wp.overload` before the first launch
(the generic kernel keeps the instances it registers; the returned objects are there if you want to
launch one by name). Only those: every registered instance makes each build bigger."""),
        ],
        {"findings": {"on_demand": ["CS-6"]}, "verdict": "improved",
         "claims": [{"says": "Three: each new dtype adds an instance", "report": "on_demand", "identities": 3}]},
    )


# The granularity lesson's four one-line kernels, each declared in the module given for it, then
# launched in turn.
IMAGE_KERNELS = (("blur", "0.5 * a[wp.tid()] + 0.25"), ("sharpen", "2.0 * a[wp.tid()] - 0.5"),
                 ("clamp01", "wp.clamp(a[wp.tid()], 0.0, 1.0)"), ("invert", "1.0 - a[wp.tid()]"))


def image_kernels(modules):
    kernels = [f"""@wp.kernel(module="{module}")
def {name}(a: wp.array(dtype=float)):
    a[wp.tid()] = {body}
""" for (name, body), module in zip(IMAGE_KERNELS, modules)]
    return "\n".join(kernels) + "\nfor k in (blur, sharpen, clamp01, invert):\n    wp.launch(k, dim=256, inputs=[a])"


def lesson_module_granularity():
    notebook(
        "module_granularity",
        "Module granularity: tiny modules (CS-4) and module=\"unique\" (CS-9)",
        [
            ("md", """Every module build has a fixed cost (compiler set-up, object emission, loading) whatever its
size. Four tiny kernels in four modules pay it four times, whether the modules are named or made
by `module="unique"`, which gives a kernel a module of its own named after the kernel and its
hash (meant for kernels made per request or per plugin)."""),
            ("code", """%%warp_setup
import warp as wp

a = wp.ones(256, dtype=float)"""),
            ("code", "%%warp_probe --samples 3 --name four_modules\n"
                     + image_kernels(["blur_ops", "sharpen_ops", "clamp_ops", "invert_ops"])),
            ("md", """The same four kernels with `module="unique"`:"""),
            ("code", "%%warp_probe --samples 3 --name unique\n" + image_kernels(["unique"] * 4)),
            ("md", """And the fix for both: one shared module."""),
            ("code", "%%warp_probe --samples 3 --name one_module\n" + image_kernels(["image_ops"] * 4)),
            ("code", "%warp_compare four_modules one_module"),
            ("code", "%warp_compare unique one_module"),
            ("md", """Group kernels that load together. Do not group everything: kernels with different options,
different stable block_dims or separate edit cycles belong apart, since a bigger module rebuilds
whole whenever one of its kernels changes. And keep `module="unique"` for kernels that would
otherwise churn a shared module (see CS-1), and look for it hidden in factory helpers."""),
        ],
        {"findings": {"four_modules": ["CS-4"], "unique": ["CS-9"]}, "verdict": "improved",
         "claims": [{"says": "the **Identity map** has four rows of one box each both times", "report": "four_modules",
                     "modules": 4},
                    {"says": "the **Identity map** has four rows of one box each both times", "report": "unique",
                     "modules": 4}]},
    )


def lesson_cs10_unused_backward():
    notebook(
        "cs10_unused_backward",
        "CS-10: backward code generated but never used (with a gradient check)",
        [
            ("md", """By default every kernel is generated with two entry points, its forward code and its adjoint
(backward) code for automatic differentiation, in the module's one translation unit, built once:
a bigger build, not a second one. A program that never differentiates pays for code it never
runs. The probe flags it as an **advisory**: an opportunity to measure, not an instruction."""),
            setup_intro(),
            ("code", SETUP),
            ("code", f"""%%warp_probe --samples 2 --name with_backward
{kernel("stage_a", "1.0")}

{kernel("stage_b", "2.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])
wp.launch(stage_b, dim=64, inputs=[a, m])"""),
            ("md", """No adjoint launch, no `wp.Tape`: the advisory appears. Measure the lever, set at the
**entry point**, before any module is created:"""),
            ("md", """The setup cell above already creates this notebook's module (its `@wp.func`), so a global set
in the probed cell would come too late: the module copied `enable_backward` when it was created.
Setting it at the entry point means *before* that, so the setup gets it first:"""),
            ("code", "%%warp_setup\nimport warp as wp\n\nwp.config.enable_backward = False  # this application never differentiates\n\n"
                     + SETUP.split("import warp as wp\n", 1)[1]),
            ("code", f"""%%warp_probe --samples 2 --name forward_only
{kernel("stage_a", "1.0")}

{kernel("stage_b", "2.0")}

wp.launch(stage_a, dim=64, inputs=[a, m])
wp.launch(stage_b, dim=64, inputs=[a, m])"""),
            ("code", "%warp_compare with_backward forward_only"),
            ("md", """**The gradient check.** Turning backward code off is only safe where nothing differentiates.
Here is why it must never be done blindly: the same switch in a program that *does* use a tape gives
**silently wrong gradients**. The derivative of x² at 1, 2, 3 is 2, 4, 6:"""),
            ("code", """import warp as wp

def gradient(enable_backward):
    wp.config.enable_backward = enable_backward

    @wp.kernel(module="unique")
    def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i]

    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=3, inputs=[x], outputs=[y])
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    return x.grad.numpy().tolist()

print("backward on: ", gradient(True))
print("backward off:", gradient(False))
wp.config.enable_backward = True"""),
            ("md", """With backward off the gradient here is zeros, because the only path from `y` back to `x` runs
through `square`. Where other kernels also lead back to `x`, they still add their part: the result is
wrong without being zero, which is harder to spot. Warp 1.19 does say something:
the warning printed above ("Running the tape backwards may produce incorrect gradients ...
enable_backward=False"), at the default log level, once for every recorded launch of such a kernel at every `backward()`; a
launch with `adjoint=True` of such a kernel raises. A warning among a long
run's output is easy to miss, and the numbers are wrong either way. So: measure the lever, set it
at the entry point of an application that never differentiates (never in library code), and split
forward-only kernels from differentiable ones instead of switching a differentiated module off."""),
        ],
        {"findings": {"with_backward": ["CS-10"]}, "verdict": "improved", "absent": {"forward_only": ["CS-10", "option-not-arrived"]},
         "claims": [{"says": "the warning printed above", "output": "may produce incorrect gradients"}],
         "stdout": ["backward on:  [2.0, 4.0, 6.0]",
                                                                                      "backward off: [0.0, 0.0, 0.0]"]},
    )


def lesson_cs5_block_dims_cpu():
    setup = CPU_BLOCKS_SETUP.format(HEAVY=HEAVY)
    notebook(
        "cs5_block_dims_cpu",
        "CS-5 on the CPU: one module launched at several block_dims",
        [
            ("md", """The block_dim of a launch is part of its module's identity. On a GPU that is always so; on
the CPU Warp 1.19 runs every launch at block_dim 1 unless `wp.config.enable_cpu_blocks` is on (Warp's
own config calls it *experimental*: cooperative fibers, block_dims 2 to 1024) and the launch gives a
block_dim above 1; a launch that gives none still runs at 1. With it on, the CPU honours block_dim
the same way: this lesson needs no GPU."""),
            setup_intro(),
            ("code", setup),
            ("md", """Two stages of a solver step, each launched at the block_dim its author tuned it for, both in
the cell's module `__main__`."""),
            ("code", f"""%%warp_probe --samples 2 --name two_block_dims_cpu
@wp.kernel
def stretch(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = churn(wp.vec3(a[i]), wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), 0.5)[0]


@wp.kernel
def relax(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = churn(wp.vec3(a[i]), wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), 1.5)[1]


wp.launch(stretch, dim=1024, inputs=[a], block_dim=64)
wp.launch(relax, dim=1024, inputs=[a], block_dim=128)"""),
            ("md", """The fix keeps both launches as they are and gives each block_dim a module of its own: each
module is then built once, at the one block_dim it is launched at, with only its own kernel."""),
            ("code", f"""%%warp_probe --samples 2 --name split_cpu
@wp.kernel(module="stretch_bd64")
def stretch(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = churn(wp.vec3(a[i]), wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), 0.5)[0]


@wp.kernel(module="relax_bd128")
def relax(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = churn(wp.vec3(a[i]), wp.mat33(0.9, 0.1, 0.0, 0.0, 0.9, 0.1, 0.1, 0.0, 0.9), 1.5)[1]


wp.launch(stretch, dim=1024, inputs=[a], block_dim=64)
wp.launch(relax, dim=1024, inputs=[a], block_dim=128)"""),
            ("code", "%warp_compare two_block_dims_cpu split_cpu"),
            ("md", """The same launches, at the same block_dims: the compare's hash receipts show `__main__`'s two
identities gone and one identity for each new module. Read what moved: the compare leaves the
precompiled-header writes out of cold module work (both sides wrote two, one per block_dim), so its
figure is the kernels each build no longer compiles at a block_dim nobody launches them at, a few
hundred milliseconds here. The two headers, well over a second each on a laptop, are still in the
split's timeline: a split keeps both block_dims, so it keeps both headers. The replay below measures
the lever for them. On a GPU the block_dim is in the source too: a CUDA module's source begins with
`#define WP_TILE_BLOCK_DIM` and its value, before Warp's headers, so each block_dim is a build of its
own, and Warp passes NVRTC a precompiled header of its own (CUDA 12.8 and later). What a second
block_dim costs there is in [the GPU lesson](gpu_mechanisms.ipynb)'s recorded H200 reports, where the
same split is the first fix."""),
        ],
        {"findings": {"two_block_dims_cpu": ["CS-5", "CS-12"]},
         "claims": [{"says": "Twice, once per block_dim, and each build compiles both kernels",
                     "report": "two_block_dims_cpu", "identities": 2, "modules": 1},
                    {"says": "most of it is `header`, the precompiled header Warp writes for each block_dim",
                     "report": "two_block_dims_cpu", "header_share_at_least": 0.5},
                    {"says": "a split keeps both block_dims, so it keeps both headers",
                     "report": "split_cpu", "headers_per_cold_pass": 2}]},
    )


def lesson_cs13_serial_builds():
    notebook(
        "cs13_serial_builds",
        "CS-13: independent modules built one at a time, and a parallel preload",
        [
            ("md", """Several independent modules, each built at its first launch, build one after another.
`wp.force_load(..., max_workers=N)` builds them in parallel before the first launch. This
**moves** work, it does not remove it, so it must be judged on **compile elapsed** (time waited),
never on summed module work (which parallel builds inflate). Code generation stays serial; only
the native compiles overlap, and on the CPU each worker thread writes its own precompiled header.
`wp.force_load` takes the modules themselves (`kernel.module`), and the block_dim the launches use
(1 on the CPU)."""),
            ("code", f"""%%warp_setup
import warp as wp

{HEAVY}

{STATE}"""),
            ("code", """%%warp_probe --samples 2 --name serial
kernels = []
for n in range(4):
    @wp.kernel(module=f"stage_mod_{n}")
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], 1.0)
    kernels.append(stage)

for k in kernels:
    wp.launch(k, dim=64, inputs=[a, m])"""),
            ("code", """%%warp_probe --samples 2 --name parallel
kernels = []
for n in range(4):
    @wp.kernel(module=f"stage_mod_{n}")
    def stage(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
        i = wp.tid()
        a[i] = churn(a[i], m[i], 1.0)
    kernels.append(stage)

wp.force_load(device="cpu", modules=[k.module for k in kernels], block_dim=1, max_workers=2)
for k in kernels:
    wp.launch(k, dim=64, inputs=[a, m])"""),
            ("code", "%warp_compare serial parallel"),
            ("md", """Read the verdict on compile elapsed. The CS-13 advisory appears on the serial run only when its
estimate, after the extra headers the workers would write, leaves a gain; otherwise the report
lists the lever under **Considered and declined**, with its numbers (and `--whatif
parallel-preload` measures it instead of estimating it). On a machine with few
cores, or with one dominant module, there is little to overlap; on the CPU with Warp 1.16 or older keep `max_workers <= 1` (a race in the
CPU JIT, CS-8). Always name the modules (never `modules=None`) and the block_dim the launches use."""),
            ("md", """### Warp's other start-up tools, and where each fits

NVIDIA's guide to compile and start-up time names a few more tools; here is what each does in
Warp 1.19 (each statement is checked on this Warp by `tests/python/test_lesson_statements.py`).

- **`wp.load_module(pkg, recursive=True, max_workers=N)`** preloads a Python package's Warp modules,
  its submodules with `recursive=True`: the application-level form of the `force_load` above, judged
  the same way, on compile elapsed. **`wp.config.load_module_max_workers`** is the worker count both
  use when `max_workers` is not given: `0` (serial) by default; `None` picks min(CPUs, 4).
- **The LTO cache** (MathDx's link-time-optimised device math, CS-7 in the GPU lesson) is a cache of
  its own, the `lto` folder inside the kernel cache: `wp.clear_kernel_cache()` leaves it (it removes
  only the `wp_*` module folders), `wp.clear_lto_cache()` removes it. A CI cache that keeps the kernel
  cache folder keeps both.
- **Ahead of time**: `wp.compile_aot_module(module, device, module_dir=...)` writes a module's
  binaries into a folder the application ships, and `wp.load_aot_module(...)` loads them at start-up
  without building. A CPU binary is built for the machine that builds it: Warp's default
  `wp.config.cpu_compiler_flags` starts with `-march=native` (Warp warns about it when it builds
  ahead of time), so set the flags for the machines that will run it (`-march=x86-64-v3`, or `""`
  for a generic CPU) before building binaries to ship. `warp-probe warmup` does something else: it fills the kernel cache on the machine
  that will run, for exactly the identities the program made there, and a later change rebuilds only
  what it invalidated. An AOT binary serves only the variant it was built for: on the CPU, Warp 1.19
  builds it at the module's `block_dim` option (256, a CUDA default) while CPU launches run at
  block_dim 1, so the first launch builds the module again (a probe shows the build after the AOT
  load) unless the module sets `wp.set_module_options({"block_dim": 1})`. Keep the hash in the file
  names: a changed kernel then fails to load (`FileNotFoundError`) instead of running old code, which
  is what `strip_hash=True` does silently."""),
        ],
        {"flags": {"parallel": ["BUILDS_OVERLAPPED"]}, "judged_on": "compile elapsed"},
    )


# The GPU lesson's cells are the programs its reports were recorded from on the H200: one source.
# Each program runs whole as a script (tests/gpu/); the lesson shows it from its cell mark on, and
# the setup cell is what comes before the mark in the CS-5 program.
GPU_PROGRAMS = HERE.parent / "tests" / "gpu" / "programs"
GPU_CELL_MARK = "# --- the lesson's cell (notebooks/make_notebooks.py reads from here on) ---\n"


def gpu_program_parts(name):
    """(what comes before the cell mark, without its opening comment; the cell) of a recorded program."""
    before, cell = (GPU_PROGRAMS / f"{name}.py").read_text().split(GPU_CELL_MARK)
    lines = before.splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines).strip(), cell.strip()


GPU_SETUP = gpu_program_parts("lesson_two_block_dims")[0]
GPU_CS5_CELL = gpu_program_parts("lesson_two_block_dims")[1]


# The GPU exercise (a CUDA device needed): two block_dims in one module, kept as they are.
GPU_EXERCISE = {
    "expect": "builds-per-module<=1,workload=same,kernels=same",
    "code": """@wp.kernel
def integrate(a: wp.array(dtype=float)):
    a[wp.tid()] = a[wp.tid()] * 0.5

@wp.kernel
def collide(a: wp.array(dtype=float)):
    a[wp.tid()] = wp.max(a[wp.tid()], 0.0)

for step in range(3):
    wp.launch(integrate, dim=a.shape, inputs=[a], block_dim=64)   # tuned for this kernel
    wp.launch(collide, dim=a.shape, inputs=[a], block_dim=512)    # and this one for its own
wp.synchronize()""",
}


def gpu_cell(name, args, body, recorded):
    """A probe on a CUDA device; without one, the report recorded on the H200 under the same name."""
    return f"""probe_or_recorded("{name}", "{args}", {recorded!r}, '''
{body}''')"""


def gpu_intro_cells():
    """What the GPU lesson teaches, and how it runs without a GPU: the recorded reports."""
    return [
            ("md", """## What you will learn

- why one module launched at two block_dims builds twice, every kernel both times (CS-5), and its two fixes
- what MathDx LTO costs at build time and what it buys at run time (CS-7): both measured before choosing
- why a module emitted as PTX can cost time at every load, even from a warm cache
- that a precompiled header can cost more than it saves (CS-12), on CUDA as on the CPU"""),
            ("md", MENTAL_MODEL),
            ("md", """CS-7 only shows on CUDA, and so does the PTX load. CS-5 does not: on the CPU it shows once
`wp.config.enable_cpu_blocks = True` (off by default, every CPU launch then runs at block_dim 1),
and [CS-5 on the CPU](cs5_block_dims_cpu.ipynb) does this lesson's first part without a GPU. CS-12
does not either: Warp 1.19 keeps a precompiled header per compiling thread for Clang (the CPU), and
for NVRTC with CUDA toolkits from 12.8 up to 13.0 (below 12.8 NVRTC has no precompiled headers);
from 13.0 on it passes NVRTC only `-pch` and NVRTC keeps
its own header directories (the recordings below used toolkit 13.4). `--whatif pch-off` measures
it on any device; it is here for its CUDA form.

**Without a GPU** this notebook says so and shows, for each probe, the report its cell recorded on
an NVIDIA H200 (Warp 1.19.0, two samples; the files are in `recorded/h200/`). Each was recorded
from a script in `tests/gpu/programs/`: the block_dim and precompiled-header cells with the setup's
`scale` and `shift` in front, as the probe runs a cell; the tile and PTX cells without them (they
do not use them), so their `__main__` holds only the cell's own kernels. Each cell below is that
script from its cell mark on: the lesson's code and the recorded program are one file.
`%warp_report FILE --name NAME` shows a report and keeps it under
a name, so `%warp_compare` reads it as it reads a probed run. Every step can be read either way."""),
            ("code", """import warp as wp

HAVE_GPU = wp.get_cuda_device_count() > 0
print("CUDA devices:", wp.get_cuda_device_count() if HAVE_GPU
      else "none: the GPU probes below are not run; each shows the report its cell recorded on an H200")


def probe_or_recorded(name, options, recorded, cell):
    if HAVE_GPU:
        get_ipython().run_cell_magic("warp_probe", f"{options} --name {name}", cell)
    else:
        print(f"no CUDA device: {name} not probed; recorded on an H200:")
        get_ipython().run_line_magic("warp_report", f"recorded/h200/{recorded}.json --name {name}")"""),
            ("code", "%%warp_setup\n" + GPU_SETUP),
    ]


def gpu_cs5_cells():
    """CS-5 predicted, probed, read, and its two fixes."""
    return [
            ("md", """## Predict

`scale` is launched at block_dim 128 and `shift` at 256; both live in the notebook's module. How many
identities will it build, and which kernels does each build compile?

<details><summary>Answer (after you ran it)</summary>

Two identities of one module, one per block_dim, and each compiles **both** kernels: at 128 it
compiles `shift`, which no launch uses at 128, and at 256 `scale`. The block_dim is part of the
identity because it is compiled into the code. On the H200: 2 identities, 928 ms of module work, and
the CS-5 finding puts 456 ms of it on kernels never launched at their block_dim.

</details>"""),
            ("code", gpu_cell("two_block_dims", "--samples 2", GPU_CS5_CELL, "lesson_two_block_dims")),
            ("md", """## Read the report

- The **CS-5** finding names the module, its block_dims and the build time spent on kernels no launch
  used at that block_dim.
- The **Identity map** has two boxes for the module; the arrow between them reads *block_dim 128 ->
  256*: the same kernels, a new identity.
- **CS-10** rides along (backward code no one used): the CS-10 lesson's advisory."""),
            ("md", """## The fix

Two fixes, chosen by what the kernels need. If they run as well at one block_dim, launch both at it:
one identity. That changes a launch, so `%warp_compare` calls the pair **invalid** (the workload
changed) and shows why; read each report's module work instead (928 ms against 610 ms on the H200)."""),
            ("code", gpu_cell("one_block_dim", "--samples 2", gpu_program_parts("lesson_one_block_dim")[1],
                              "lesson_one_block_dim")),
            ("code", "%warp_compare two_block_dims one_block_dim"),
            ("md", """If each kernel needs its own block_dim, give each stable block_dim a module of its own
(`@wp.kernel(module="ops_bd128")`): the same launches, each module built once at the block_dim it is
launched at, and compare judges it. On the H200 the two kernels here are too small for the split to
show beyond the noise (`bd_spread` against `bd_split` in `references/measurement.md`); with large
kernels, each build compiles half as much. The exercise below is that split."""),
    ]


def gpu_cs7_ptx_cs12_cells():
    """CS-7 both ways, the PTX load, CS-12."""
    return [
            ("md", """**CS-7.** A tile matrix multiply uses MathDx and builds LTO artifacts during code generation: time
inside the module load but outside the NVRTC compile. On a GPU the probe below also replays
`mathdx-off`, which measures both sides of the trade: build time, and the steady-state time of the
GEMM's launches."""),
            ("code", gpu_cell("tiles", "--samples 1 --whatif mathdx-off", gpu_program_parts("lesson_tiles")[1],
                              "lesson_tiles")),
            ("code", gpu_cell("tiles_no_mathdx", "--samples 1", gpu_program_parts("lesson_tiles_no_mathdx")[1],
                              "lesson_tiles_no_mathdx")),
            ("code", "%warp_compare tiles tiles_no_mathdx"),
            ("md", """On the H200 the GEMM with MathDx built in 36.9 s, 29.2 s of it generating 3 LTO artifacts, and
wrote 23.5 MB to the kernel cache; without MathDx it built in 1.7 s. The other side of the trade is
kernel time: the `mathdx-off` replay of a program with many such GEMMs measured 95% less build and
each steady-state GEMM launch going from 0.03 ms to 0.04 ms (`references/measurement.md`, the
what-if table on the H200). A program that launches the GEMM millions of times may want MathDx and a
kept cache; one that launches it a few times may not. Measure both, then choose."""),
            ("md", """**The PTX load.** `wp.config.cuda_output = "ptx"` ships one binary for several GPU architectures,
and the driver compiles it to machine code at load. Where the driver is older than the CUDA toolkit
Warp was built with, Warp compiles the PTX itself at every load, and no cache keeps the result:
even the warm pass, on a full kernel cache, pays it."""),
            ("code", gpu_cell("ptx", "--samples 2", gpu_program_parts("ptx_module")[1], "ptx_module")),
            ("md", """On the H200 (driver CUDA 13.0, Warp's toolkit 13.4) the recorded module still took 784 ms to load
in the warm pass: the `ptx-load-compile` finding. Leaving the output format to Warp (CUBIN whenever
the driver is older than its toolkit) removes it on a GPU that Warp's NVRTC can build a CUBIN for.
On a GPU newer than Warp's NVRTC (`is_cubin_supported` false) Warp emits PTX whatever the driver, and
there, as where PTX must stay, only a driver at least as new as the toolkit lets the driver's
compute cache keep the result."""),
            ("md", """**CS-12.** With a few small modules, writing the precompiled header may cost more than it saves.
Compare the default against `wp.config.use_precompiled_headers = False` set at the entry point."""),
            ("code", gpu_cell("pch_on", "--samples 2", gpu_program_parts("lesson_pch_on")[1], "lesson_pch_on")),
            ("code", gpu_cell("pch_off", "--samples 2", gpu_program_parts("lesson_pch_off")[1], "lesson_pch_off")),
            ("code", "%warp_compare pch_on pch_off"),
    ]


def gpu_closing_cells():
    """The lever, what to remember, and the exercise (probed only on a CUDA device)."""
    return [
            ("md", """## Measure the lever without editing

`mathdx-off` (CS-7) and `pch-off` (CS-12) replay the unmodified cell with the switch held off
(`--whatif mathdx-off`, as the tiles probe above does on a GPU). CS-5 has no lever: the block_dim is
a launch parameter, so splitting the module is a change to the program; `warp-probe fix` says so
rather than guess one."""),
            ("md", """## Remember

- The block_dim is part of a module's identity: every block_dim a module is launched at builds every
  kernel in it.
- Kernels launched at one stable block_dim belong in a module of their own; never merge or drop
  kernels to fix CS-5.
- MathDx trades build time for kernel time: measure both sides (`mathdx-off` does) before choosing.
- PTX loads compile at every load when the driver is older than Warp's toolkit; leave the output
  format to Warp unless one binary must serve several architectures, and on a GPU newer than Warp's
  NVRTC (which gets PTX whatever is set) keep the driver at least as new as the toolkit."""),
            ("md", f"""## Exercise

This one needs a CUDA device; without one the cells below say so and run nothing. `integrate` is tuned
for block_dim 64 and `collide` for 512, and both live in one module. Keep both block_dims (the
launches must stay as they are) and make every module build once.

The first cell probes the program as it is (`exercise_broken`); edit the one after it until it says
**met** under its report."""),
            ("code", f"""if HAVE_GPU:
    get_ipython().run_cell_magic("warp_probe", "--samples 1 --name exercise_broken", '''
{GPU_EXERCISE["code"]}''')
else:
    print("no CUDA device: the exercise needs one; not probed")"""),
            ("md", """<details><summary>Hint</summary>

Which decorator argument chooses a kernel's module? One module per stable block_dim.

</details>"""),
            ("code", f"""if HAVE_GPU:
    get_ipython().run_cell_magic("warp_probe", "--samples 1 --name exercise --exercise gpu_mechanisms", '''
{GPU_EXERCISE["code"]}''')
else:
    print("no CUDA device: the exercise needs one; not probed")"""),
    ]


def lesson_gpu_mechanisms():
    notebook(
        "gpu_mechanisms",
        "On a GPU: block_dim duplication (CS-5), MathDx LTO (CS-7), the PTX load, the precompiled header (CS-12)",
        gpu_intro_cells() + gpu_cs5_cells() + gpu_cs7_ptx_cs12_cells() + gpu_closing_cells(),
        {"gpu": True, "lesson": True, "exercise": False,
         "recorded": ["two_block_dims", "one_block_dim", "tiles", "tiles_no_mathdx", "ptx_module", "pch_on", "pch_off"],
         "findings": {"two_block_dims": ["CS-5"], "tiles": ["CS-7"], "ptx_module": ["ptx-load-compile"]},
         "claims": [{"says": "On the H200: 2 identities, 928 ms of module work", "report": "two_block_dims",
                     "identities": 2, "output": "928 ms"},
                    {"says": "456 ms of it on kernels never launched", "report": "two_block_dims", "output": "456 ms"},
                    {"says": "still took 784 ms to load", "report": "ptx_module", "output": "784 ms"},
                    {"says": "built in 36.9 s", "report": "tiles", "output": "36.90 s"}]},
    )


def lesson_whatif():
    notebook(
        "whatif",
        "What-if replays: measure a lever before you change the code",
        [
            ("md", """A finding says what to change and estimates what it would save. A **what-if replay** measures it
instead, on the program as it is: `%%warp_probe --whatif` runs the cell again with one **lever**
applied from outside (the probe's shim sets it in the replayed processes only; your code and files
are never touched), interleaves those samples with the baseline's, and judges the difference the
way `%warp_compare` does: the same launches, beyond the noise band.

The levers (`warp-probe mechanisms` lists which mechanism each one fixes):

| lever | what the replay does | lesson |
| --- | --- | --- |
| `options-at-creation` | gives each module, when it is created, the options it ended with | 4, 5 |
| `preregister-overloads` | registers the generic instances (typed copies of an `Any` kernel) the baseline built, before the first load | 6 |
| `keep-cache` | makes cache clears and per-run cache settings no-ops | 7 |
| `shared-module`, `merge-modules` | puts the kernels that each had a module of their own (`module="unique"`), or the small modules, in one module | 8 |
| `backward-off` | holds `enable_backward` off: no adjoint code, the code automatic differentiation runs backward | 9 |
| `parallel-preload` | preloads the baseline's modules at the first launch, with several workers | 10 |
| `pch-off`, `mathdx-off` | hold off the precompiled header (Warp's runtime header, written per thread, block_dim and build mode and reused by the later builds that match it) and MathDx (NVIDIA's device math libraries, used by tile operations on a GPU) | 11 (`pch-off`), 12 |

You need none of those lessons to read a replay: each lever changes one thing, and the verdict reads
the same for all.

CS-1 and CS-5 have no lever: moving a kernel definition or splitting a module by block_dim is a
change to the program itself."""),
            setup_intro(),
            ("code", SETUP),
            ("md", """This cell predicts and corrects a state with two kernels, and turns loop unrolling down
(`max_unroll`) for the corrector after the module has already loaded. A module's options are part
of its identity (the overview's identity map), so the module builds twice. The option changes the
code Clang compiles (`churn`'s six-step loop stays a loop); `fast_math` would not have: on the CPU
Warp never passes it to the compiler, so it changes the hash and nothing else; the CS-3 lesson takes that mechanism apart
on another program, here it is simply something to measure a lever on. `--whatif` with no value replays the levers of the findings, the most time at stake
first, within a budget of six times the first sample's cold wall time (`--whatif-budget` sets
another). A replay costs as many samples as the probe takes, each the program run cold then warm
with the lever, interleaved with the baseline's own samples; what does not fit is listed as *not run*."""),
            ("code", f"""%%warp_probe --samples 1 --name unroll_late --whatif
{kernel("predict", "1.0")}


{kernel("correct", "0.5")}


for step in range(2):
    wp.launch(predict, dim=64, inputs=[a, m])
    wp.set_module_options({{"max_unroll": 2}})  # meant for correct, switched between launches
    wp.launch(correct, dim=64, inputs=[a, m])"""),
            ("md", """Read the **What-if replays** table: each lever's verdict (*improved*, *regressed*,
*inconclusive*, *invalid* when the lever changed what the program launches or broke it,
*not-applied* when there was nothing to move), the measured saving beside the estimate, the noise
band and the sample count. Each finding now carries a **measured** line. An advisory whose lever
did not pay moves to **Considered and declined**, the ledger of levers that were tried and why
they were rejected: a declined lever is never recommended.

A stored run can be replayed later, lever by lever: here one replay sample judged against the run's
own sample (`--reuse-baseline`, quick for a class: one run of the program cold then warm; without
it the replay takes as many fresh baseline samples, interleaved with its own, twice the runs and
fairer when the machine may have changed). One sample
a side is *indicative*, and the verdict says so: `--samples 3` or `--until-settled` settles it."""),
            ("code", "%warp_whatif unroll_late options-at-creation --samples 1 --reuse-baseline"),
            ("md", """What to remember: a replay measures the lever on *this* machine and program, with the
workload checked; it is the number to act on, and the estimate is only where to look first.
The fix itself is still yours to write: here, `correct` in a module of its own with the option it
needs (`@wp.kernel(module="unique", module_options={"max_unroll": 2})`), so `predict` keeps the
default; setting the option before the first launch would also remove the rebuild, but for both
kernels."""),
        ],
        {"findings": {"unroll_late": ["CS-3"]}, "whatif": {"unroll_late": {"options-at-creation": "improved"}}},
    )


NOTEBOOKS = (
    lesson_primer,
    lesson_overview,
    lesson_cs1_kernels_after_load,
    lesson_cs2_cache_thrown_away,
    lesson_cs3_option_after_load,
    lesson_option_not_arrived,
    lesson_module_granularity,
    lesson_cs6_generic_after_load,
    lesson_cs10_unused_backward,
    lesson_cs13_serial_builds,
    lesson_cs5_block_dims_cpu,
    lesson_gpu_mechanisms,
    lesson_whatif,
    lesson_capstone,
    lesson_own_script,
)


def exercises():
    """Each exercise as it ships: its limits, its broken form (the cell after the magic line) and the
    setup it runs after.
    Installed as share/xwarp/exercises.json: %%warp_probe --exercise NAME judges an answer by these,
    not by the --expect or the exercise_broken cell a student may have edited."""
    shipped = {name: {"expect": exercise_expect(spec["exercise"]), "broken": spec["exercise"]["code"]}
               for name, spec in LESSONS.items() if "exercise" in spec}
    shipped["gpu_mechanisms"] = {"expect": GPU_EXERCISE["expect"], "broken": GPU_EXERCISE["code"]}
    for name, exercise in shipped.items():
        # the setup is part of the exercise as shipped: an edited %%warp_setup cell is not judged
        assert name in EXERCISE_SETUPS, f"{name}: no --exercise cell after a %%warp_setup cell (write the notebooks first)"
        exercise["setup"] = EXERCISE_SETUPS[name]
    return dict(sorted(shipped.items()))


def main():
    for write in NOTEBOOKS:
        write()
    (HERE / "exercises.json").write_text(json.dumps(exercises(), indent=1) + "\n")


if __name__ == "__main__":
    main()
