#!/bin/sh
# Executor vs ONNX Runtime, batch 1, one thread each side, on models from make_zoo.py.
# usage: compare_ort.sh BUILD_DIR ZOO_DIR ORT_NODE_MODULES [REPEATS] [MODEL ...]
# ORT_NODE_MODULES: a node_modules folder holding onnxruntime-node
# (npm install --ignore-scripts onnxruntime-node).
# ROUNDS (environment, default 5): each round times our executor and then ONNX Runtime, REPEATS
# runs each; the table shows the medians over rounds (the ratio is the median of the per-round
# ratios), so a burst of load on a shared machine hits both sides of a round alike.
set -eu
build=$1; zoo=$2; modules=$3; repeats=${4:-10}
shift 4 2>/dev/null || shift $#
models=${*:-"mobilenet_v2 resnet18 resnet50"}
rounds=${ROUNDS:-5}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-20s %10s %10s %8s %12s %10s %10s\n' model ours_ms ort_ms ratio max_rel_diff vjp_ratio rss_mib
for m in $models; do
  : >"$work/$m.rounds"
  r=0
  while [ "$r" -lt "$rounds" ]; do
    ours=$("$build/tests/bench/qs_runtime_bench" "$zoo/$m.onnx" "$work/$m" "$repeats" 1)
    theirs=$(NODE_PATH="$modules" node "$here/ort_bench.js" "$zoo/$m.onnx" "$work/$m" "$repeats")
    printf '%s\t%s\n' "$ours" "$theirs" >>"$work/$m.rounds"
    r=$((r + 1))
  done
  node -e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")
      .map((line) => line.split("\t").map((s) => JSON.parse(s)));
    const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
    const f = (x, n) => x.toFixed(n).padStart(10);
    const ours = median(rows.map(([a]) => a.forward_ms));
    const ort = median(rows.map(([, b]) => b.ort_ms));
    const ratio = median(rows.map(([a, b]) => a.forward_ms / b.ort_ms));
    const diff = Math.max(...rows.map(([, b]) => b.max_rel_diff));
    const vjp = median(rows.map(([a]) => a.vjp_ratio));
    const rss = Math.max(...rows.map(([a]) => a.peak_rss_mib));
    console.log(rows[0][0].model.padEnd(20), f(ours, 1), f(ort, 1), f(ratio, 2).padStart(8),
                diff.toExponential(2).padStart(12), f(vjp, 2), String(rss).padStart(10));
  ' "$work/$m.rounds"
done
