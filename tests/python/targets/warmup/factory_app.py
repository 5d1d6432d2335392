"""The package plus two kernels factories make at run time: one from plain arguments (the
warm-up calls the factory again) and one from an object it cannot re-create."""
import warp as wp

from wpkg import reduce

wp.init()


def make_offset(v: float):
    @wp.kernel
    def offset(a: wp.array(dtype=wp.float32)):
        i = wp.tid()
        a[i] = a[i] + v

    return offset


class Settings:
    def __init__(self, gain):
        self.gain = gain


def make_scaled(settings):
    g = settings.gain

    @wp.kernel(module="unique")
    def scaled(a: wp.array(dtype=wp.float32)):
        i = wp.tid()
        a[i] = a[i] * g

    return scaled


N = 64
a = wp.ones(N, dtype=wp.float32)
wp.launch(reduce.square, dim=N, inputs=[a])
wp.launch(make_offset(2.0), dim=N, inputs=[a])
wp.launch(make_scaled(Settings(3.0)), dim=N, inputs=[a])
print("ok", float(a.numpy()[0]))
