#!/bin/sh
# Executor vs ONNX Runtime, batch 1, one thread each side, on models from make_zoo.py.
# usage: compare_ort.sh BUILD_DIR ZOO_DIR ORT_NODE_MODULES [REPEATS] [MODEL ...]
# ORT_NODE_MODULES: a node_modules folder holding onnxruntime-node
# (npm install --ignore-scripts onnxruntime-node).
set -eu
build=$1; zoo=$2; modules=$3; repeats=${4:-10}
shift 4 2>/dev/null || shift $#
models=${*:-"mobilenet_v2 resnet18 resnet50"}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-20s %10s %10s %8s %12s %10s %10s\n' model ours_ms ort_ms ratio max_rel_diff vjp_ratio rss_mib
for m in $models; do
  ours=$("$build/tests/bench/qs_runtime_bench" "$zoo/$m.onnx" "$work/$m" "$repeats" 1)
  theirs=$(NODE_PATH="$modules" node "$here/ort_bench.js" "$zoo/$m.onnx" "$work/$m" "$repeats")
  node -e '
    const a = JSON.parse(process.argv[1]), b = JSON.parse(process.argv[2]);
    const f = (x, n) => x.toFixed(n).padStart(10);
    console.log(a.model.padEnd(20), f(a.forward_ms, 1), f(b.ort_ms, 1), f(a.forward_ms / b.ort_ms, 2).padStart(8),
                b.max_rel_diff.toExponential(2).padStart(12), f(a.vjp_ratio, 2), String(a.peak_rss_mib).padStart(10));
  ' "$ours" "$theirs"
done
