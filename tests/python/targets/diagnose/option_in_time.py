# The option set before the import: it reaches the library's module.
import warp as wp

wp.config.enable_backward = False

import lib_heavy  # noqa: E402

a = wp.zeros(8, dtype=wp.vec3)
m = wp.zeros(8, dtype=wp.mat33)
wp.launch(lib_heavy.smooth, dim=8, inputs=[a, m])
