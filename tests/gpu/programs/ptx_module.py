# One module, for the cost of a (cached) load when the driver's compute cache is cold.
import warp as wp


@wp.kernel
def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


x = wp.ones(1 << 16, dtype=float, device="cuda:0")
y = wp.zeros(1 << 16, dtype=float, device="cuda:0")
wp.launch(saxpy, dim=x.shape, inputs=[x, y, 2.0])
wp.synchronize()
