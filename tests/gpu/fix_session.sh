#!/usr/bin/env bash
# warp-probe fix --verify on the CUDA scenarios, on the lent H200 (shared research
# device-warp.md). Carried: .gpu2/warp-probe with .gpu2/share/xwarp (shim, fixer) and
# .gpu2/lib (libsqlite3), and the Warp wheel as an xz tarball in two parts: part aa copied to
# /tmp by an earlier run (.gpu1), part ab in .gpu2. PROGRAMS names the scenarios of
# tests/gpu/programs to measure and fix (default: bd_spread tile_gemm serial). Each: a measure
# (2 samples), then fix --verify (SAMPLES a side, default 3) of every finding's patch; reports,
# patches and texts go to $OUT, and a table of verdicts is printed last.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
mkdir -p "$OUT" /tmp/site
if [ ! -f /tmp/site/warp/__init__.py ]; then
    cat /tmp/warp-gpu.part-aa .gpu2/warp-gpu.part-ab | xz -d | tar -x -C /tmp/site || exit 3
fi
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.gpu2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PROBE=$PWD/.gpu2/warp-probe
"$PROBE" --version || exit 4
python3 -c "import warp as wp; wp.init(); print('cuda devices:', wp.get_cuda_device_count())" || exit 5
cd tests/gpu/programs
for prog in ${PROGRAMS:-bd_spread tile_gemm serial}; do
    "$PROBE" measure --quiet --samples 2 --history off --label "$prog" --json "$OUT/$prog.json" \
        -- python3 "$prog.py" > "$OUT/$prog.txt" 2>&1
    echo "$prog: measure exit $?"
    # --run: with the history off nothing shows this report's command was run here
    "$PROBE" fix "$OUT/$prog.json" --verify --samples "${SAMPLES:-3}" --run --history off --quiet \
        --out "$OUT/fixes-$prog" --json "$OUT/fix-$prog.json" > "$OUT/fix-$prog.txt" 2>&1
    echo "$prog: fix exit $?"
done
python3 - "$OUT" ${PROGRAMS:-bd_spread tile_gemm serial} <<'PY'
import json, sys
out = sys.argv[1]
for prog in sys.argv[2:]:
    try:
        r = json.load(open(f"{out}/fix-{prog}.json"))
    except Exception as e:
        print(f"{prog}: no fix report ({e})")
        continue
    for f in r.get("fixes", []):
        saving = f.get("saving_ms")
        print(f"{prog:10} {f['finding']:24} {f['lever'] or '-':22} {f['verdict']:10} "
              f"{'' if saving is None else f'{-saving:+.0f} ms'} {f.get('clock', '')} n={f.get('samples', 0)}")
PY
