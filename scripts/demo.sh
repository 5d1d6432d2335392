#!/usr/bin/env bash
# README command 1: set up (packages, .venv, build, install warp-probe and the xwarp kernel),
# then probe the bundled demo and write its reports to build/demo/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
"$ROOT/scripts/setup.sh"

PROBE=${XWARP_PREFIX:-/usr/local}/bin/warp-probe
OUT=$ROOT/build/demo
mkdir -p "$OUT"
echo
echo "== warp-probe measure: demo/particles_churn.py (a kernel defined after the first launch) =="
"$PROBE" measure --samples 3 --label churn --json "$OUT/churn.json" -- "$ROOT/.venv/bin/python3" demo/particles_churn.py
echo
echo "JSON report: $OUT/churn.json"
