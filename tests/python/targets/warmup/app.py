"""The package's application: every kernel it launches is defined in wpkg, so a warm-up that
imports wpkg can build all of them before the program runs."""
import warp as wp

from wpkg import blocks, generic_ops, reduce

wp.config.enable_cpu_blocks = True
wp.init()

N = 256
a32 = wp.ones(N, dtype=wp.float32)
a64 = wp.ones(N, dtype=wp.float64)
out = wp.zeros(1, dtype=wp.float32)
wp.launch(generic_ops.scale, dim=N, inputs=[a32, wp.float32(0.5)])
wp.launch(generic_ops.scale, dim=N, inputs=[a64, wp.float64(0.5)])
blocks.run(a32, 64)
blocks.run(a32, 128)
wp.launch(reduce.square, dim=N, inputs=[a32])
wp.launch(reduce.total, dim=N, inputs=[a32, out])
print("ok", float(out.numpy()[0]))
