#!/usr/bin/env bash
# HAWQ benchmark (issue 15), NPU config:
#  1. end to end on resnet18 and resnet50 with `quantscope-cli hawq` (SAMPLES samples, ITERATIONS
#     Hutchinson iterations; the issue's figures are 32 and 100), split into traces / perturbation
#     / search as the CLI reports them;
#  2. on those traces (qs_hawq_bench): the trace-order search, the re-selection after moving the
#     target ratio (select + apply, goal <= 50 ms), and the pareto search on resnet50 with bits
#     {2,4,8} (and {4,8}).
#   tests/bench/hawq_bench.sh [BUILD_DIR] [SAMPLES] [ITERATIONS] [THREADS]
set -euo pipefail
build=${1:-build/release}
samples=${2:-32}
iterations=${3:-100}
threads=${4:-2}
zoo=${QS_ZOO_DIR:-/work/zoo}
cli="$build/app/quantscope-cli"
bench="$build/tests/bench/qs_hawq_bench"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

for model in resnet18 resnet50; do
    echo "== $model: hawq --hw npu, $samples samples, $iterations iterations, $threads thread(s)"
    start=$(date +%s.%N)
    "$cli" hawq "$zoo/$model.onnx" --hw npu --compression-ratio 1.5 --calib-random "$samples" \
        --samples "$samples" --iterations "$iterations" --threads "$threads" \
        --traces-out "$out/$model.traces.json" --setup-out "$out/$model.setup.json" \
        >"$out/$model.log" 2>"$out/$model.err"
    end=$(date +%s.%N)
    grep -o 'hawq: traces.*' "$out/$model.err"
    echo "wall $(echo "$end - $start" | bc) s"
    "$bench" "$zoo/$model.onnx" "$out/$model.traces.json" 2,4,8 trace-order
done
echo "== pareto search on resnet50"
"$bench" "$zoo/resnet50.onnx" "$out/resnet50.traces.json" 2,4,8 pareto
"$bench" "$zoo/resnet50.onnx" "$out/resnet50.traces.json" 4,8 pareto
