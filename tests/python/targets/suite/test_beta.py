import numpy as np
import warp as wp

import shared_kernels


@wp.kernel
def square(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] * a[i]


def test_square_builds_this_files_module():
    a = wp.full(8, 3.0, dtype=float)
    wp.launch(square, dim=8, inputs=[a])
    assert np.allclose(a.numpy(), 9.0)


def test_scale_again():
    a = wp.ones(8, dtype=float)
    wp.launch(shared_kernels.scale, dim=8, inputs=[a, 3.0])
    assert np.allclose(a.numpy(), 3.0)
