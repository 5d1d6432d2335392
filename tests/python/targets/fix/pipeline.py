"""A particle pipeline whose three stage kernels come from a factory with a hidden
module="unique" default, each created just before its own launch: three modules built one
after another (CS-9), and sharing one module as the code stands would rebuild it at each new
kernel. The fix is two changes: a named module, and the stages created before the first launch."""
import warp as wp

wp.config.use_precompiled_headers = False  # each build self-contained: the verdicts stand clear of the noise


def make_stage(gain, damping, module="unique"):
    @wp.kernel(module=module)
    def stage(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        p = x[i]
        for k in range(8):
            p = p + wp.vec3(wp.sin(p[1] * gain), wp.cos(p[2] * gain), wp.sin(p[0] * damping)) * 0.01
        v[i] = v[i] * damping + (p - x[i]) * gain
        x[i] = p

    return stage


def main():
    n = 1024
    x = wp.zeros(n, dtype=wp.vec3)
    v = wp.zeros(n, dtype=wp.vec3)
    advect = make_stage(1.0, 0.99)
    wp.launch(advect, dim=n, inputs=[x, v])
    collide = make_stage(2.0, 0.5)
    wp.launch(collide, dim=n, inputs=[x, v])
    relax = make_stage(0.5, 0.9)
    wp.launch(relax, dim=n, inputs=[x, v])
    wp.synchronize()
    print("ok", float(x.numpy()[0][0]))


if __name__ == "__main__":
    main()
