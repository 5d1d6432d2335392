"""Marks each test's start and end on standard output, beside Warp's own "Module ... (compiled)"
lines, so that a test can hold the probe's attribution against Warp's log (run with -s); and a
session fixture every process runs before its first test."""
import pytest


def pytest_sessionstart(session):
    print("SUITE-SESSION", flush=True)


def pytest_runtest_logstart(nodeid, location):
    print(f"\nSUITE-START {nodeid}", flush=True)


def pytest_runtest_logfinish(nodeid, location):
    print(f"\nSUITE-END {nodeid}", flush=True)


@pytest.fixture(scope="session", autouse=True)
def shared_module_ready():
    """Each process loads the shared module before its first test, as suites often do: under
    pytest-xdist every worker does, at the same moment, on the same empty cache."""
    import warp as wp

    import shared_kernels

    a = wp.zeros(1, dtype=float)
    wp.launch(shared_kernels.scale, dim=1, inputs=[a, 1.0])
