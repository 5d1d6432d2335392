#!/usr/bin/env bash
# Runs the GPU scenarios on the lent GPU machine (see README, "GPU runs"): unpacks the Warp
# wheel carried in two parts (.gpu1, .gpu2), uses the carried portable warp-probe (or builds
# one), then tests/gpu/run_scenarios.py. Results go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
mkdir -p "$OUT" /tmp/site
if [ ! -f /tmp/site/warp/__init__.py ]; then
    # the first part may have come in an earlier run and been kept in /tmp
    PART_A=.gpu1/warp-gpu.part-aa; [ -f "$PART_A" ] || PART_A=/tmp/warp-gpu.part-aa
    cat "$PART_A" .gpu2/warp-gpu.part-ab | xz -d | tar -x -C /tmp/site || exit 3
fi
export PYTHONPATH=/tmp/site
PROBE=.gpu2/bin/warp-probe
if ! "$PROBE" --version >/dev/null 2>&1; then
    echo "carried warp-probe does not run here; building one"
    cmake -S . -B /tmp/xwarp-build -DXWARP_BUILD_KERNEL=OFF -DXWARP_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
        -DXWARP_PYTHON="$(command -v python3)" >/dev/null && cmake --build /tmp/xwarp-build -j16 --target warp-probe >/dev/null || exit 4
    PROBE=/tmp/xwarp-build/warp-probe
fi
"$PROBE" --version
python3 tests/gpu/run_scenarios.py --probe "$PROBE" --python "$(command -v python3)" --out "$OUT" ${SAMPLES:+--samples "$SAMPLES"} ${ONLY:+--only "$ONLY"}
