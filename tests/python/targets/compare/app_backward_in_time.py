# The working fix: the global is set at the entry point, before the library is imported.
import warp as wp

wp.config.enable_backward = False

import lib_solver  # noqa: E402

x = wp.ones(16, dtype=float)
y = wp.zeros(16, dtype=float)
wp.launch(lib_solver.relax, dim=16, inputs=[x, y])
print(float(y.numpy().sum()))
