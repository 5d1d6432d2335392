#!/usr/bin/env bash
# README command 2: set up (scripts/setup.sh), then run the whole test suite:
#   GoogleTest through ctest (the analysis on recorded real-Warp streams among it), then the
#   Python suite (real Warp on the CPU, the real Jupyter kernel over the real protocol,
#   headless Chromium) with Debian's pytest.
#
#   scripts/test.sh            everything (about 17 minutes on 2 cores once set up)
#   scripts/test.sh --quick    ctest plus one real-Warp run per behaviour family (pytest -m quick),
#                              under 2 minutes once set up; no browser, no older Warp
#   scripts/test.sh [--quick] PYTEST_ARGS...   extra arguments go to pytest (-k, -x, ...)
#   scripts/test.sh --wheels   the nightly path (.ci/nightly), not part of every run: builds the
#                              manylinux_2_28 wheels (scripts/wheels.sh, about 15 minutes on 2 cores)
#                              and checks them where they run: test_wheels.py (tags, a Debian 11 root,
#                              qemu-aarch64) and test_pip.py on the x86_64 wheel for pyenv's Python
#
# The Python tests run in $XWARP_TEST_WORKERS pytest-xdist workers (default: 2), each test on
# whichever worker is free, except the files whose module fixtures (the wheel among them) must be
# made once, which stay on one worker (--dist loadgroup; tests/python/conftest.py names them and
# starts the longest first). Much of a test's time is a measured program waiting on a compiler or
# a kernel on a socket, and no test asserts timing or machine-wide state, so two at once share two
# cores without changing any verdict a test checks. XWARP_TEST_WORKERS=0 runs them one after another.
#
# Exits non-zero on any failure; pytest's "no tests collected" (exit 5) fails too.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
QUICK=0
WHEELS=0
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
elif [ "${1:-}" = "--wheels" ]; then
    WHEELS=1
    shift
fi
if [ "$WHEELS" = 1 ]; then
    # debootstrap makes the Debian 11 root, qemu-user runs the aarch64 probe (test_wheels.py)
    export XWARP_EXTRA_APT_PACKAGES="debootstrap qemu-user"
fi
"$ROOT/scripts/setup.sh"

WORKERS=${XWARP_TEST_WORKERS:-2}
PARALLEL=()
if [ "$WORKERS" != 0 ]; then
    PARALLEL=(-n "$WORKERS" --dist loadgroup)
fi

ARTIFACTS=${XWARP_TEST_ARTIFACTS:-$ROOT/test-artifacts}
mkdir -p "$ARTIFACTS"
export XWARP_TEST_ARTIFACTS=$ARTIFACTS

if [ "$QUICK" = 1 ]; then
    echo "[test] GoogleTest"
    ctest --test-dir "$ROOT/build" --output-on-failure
    echo "[test] Python suite, quick part"
    exec /usr/bin/python3 -m pytest "$ROOT/tests/python" -m quick "${PARALLEL[@]}" -v -rfEs --junitxml="$ARTIFACTS/pytest-quick.xml" "$@"
fi

if [ "$WHEELS" = 1 ]; then
    OUT=$ROOT/dist/wheels
    rm -rf "$OUT"
    echo "[test] building the wheels (scripts/wheels.sh)"
    "$ROOT/scripts/wheels.sh" --out "$OUT"
    X86_64_WHEEL=$(ls "$OUT"/xwarp-*-py3-none-manylinux_2_28_x86_64.whl)
    echo "[test] checking them"
    XWARP_WHEELS_DIR=$OUT XWARP_WHEEL=$X86_64_WHEEL exec /usr/bin/python3 -m pytest "$ROOT/tests/python/test_wheels.py" \
        "$ROOT/tests/python/test_pip.py" -v -rfEs --junitxml="$ARTIFACTS/pytest-wheels.xml" "$@"
fi

# Test-only installs: an older Warp minor for the version matrix.
OLD_WARP_VERSION=${XWARP_OLD_WARP_VERSION:-1.10.1}
OLD_VENV=$ROOT/.venv-warp-old
if ! "$OLD_VENV/bin/python3" -c "import importlib.metadata as m, sys; sys.exit(m.version('warp-lang') != '$OLD_WARP_VERSION')" 2>/dev/null; then
    echo "[test] creating $OLD_VENV with warp-lang==$OLD_WARP_VERSION"
    rm -rf "$OLD_VENV"
    /usr/bin/python3 -m venv --system-site-packages "$OLD_VENV"
    "$OLD_VENV/bin/python3" -m pip install -q --disable-pip-version-check "warp-lang==$OLD_WARP_VERSION"
fi
export XWARP_REQUIRE_OLD_WARP=1

# Test-only installs: JupyterLab and Playwright for the real-browser test, and lizard for the
# function-size check, in a venv of their own (a newer IPython there must never reach the
# kernel's .venv). Playwright drives Debian's chromium; it downloads no browser.
TOOLS_VENV=$ROOT/.tools-venv
if ! "$TOOLS_VENV/bin/python" -c "import jupyterlab, playwright, lizard" 2>/dev/null; then
    echo "[test] creating $TOOLS_VENV with JupyterLab, Playwright and lizard"
    rm -rf "$TOOLS_VENV"
    /usr/bin/python3 -m venv "$TOOLS_VENV"
    "$TOOLS_VENV/bin/python" -m pip install -q --disable-pip-version-check "jupyterlab==4.6.6" "playwright==1.65.2" \
        "lizard==1.24.3"
fi
export XWARP_REQUIRE_BROWSER=1

echo "[test] GoogleTest"
ctest --test-dir "$ROOT/build" --output-on-failure

echo "[test] Python suite"
/usr/bin/python3 -m pytest "$ROOT/tests/python" "${PARALLEL[@]}" -v -rfEs --durations=30 --junitxml="$ARTIFACTS/pytest.xml" "$@"
