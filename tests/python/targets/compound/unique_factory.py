"""CS-9 through a factory whose keyword default is module="unique": four stable filters, each
built as a module of its own."""
import warp as wp


def make_filter(weight, module="unique"):
    @wp.kernel(module=module)
    def filt(a: wp.array(dtype=float), b: wp.array(dtype=float)):
        i = wp.tid()
        b[i] = a[i] * weight

    return filt


filters = [make_filter(0.5), make_filter(1.5), make_filter(2.5)]
filters.append(make_filter(3.5))

a = wp.ones(256, dtype=float)
b = wp.zeros(256, dtype=float)
for f in filters:
    wp.launch(f, dim=256, inputs=[a, b])
wp.synchronize()
print("ok", b.numpy()[0])
