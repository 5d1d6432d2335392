#!/usr/bin/env bash
# Issue 50's GPU step: bench/realworld/run.py on CUDA (Newton's cloth_hanging, MuJoCo Warp's
# humanoid): measure with replays, fix --verify, warmup --verify, then the warm-up file bare on a
# fresh cache and the program after it, its builds counted from Warp's own log.
#
# What travels is git-ignored and made on the project's machine (../shared/research/device-warp.md),
# in three runs made one straight after the other (the machine keeps /tmp while it is warm):
#   stage1  carry .whl/p1: the first part of Warp's wheel repacked as one xz tarball
#   stage2  carry .whl/p2: its second part, and mujoco-core's wheel; unpacks Warp into /tmp/site
#   run P   carry .whl/p3 (the other wheels) and .whl/gpu (bin/warp-probe, lib/libsqlite3,
#           share/xwarp: a build of this tree), then measures program P
# SAMPLES (default 1), WORKERS (16), WHATIF (auto), BARE (1: also the bare warm-up check),
# INNER_TIMEOUT (seconds: stop the bench then, and still pack what it wrote).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/xwarp-gpu-out}
STAGE=/tmp/xwarp-stage
PRIVATE=/tmp/rw-private
mkdir -p "$OUT" "$STAGE" /tmp/site
case "${1:-}" in
stage1)
    cp .whl/p1/warp.part-aa "$STAGE/" || exit 3
    nvidia-smi -L; nproc; python3 -V; ls -la "$STAGE"
    ;;
stage2)
    [ -f "$STAGE/warp.part-aa" ] || { echo "stage1's part is gone (the machine was given back)"; exit 3; }
    cat "$STAGE/warp.part-aa" .whl/p2/warp.part-ab | xz -d | tar -x -C /tmp/site || exit 3
    python3 -m pip install -q --no-index --no-deps --no-compile --target $PRIVATE/mjw .whl/p2/mujoco_core-*.whl || exit 6
    PYTHONPATH=/tmp/site python3 -c "import warp as wp; wp.init(); print('cuda devices:', wp.get_cuda_device_count())" || exit 5
    ;;
run)
    [ -f /tmp/site/warp/__init__.py ] || { echo "Warp is not unpacked here (stage1, stage2 first)"; exit 3; }
    export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
    export LD_LIBRARY_PATH=$PWD/.whl/gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    PROBE=$PWD/.whl/gpu/bin/warp-probe
    "$PROBE" --version || exit 4
    if [ ! -f $PRIVATE/mjw/.installed ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --target $PRIVATE/mjw .whl/p3/mujoco_warp-*.whl \
            .whl/p3/mujoco-4*.whl .whl/p3/absl_py-*.whl .whl/p3/etils-*.whl .whl/p3/fsspec-*.whl .whl/p3/zipp-*.whl \
            .whl/p3/typing_extensions-*.whl .whl/p3/glfw-*.whl .whl/p3/pyopengl-*.whl && touch $PRIVATE/mjw/.installed || exit 6
        python3 -m pip install -q --no-index --no-deps --no-compile --target $PRIVATE/newton .whl/p3/newton-*.whl \
            && touch $PRIVATE/newton/.installed || exit 6
    fi
    shift
    extra=()
    [ "${BARE:-1}" = 1 ] || extra+=(--no-bare)
    timeout "${INNER_TIMEOUT:-86400}" python3 bench/realworld/run.py --out /tmp/rw-gpu --private $PRIVATE --device cuda:0 --probe "$PROBE" \
        --python "$(command -v python3)" --samples "${SAMPLES:-1}" --workers "${WORKERS:-16}" --whatif "${WHATIF:-auto}" \
        "${extra[@]}" --only "$@" 2>&1 | tee "$OUT/realworld-$1.txt"
    tar -czf "$OUT/realworld-$1.tar.gz" -C /tmp/rw-gpu --exclude=project --exclude='bare-cache' --exclude=packages "$@" 2>/dev/null
    ;;
*)
    echo "usage: $0 stage1 | stage2 | run PROGRAM..."; exit 2
    ;;
esac
