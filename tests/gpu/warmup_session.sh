#!/usr/bin/env bash
# warp-probe warmup --verify on CUDA programs, on the lent H200 (shared research device-warp.md).
# Carried: .whl/gpu/warp-probe with .whl/gpu/share/xwarp (the shim) and .whl/gpu/lib
# (libsqlite3), and the Warp wheel as an xz tarball in two parts: part aa copied to /tmp by an
# earlier run, part ab in .whl/gpu. For each of PROGRAMS (tests/gpu/programs; default serial
# bd_spread): a measure (2 samples), then warmup --verify with WORKERS (default 16) and SAMPLES
# (default 3) and --arch ARCH (default 80, an architecture other than the H200's 90); then the
# warm-up file run alone into a fresh cache, to list what wp.compile_aot_module wrote there.
# LESSON=1 then measures the GPU lesson's cells as scripts (programs/lesson_*.py, 2 samples each)
# into $OUT/lesson_*.json: the recorded reports its no-GPU form shows. STREAMS=1 re-records the
# GPU shim streams ($OUT/streams-gpu.tar.gz, to unpack into tests/fixtures/streams here). A table
# is printed last. BUNDLE=FILE packs $OUT into one archive (at most 8 files come back).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
mkdir -p "$OUT" /tmp/site
if [ ! -f /tmp/site/warp/__init__.py ]; then
    cat /tmp/warp.part-aa .whl/gpu/warp.part-ab | xz -d | tar -x -C /tmp/site || exit 3
fi
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.whl/gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PROBE=$PWD/.whl/gpu/warp-probe
"$PROBE" --version || exit 4
python3 -c "import warp as wp; wp.init(); print('cuda devices:', wp.get_cuda_device_count())" || exit 5
ARCH=${ARCH:-80}
cd tests/gpu/programs
for prog in ${PROGRAMS:-serial bd_spread}; do
    "$PROBE" measure --quiet --samples 2 --history off --label "$prog" --json "$OUT/$prog.json" \
        -- python3 "$prog.py" > /dev/null 2>&1
    echo "$prog: measure exit $?"
    # --run: with the history off nothing shows this report's command was run here
    "$PROBE" warmup "$OUT/$prog.json" --verify --samples "${SAMPLES:-3}" --workers "${WORKERS:-16}" --arch "$ARCH" \
        --run --history off --quiet -o "$OUT/warmup_$prog.py" --json "$OUT/warmup-$prog.json" > "$OUT/warmup-$prog.txt" 2>&1
    echo "$prog: warmup exit $?"
    rm -rf /tmp/aot-cache
    WARP_CACHE_PATH=/tmp/aot-cache python3 "$OUT/warmup_$prog.py" --root "$PWD" > "$OUT/aot-$prog.log" 2>&1
    echo "$prog: warm-up alone exit $?, artifacts for sm_$ARCH: $(find /tmp/aot-cache -name "*sm$ARCH*" | wc -l)," \
        "for sm_90: $(find /tmp/aot-cache -name '*sm90*' | wc -l)"
done
if [ "${LESSON:-0}" = 1 ]; then
    for prog in lesson_two_block_dims lesson_one_block_dim lesson_tiles lesson_tiles_no_mathdx lesson_pch_on lesson_pch_off ptx_module; do
        "$PROBE" measure --quiet --samples 2 --history off --label "${prog#lesson_}" --json "$OUT/$prog.json" \
            -- python3 "$prog.py" > "$OUT/$prog.txt" 2>&1
        echo "$prog: measure exit $?"
    done
fi
cd ../../..
if [ "${STREAMS:-0}" = 1 ]; then
    rm -rf /tmp/streams-gpu
    python3 tests/fixtures/record_streams.py --set gpu --probe "$PROBE" --python "$(command -v python3)" --out /tmp/streams-gpu \
        > "$OUT/streams.log" 2>&1
    echo "streams: exit $?"
    tar -czf "$OUT/streams-gpu.tar.gz" -C /tmp streams-gpu
fi
python3 - "$OUT" ${PROGRAMS:-serial bd_spread} <<'PY'
import json, sys
out = sys.argv[1]
for prog in sys.argv[2:]:
    try:
        p = json.load(open(f"{out}/warmup-{prog}.json"))
    except Exception as e:
        print(f"{prog}: no warm-up plan ({e})")
        continue
    c = p.get("check") or {}
    med = lambda s: (s or {}).get("median")
    print(f"{prog:10} covered {p['covered']}/{p['covered'] + p['uncovered']} ({p['covered_ms']:.0f} of {p['total_ms']:.0f} ms)"
          f" verdict {c.get('verdict')} left covered {len(c.get('covered_built', []))} uncovered {len(c.get('uncovered_built', []))}"
          f" new {len(c.get('new_built', []))}; warm-up wall {med(c.get('warmup_wall_ms'))} build {med(c.get('warmup_build_ms'))}"
          f" ({c.get('warmup_builds')} builds, {p['workers']} workers) vs serial {c.get('serial_cold_build_ms')};"
          f" primed wall {med(c.get('primed_wall_ms'))} warm wall {med(c.get('warm_wall_ms'))} band {c.get('band_ms')} n={c.get('samples')}")
PY
if [ -n "${BUNDLE:-}" ]; then
    tar -czf "$BUNDLE" -C "$OUT" .
fi
