# One module emitted as PTX, for the cost of loading it from Warp's cache (a cached load).
# --- the lesson's cell (notebooks/make_notebooks.py reads from here on) ---
import os

import warp as wp

# PTX, what a program sets to ship one binary for several GPUs: even a cached load then compiles
# the PTX to machine code (in the driver, or in Warp when the driver is older than Warp's
# toolkit); a CUBIN would not (XWARP_CUDA_OUTPUT=cubin: the device scenarios' contrast)
wp.config.cuda_output = os.environ.get("XWARP_CUDA_OUTPUT", "ptx")


@wp.func
def churn(v: wp.vec3, m: wp.mat33, s: float):
    for j in range(8):
        v = m @ v + wp.cross(v, wp.vec3(1.0, 2.0, 3.0)) * wp.sin(s + float(j))
        v = wp.normalize(v) * wp.length(v + wp.vec3(0.5))
    return v


@wp.kernel
def step_a(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(a[i], m[i], 0.0)


@wp.kernel
def step_b(a: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    a[i] = churn(churn(a[i], m[i], 1.0), m[i], 2.0)


a = wp.zeros(1024, dtype=wp.vec3, device="cuda:0")
m = wp.zeros(1024, dtype=wp.mat33, device="cuda:0")
wp.launch(step_a, dim=1024, inputs=[a, m])
wp.launch(step_b, dim=1024, inputs=[a, m])
wp.synchronize()
