#!/usr/bin/env bash
# Where a model's time goes, ours against ONNX Runtime's: per kind of node (op type, convolutions
# split into 1x1, KxK and depthwise KxK), from our executor's per-node profile and ONNX Runtime's
# own profiler, on the same input, threads and batch.
#   tests/bench/profile_vs_ort.sh BUILD_DIR MODEL NODE_MODULES THREADS BATCH [REPEATS] [SHAPE]
# e.g. tests/bench/profile_vs_ort.sh build/release build/zoo/efficientnet_b0.onnx \
#      tests/e2e/node_modules 1 1 50
set -euo pipefail
build=$1 model=$2 modules=$3 threads=$4 batch=$5 repeats=${6:-50} shape=${7:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
QS_BENCH_SKIP_VJP=1 QS_BENCH_PROFILE=nodes "$build/tests/bench/qs_runtime_bench" "$model" \
    "$work" "$repeats" "$threads" "$batch" $shape 2>"$work/ours.txt" >/dev/null
profile=$(NODE_PATH="$modules" node "$here/ort_profile.js" "$model" "$work" "$repeats" "$threads")
/usr/bin/python3 "$here/profile_vs_ort.py" "$model" "$work/ours.txt" "$profile" "$repeats"
rm -rf "$(dirname "$profile")"
