#!/usr/bin/env bash
# One GPU session's work on the lent H200 (see shared research device-warp.md): unpacks the
# Warp wheel carried in two parts, then
#   1. records the CUDA shim streams for the unit tests (tests/fixtures/record_streams.py --set gpu)
#      into $OUT/streams-gpu.tar.gz, to unpack into tests/fixtures/streams here;
#   2. measures the what-if levers on the tile-GEMM program (backward-off, parallel-preload,
#      mathdx-off) into $OUT/whatif_tile.json and .txt, and parallel-preload on six modules.
#   3. (STEP=nvrtc only) measures the six-module program with --nvrtc-trace and checks the merged
#      trace with tests/gpu/check_nvrtc_trace.py ($OUT/nvrtc.json, nvrtc-trace.json, nvrtc.txt).
#   4. (STEP=cudacache only) doctor's NVRTC-cache check, then the six-module program measured with
#      --whatif keep-cuda-cache,keep-lto-cache ($OUT/cudacache.json, .txt, doctor.txt): the finding,
#      the replay's verdict on its judged clock, and each pass's caches, summed up by
#      tests/gpu/check_cuda_cache.py.
# Uses the carried portable warp-probe (.whl/gpu2/bin). STEP=streams|whatif|nvrtc|cudacache|all
# (default all: the first three).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
mkdir -p "$OUT" /tmp/site
if [ ! -f /tmp/site/warp/__init__.py ]; then
    PART_A=.whl/gpu1/warp-gpu.part-aa; [ -f "$PART_A" ] || PART_A=/tmp/warp-gpu.part-aa
    cat "$PART_A" .whl/gpu2/warp-gpu.part-ab | xz -d | tar -x -C /tmp/site || exit 3
fi
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
PROBE=$PWD/.whl/gpu2/bin/warp-probe
export XWARP_SHIM_DIR=$PWD/.whl/gpu2/shim
# the portable probe links SQLite dynamically: a copy travels beside it for a machine without one
export LD_LIBRARY_PATH=$PWD/.whl/gpu2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$PROBE" --version || exit 4
python3 -c "import warp as wp; wp.init(); print('cuda devices:', wp.get_cuda_device_count())" || exit 5
STEP=${STEP:-all}
if [ "$STEP" = all ] || [ "$STEP" = streams ]; then
    rm -rf /tmp/streams-gpu
    python3 tests/fixtures/record_streams.py --set gpu --probe "$PROBE" --python "$(command -v python3)" --out /tmp/streams-gpu \
        2>&1 | tee "$OUT/streams.log"
    tar -czf "$OUT/streams-gpu.tar.gz" -C /tmp streams-gpu
fi
if [ "$STEP" = all ] || [ "$STEP" = whatif ]; then
    cd tests/gpu/programs
    "$PROBE" measure --quiet --samples ${SAMPLES:-2} --label tile_gemm_many --json "$OUT/whatif_tile.json" \
        --whatif backward-off,parallel-preload,mathdx-off --whatif-budget 100000 \
        -- python3 tile_gemm_many.py > "$OUT/whatif_tile.txt" 2>&1
    echo "tile: exit $?"
    "$PROBE" measure --quiet --samples ${SAMPLES:-2} --label serial --json "$OUT/whatif_serial.json" \
        --whatif parallel-preload,backward-off --whatif-budget 100000 \
        -- python3 serial.py > "$OUT/whatif_serial.txt" 2>&1
    echo "serial: exit $?"
    sed -n '/What-if replays/,/^Sources/p' "$OUT/whatif_tile.txt" "$OUT/whatif_serial.txt"
fi
if [ "$STEP" = nvrtc ]; then
    (cd tests/gpu/programs && "$PROBE" measure --quiet --samples 1 --nvrtc-trace --history off --label nvrtc \
        --json "$OUT/nvrtc.json" --trace "$OUT/nvrtc-trace.json" -- python3 serial.py > "$OUT/nvrtc.txt" 2>&1)
    echo "nvrtc: exit $?"
    python3 tests/gpu/check_nvrtc_trace.py "$OUT/nvrtc.json" "$OUT/nvrtc-trace.json"
fi
if [ "$STEP" = cudacache ]; then
    "$PROBE" doctor > "$OUT/doctor.txt" 2>&1; grep -i "nvrtc" "$OUT/doctor.txt"
    (cd tests/gpu/programs && "$PROBE" measure --quiet --samples ${SAMPLES:-3} --history off --label cudacache \
        --whatif keep-cuda-cache,keep-lto-cache --whatif-budget 100000 \
        --json "$OUT/cudacache.json" -- python3 serial.py > "$OUT/cudacache.txt" 2>&1)
    echo "cudacache: exit $?"
    python3 tests/gpu/check_cuda_cache.py "$OUT/cudacache.json"
fi
