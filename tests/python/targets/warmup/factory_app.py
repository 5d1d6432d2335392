"""The package plus a kernel a factory makes at run time: a warm-up cannot import it."""
import warp as wp

from wpkg import reduce

wp.init()


def make_offset(v: float):
    @wp.kernel
    def offset(a: wp.array(dtype=wp.float32)):
        i = wp.tid()
        a[i] = a[i] + v

    return offset


N = 64
a = wp.ones(N, dtype=wp.float32)
wp.launch(reduce.square, dim=N, inputs=[a])
wp.launch(make_offset(2.0), dim=N, inputs=[a])
print("ok", float(a.numpy()[0]))
