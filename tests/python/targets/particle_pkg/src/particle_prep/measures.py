"""Measures over the particle cloud. make_norm is a factory of a generic kernel (its instance is
made at the launch); make_family returns a factory defined inside itself, which no file can call
by name."""
from typing import Any

import warp as wp


def make_norm(scale: float):
    @wp.kernel
    def norm(x: wp.array(dtype=Any), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.length(x[i]) * scale

    return norm


def make_family(order: int):
    def make(bias: float):
        @wp.kernel
        def moment(x: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = out[i] + wp.pow(wp.length(x[i]), float(order)) + bias

        return moment

    return make
