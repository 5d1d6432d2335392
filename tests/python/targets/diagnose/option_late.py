# option-not-arrived: the global is set after the library was imported.
import lib_heavy
import warp as wp

wp.config.enable_backward = False

a = wp.zeros(8, dtype=wp.vec3)
m = wp.zeros(8, dtype=wp.mat33)
wp.launch(lib_heavy.smooth, dim=8, inputs=[a, m])
