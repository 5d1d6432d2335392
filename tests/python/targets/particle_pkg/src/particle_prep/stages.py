"""Stage kernels, specialised by plain arguments. The factory hides module="unique" in a default,
so every stage it makes is a module of its own, built on its own."""
import warp as wp

from particle_prep.util import cache_kernel


@cache_kernel
def make_stage(gain: float, damping: float, steps: int = 8, module="unique"):
    @wp.kernel(module=module)
    def stage(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        p = x[i]
        for k in range(steps):
            p = p + wp.vec3(wp.sin(p[1] * gain), wp.cos(p[2] * gain), wp.sin(p[0] * damping)) * 0.01
        v[i] = v[i] * damping + (p - x[i]) * gain
        x[i] = p

    return stage
