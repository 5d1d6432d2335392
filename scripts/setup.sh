#!/usr/bin/env bash
# One idempotent set-up step, called by both README commands:
#   1. Debian packages (apt), only those missing;
#   2. .venv/ made from Debian's /usr/bin/python3 with --system-site-packages (the kernel
#      embeds Debian's libpython 3.11, and needs Debian's IPython 8 and xeus-python-shell),
#      with warp-lang pinned;
#   3. CMake configure + build;
#   4. install warp-probe, the shim, the schema and the xwarp kernelspec under $XWARP_PREFIX
#      (default /usr/local, so `warp-probe` is on PATH and `jupyter kernelspec list` shows xwarp).
# Safe to run again: each step is skipped when already done.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

WARP_VERSION=${XWARP_WARP_VERSION:-1.19.0}
PREFIX=${XWARP_PREFIX:-/usr/local}
BUILD_DIR=${XWARP_BUILD_DIR:-$ROOT/build}
VENV=$ROOT/.venv
SYSTEM_PYTHON=/usr/bin/python3

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        say "not root and no sudo: apt packages and the install to $PREFIX need root"; fi
fi

# -- 1. Debian packages --------------------------------------------------------------------------
APT_PACKAGES=(
    build-essential cmake pkg-config git
    nlohmann-json3-dev libvalijson-dev libcli11-dev libsqlite3-dev libsqlitecpp-dev libboost-dev libboost-filesystem-dev libgtest-dev libgmock-dev
    xeus-dev libxeus6 xeus-python-dev libxeus-python0 python3-xeus-python-shell python3-ipython python3-debugpy
    xtl-dev cppzmq-dev libzmq3-dev uuid-dev libssl-dev pybind11-dev pybind11-json-dev
    python3-dev python3-venv python3-pip
    python3-pytest python3-pytest-xdist python3-jsonschema python3-yaml python3-jupyter-client jupyter-client python3-nbclient python3-nbformat
    python3-nbconvert python3-jupyter-kernel-test jupyter-core xpython
    chromium
)
# A caller's own needs beyond these (scripts/test.sh --wheels: debootstrap, qemu-user), by name.
read -r -a EXTRA_PACKAGES <<< "${XWARP_EXTRA_APT_PACKAGES:-}"
missing=()
for p in "${APT_PACKAGES[@]}" "${EXTRA_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    say "Debian packages present"
fi

# -- 2. the runtime venv ---------------------------------------------------------------------------
venv_ok() {
    [ -x "$VENV/bin/python3" ] && grep -q "^home = /usr/bin" "$VENV/pyvenv.cfg" 2>/dev/null \
        && grep -q "^include-system-site-packages = true" "$VENV/pyvenv.cfg" 2>/dev/null
}
if ! venv_ok; then
    say "creating $VENV from $SYSTEM_PYTHON (--system-site-packages)"
    rm -rf "$VENV"
    "$SYSTEM_PYTHON" -m venv --system-site-packages "$VENV"
fi
installed_warp=$("$VENV/bin/python3" -c 'import importlib.metadata as m; print(m.version("warp-lang"))' 2>/dev/null || true)
if [ "$installed_warp" != "$WARP_VERSION" ]; then
    say "installing warp-lang==$WARP_VERSION into .venv"
    if ! "$VENV/bin/python3" -m pip install -q --disable-pip-version-check "warp-lang==$WARP_VERSION"; then
        say "warp-lang==$WARP_VERSION did not install; taking the newest that does"
        "$VENV/bin/python3" -m pip install -q --disable-pip-version-check warp-lang
    fi
fi
say "warp-lang $("$VENV/bin/python3" -c 'import importlib.metadata as m; print(m.version("warp-lang"))') in .venv"

# -- 3. build ------------------------------------------------------------------------------------
say "building in $BUILD_DIR"
cmake -S "$ROOT" -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_INSTALL_PREFIX="$PREFIX" \
    -DPYTHON_EXECUTABLE="$SYSTEM_PYTHON" \
    -DXWARP_PYTHON="$VENV/bin/python3" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"

# -- 4. install ----------------------------------------------------------------------------------
say "installing to $PREFIX"
$SUDO cmake --install "$BUILD_DIR" >/dev/null
case ":$PATH:" in
    *":$PREFIX/bin:"*) ;;
    *) say "note: $PREFIX/bin is not on PATH; add it to use warp-probe by name" ;;
esac
say "done: $(command -v warp-probe || echo "$PREFIX/bin/warp-probe")"
