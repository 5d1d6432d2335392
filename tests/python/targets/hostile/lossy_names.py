"""Texts a record must survive and values the shim must not trip on: a factory argument and an
argv that are not UTF-8 (os.fsdecode of a file name), a unittest case whose id() is not a
string, and a PYTEST_CURRENT_TEST the program writes itself with pytest's package loaded (no test
runs here: no load is any test's)."""
import os
import sys
import unittest

import _pytest  # noqa: F401  (loaded, as a program that uses pytest's helpers would)

import warp as wp


def make(name: str):
    @wp.kernel(module="unique")
    def touch(a: wp.array(dtype=float)):
        a[0] = 1.0

    return touch


@wp.kernel
def k(a: wp.array(dtype=float)):
    a[wp.tid()] = 2.0


a = wp.zeros(2, dtype=float)
os.environ["PYTEST_CURRENT_TEST"] = "made/up.py::test_nothing (call)"
wp.launch(k, dim=2, inputs=[a])
wp.launch(make(os.fsdecode(b"caf\xe9.dat")), dim=2, inputs=[a])


class Odd(unittest.TestCase):
    def id(self):
        return ["not", "a", "string"]

    def test_launch(self):
        wp.launch(k, dim=2, inputs=[a])


with open(os.devnull, "w") as quiet:
    result = unittest.TextTestRunner(stream=quiet).run(unittest.defaultTestLoader.loadTestsFromTestCase(Odd))
print("ok", result.wasSuccessful(), len(sys.argv))
