#!/usr/bin/env bash
# README command 1: set up (Debian packages, .venv, build, install warp-probe and the xwarp
# kernel), then probe the bundled demo with what-if replays of its findings' levers, probe its
# fixed version, compare them, and write the reports (JSON, and self-contained HTML) to
# build/demo/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
"$ROOT/scripts/setup.sh"

PROBE=${XWARP_PREFIX:-/usr/local}/bin/warp-probe
PY=$ROOT/.venv/bin/python3
OUT=$ROOT/build/demo
mkdir -p "$OUT"

echo
echo "== 1. demo/particles_churn.py: a kernel defined after the first launch, each finding's lever replayed =="
"$PROBE" measure --samples 3 --label churn --json "$OUT/churn.json" --whatif auto --whatif-budget 600 \
    -- "$PY" demo/particles_churn.py
"$PROBE" report "$OUT/churn.json" --format html -o "$OUT/churn.html"

echo
echo "== 2. demo/particles_fixed.py: the same program with the kernel at module scope =="
"$PROBE" measure --samples 3 --label fixed --json "$OUT/fixed.json" -- "$PY" demo/particles_fixed.py >/dev/null

echo
echo "== 3. compare =="
set +e
"$PROBE" compare "$OUT/churn.json" "$OUT/fixed.json" --json "$OUT/compare.json" --html "$OUT/compare.html"
verdict=$?
set -e
echo
echo "== 4. the history: every run above was stored (warp-probe history trend, diff, table) =="
"$PROBE" history list --limit 5 || echo "(no history: it is off, or could not be written; see the lines above)"

echo
echo "reports: $OUT/churn.html, $OUT/compare.html (and .json beside them); compare exit code $verdict"
echo "notebook kernel: $(jupyter kernelspec list 2>/dev/null | grep -w xwarp || echo 'xwarp (see jupyter kernelspec list)')"
