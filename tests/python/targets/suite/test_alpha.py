import numpy as np
import pytest
import warp as wp

import shared_kernels


def make_offset(name, amount):
    """A module per parametrisation, named after it, whose code does not depend on it."""

    @wp.kernel(module=wp.get_module(f"offset_{name}"))
    def offset(a: wp.array(dtype=float), s: float):
        i = wp.tid()
        a[i] = a[i] + s

    return offset


def test_scale_builds_the_shared_module():
    a = wp.ones(8, dtype=float)
    wp.launch(shared_kernels.scale, dim=8, inputs=[a, 2.0])
    assert np.allclose(a.numpy(), 2.0)


def test_shift_reuses_it():
    a = wp.ones(8, dtype=float)
    wp.launch(shared_kernels.shift, dim=8, inputs=[a, 1.0])
    assert np.allclose(a.numpy(), 2.0)


@pytest.mark.parametrize("name,amount", [("small", 1.0), ("large", 5.0)])
def test_offset_per_parametrisation(name, amount):
    a = wp.zeros(8, dtype=float)
    wp.launch(make_offset(name, amount), dim=8, inputs=[a, amount])
    assert np.allclose(a.numpy(), amount)
