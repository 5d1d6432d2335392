# A test suite as the measured command: `python -m pytest -q test_kernels.py`.
import warp as wp


@wp.kernel
def inc(a: wp.array(dtype=int)):
    a[wp.tid()] += 1


def test_inc():
    a = wp.zeros(4, dtype=int)
    wp.launch(inc, dim=4, inputs=[a])
    assert a.numpy().sum() == 4
