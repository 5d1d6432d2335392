"""Tests that do what tests may do: keep user_properties as a tuple, add their own warp_builds
property, carry ids with control characters and bytes that are not UTF-8, differentiate through a
kernel (so that a backward-off lever, were it applied, would break them), and fail on purpose."""
import pytest
import warp as wp


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_gradients_flow_through_the_kernel():
    x = wp.array([3.0], dtype=float, requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, dim=1, inputs=[x, y])
    tape.backward(grads={y: wp.ones(1, dtype=float)})
    assert x.grad.numpy()[0] == 6.0


def test_keeps_its_properties_as_a_tuple(request):
    request.node.user_properties = tuple(request.node.user_properties)


def test_has_its_own_warp_builds_property(record_property):
    record_property("warp_builds", "mine")


@pytest.mark.parametrize("name", ["esc\x1b[31mred", "bidi\u202eevil", "bytes" + b"\xff\xfe".decode("utf-8", "surrogateescape")])
def test_odd_ids(name):
    assert "bytes" not in name  # the undecodable one fails, as a test of the user's may
