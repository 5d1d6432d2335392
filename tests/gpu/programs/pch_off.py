# CS-12 lever: serial.py with wp.config.use_precompiled_headers = False at the entry point.
import os

import warp as wp

# cuda:0 by default; the same lever is measured on the CPU with XWARP_SCENARIO_DEVICE=cpu
DEVICE = os.environ.get("XWARP_SCENARIO_DEVICE", "cuda:0")

wp.config.use_precompiled_headers = False

@wp.func
def churn(v: wp.vec3, m: wp.mat33, s: float):
    for j in range(6):
        v = m @ v + wp.cross(v, wp.vec3(1.0, 2.0, 3.0)) * wp.sin(s + float(j))
        v = wp.normalize(v) * wp.length(v + wp.vec3(0.5))
    return v


@wp.kernel(module="stage_0")
def stage_0(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 0.0)


@wp.kernel(module="stage_1")
def stage_1(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 1.0)


@wp.kernel(module="stage_2")
def stage_2(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 2.0)


@wp.kernel(module="stage_3")
def stage_3(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 3.0)


@wp.kernel(module="stage_4")
def stage_4(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 4.0)


@wp.kernel(module="stage_5")
def stage_5(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 5.0)


a = wp.zeros(1024, dtype=wp.vec3, device=DEVICE)
m = wp.zeros(1024, dtype=wp.mat33, device=DEVICE)
for k in (stage_0, stage_1, stage_2, stage_3, stage_4, stage_5):
    wp.launch(k, dim=1024, inputs=[a, m])
wp.synchronize()
