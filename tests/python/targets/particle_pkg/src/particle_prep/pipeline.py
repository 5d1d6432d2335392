"""The pipeline: each stage is made just before its own launch, and every launch goes through
one helper method; the plugins' kernels come last, made in a loop."""
import warp as wp

from particle_prep.measures import make_family, make_norm
from particle_prep.plugins import Plugin
from particle_prep.stages import make_stage

wp.config.use_precompiled_headers = False  # each build self-contained: the verdicts stand clear of the noise


class Pipeline:
    def __init__(self, n, plugins=()):
        self.n = n
        self.x = wp.zeros(n, dtype=wp.vec3)
        self.v = wp.zeros(n, dtype=wp.vec3)
        self.plugins = plugins

    def _launch(self, kernel):
        wp.launch(kernel, dim=self.n, inputs=[self.x, self.v])

    def run(self):
        center = make_stage(1.0, 0.99)
        self._launch(center)
        spread = make_stage(2.0, 0.5)
        self._launch(spread)
        relax = make_stage(0.5, 0.9, steps=4)
        self._launch(relax)
        for plugin in self.plugins:
            self._launch(plugin.make_kernel())
        wp.synchronize()
        print("ok", round(float(self.x.numpy()[0][0]), 6))

    def measure(self):
        out = wp.zeros(self.n, dtype=float)
        wp.launch(make_norm(2.0), dim=self.n, inputs=[self.x, out])
        wp.launch(make_family(2)(0.5), dim=self.n, inputs=[self.x, out])
        return float(out.numpy().sum())


__all__ = ["Pipeline", "Plugin"]
