"""Optional per-particle transforms, each a kernel of its own: a plugin's kernel is made while
the pipeline runs, in a loop over the plugins a user configured, so it must stay
module="unique" (a shared module would churn at each plugin)."""
import warp as wp


class Plugin:
    def __init__(self, kind, amount):
        self.kind = kind
        self.amount = amount

    def make_kernel(self):
        if self.kind == "bias":

            @wp.kernel(module="unique")
            def bias(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
                i = wp.tid()
                x[i] = x[i] + v[i] * 0.5

            return bias
        raise ValueError(self.kind)
