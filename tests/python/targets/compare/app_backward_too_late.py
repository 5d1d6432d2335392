# The "fix" sets the global after the library was imported: lib_solver's module already
# copied enable_backward=True when it was created, so this never reaches it.
import lib_solver
import warp as wp

wp.config.enable_backward = False

x = wp.ones(16, dtype=float)
y = wp.zeros(16, dtype=float)
wp.launch(lib_solver.relax, dim=16, inputs=[x, y])
print(float(y.numpy().sum()))
