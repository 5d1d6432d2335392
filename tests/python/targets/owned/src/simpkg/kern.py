import warp as wp


@wp.kernel
def first(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0


def run():
    a = wp.zeros(16, dtype=float)
    wp.launch(first, dim=16, inputs=[a])

    @wp.kernel
    def second(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0

    wp.launch(second, dim=16, inputs=[a])
    print("sum", float(a.numpy().sum()))
