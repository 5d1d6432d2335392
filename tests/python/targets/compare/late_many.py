# Eight kernels launched, then a ninth defined after the module loaded: the whole
# module (nine kernels) builds again.
import warp as wp

@wp.kernel
def stage0(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 1.0 + wp.cos(a[i] * 2.0)

@wp.kernel
def stage1(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 2.0 + wp.cos(a[i] * 3.0)

@wp.kernel
def stage2(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 3.0 + wp.cos(a[i] * 4.0)

@wp.kernel
def stage3(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 4.0 + wp.cos(a[i] * 5.0)

@wp.kernel
def stage4(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 5.0 + wp.cos(a[i] * 6.0)

@wp.kernel
def stage5(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 6.0 + wp.cos(a[i] * 7.0)

@wp.kernel
def stage6(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 7.0 + wp.cos(a[i] * 8.0)

@wp.kernel
def stage7(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = wp.sin(a[i]) * 8.0 + wp.cos(a[i] * 9.0)


def run():
    a = wp.ones(64, dtype=float)
    for k in (stage0, stage1, stage2, stage3, stage4, stage5, stage6, stage7):
        wp.launch(k, dim=64, inputs=[a])

    @wp.kernel
    def finish(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 0.5

    wp.launch(finish, dim=64, inputs=[a])
    print(float(a.numpy().sum()))


run()
