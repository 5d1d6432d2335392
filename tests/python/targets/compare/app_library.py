# Baseline: uses the library as it is.
import lib_solver
import warp as wp

x = wp.ones(16, dtype=float)
y = wp.zeros(16, dtype=float)
wp.launch(lib_solver.relax, dim=16, inputs=[x, y])
print(float(y.numpy().sum()))
