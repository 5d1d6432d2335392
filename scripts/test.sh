#!/usr/bin/env bash
# README command 2: set up (scripts/setup.sh), then run the whole test suite:
#   GoogleTest through ctest, then the Python suite (real Warp on the CPU, the real
#   Jupyter kernel over the real protocol, headless Chromium) with Debian's pytest.
# Exits non-zero on any failure; pytest's "no tests collected" (exit 5) fails too.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
"$ROOT/scripts/setup.sh"

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

ARTIFACTS=${XWARP_TEST_ARTIFACTS:-$ROOT/test-artifacts}
mkdir -p "$ARTIFACTS"
export XWARP_TEST_ARTIFACTS=$ARTIFACTS

echo "[test] GoogleTest"
ctest --test-dir "$ROOT/build" --output-on-failure

echo "[test] Python suite"
/usr/bin/python3 -m pytest "$ROOT/tests/python" -v -rs --junitxml="$ARTIFACTS/pytest.xml" "$@"
