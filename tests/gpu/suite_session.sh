#!/usr/bin/env bash
# Issue 43's GPU step: test suites under pytest-xdist with 16 workers on the lent GPU machine
# (16 CPUs), measured, then `warmup --verify --workers 16`: warm-up + suite against the cold suite.
# Goal: the primed suite builds nothing the warm-up covers, and warm-up + suite takes at most 0.6
# of the cold suite's wall.
#
# Carried in .whl (git-ignored; made on the project's machine, see ../shared/research/device-warp.md):
#   .whl/*.whl          warp-lang (the project's pin) and pytest, pluggy, iniconfig, packaging,
#                       execnet, pytest-xdist for Python 3.12:
#                       python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#                         --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_34_x86_64 \
#                         --platform manylinux2014_x86_64 -d .whl warp-lang==1.19.0 pytest pluggy iniconfig \
#                         packaging execnet pytest-xdist
#                       (Warp's wheel over 64 MiB in all: tests/gpu/warmup_session.sh's xz parts instead)
#   .whl/newton         newton==1.8.0 unpacked (pip install --no-deps --target .whl/newton newton==1.8.0),
#                       only for SUITES naming a Newton suite
#   .whl/gpu/warp-probe a portable build with .whl/gpu/share/xwarp and .whl/gpu/lib (else one is built here)
# SUITES (default warp-several-xdist) names bench/suites/run.py's suites; XDIST and WORKERS
# default to 16. Reports and a table under $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
mkdir -p "$OUT" /tmp/site
if ! python3 -c "import warp, xdist" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 3
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.whl/gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PROBE=${PROBE:-$PWD/.whl/gpu/warp-probe}
if ! "$PROBE" --version >/dev/null 2>&1; then
    echo "no carried warp-probe runs here; building one"
    cmake -S . -B /tmp/xwarp-build -DXWARP_BUILD_KERNEL=OFF -DXWARP_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
        -DXWARP_PYTHON="$(command -v python3)" >/dev/null && cmake --build /tmp/xwarp-build -j16 --target warp-probe >/dev/null || exit 4
    PROBE=/tmp/xwarp-build/warp-probe
fi
WARP_CACHE_PATH=/tmp/xwarp-init-check python3 -c "import warp as wp; wp.init(); print('cuda devices:', wp.get_cuda_device_count())" || exit 5
mkdir -p /tmp/suites-private
[ -d .whl/newton ] && ln -sfn "$PWD/.whl/newton" /tmp/suites-private/newton
python3 bench/suites/run.py --out /tmp/suites-gpu --private /tmp/suites-private --probe "$PROBE" --python "$(command -v python3)" \
    --xdist "${XDIST:-16}" --workers "${WORKERS:-16}" --only ${SUITES:-warp-several-xdist} | tee "$OUT/suites.txt"
for d in /tmp/suites-gpu/*/; do
    name=$(basename "$d")
    [ -f "$d/report.json" ] && gzip -c "$d/report.json" > "$OUT/$name.report.json.gz"
    [ -f "$d/warmup.json" ] && cp "$d/warmup.json" "$OUT/$name.warmup.json"
done
