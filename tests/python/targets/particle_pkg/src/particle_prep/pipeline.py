"""The pipeline: each stage is made just before its own launch, and every launch goes through
one helper method."""
import warp as wp

from particle_prep.stages import make_stage

wp.config.use_precompiled_headers = False  # each build self-contained: the verdicts stand clear of the noise


class Pipeline:
    def __init__(self, n):
        self.n = n
        self.x = wp.zeros(n, dtype=wp.vec3)
        self.v = wp.zeros(n, dtype=wp.vec3)

    def _launch(self, kernel):
        wp.launch(kernel, dim=self.n, inputs=[self.x, self.v])

    def run(self):
        center = make_stage(1.0, 0.99)
        self._launch(center)
        spread = make_stage(2.0, 0.5)
        self._launch(spread)
        relax = make_stage(0.5, 0.9, steps=4)
        self._launch(relax)
        wp.synchronize()
        print("ok", round(float(self.x.numpy()[0][0]), 6))
