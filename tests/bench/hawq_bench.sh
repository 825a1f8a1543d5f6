#!/usr/bin/env bash
# HAWQ benchmark (issue 15), NPU config:
#  1. end to end on resnet18 and resnet50 with `quantscope-cli hawq` (SAMPLES samples, ITERATIONS
#     Hutchinson iterations; the issue's figures are 32 and 100), split into traces / perturbation
#     / search as the CLI reports them;
#  2. on those traces (qs_hawq_bench): the trace-order search, the re-selection after moving the
#     target ratio (select + apply, goal <= 50 ms), and the pareto search on resnet50 with bits
#     {2,4,8} (and {4,8}).
# The traces take samples x iterations Hessian-vector products (one batched forward and backward
# per iteration), so on a machine where 32 x 100 is too slow a smaller setting is run and the
# traces time is extrapolated per sample-iteration (printed as "traces per sample-iteration" and
# "traces extrapolated to 32 x 100", from the wall time; the CPU time of the whole run is printed
# too, for a loaded machine); perturbation and search do not depend on it.
#   tests/bench/hawq_bench.sh [BUILD_DIR] [SAMPLES] [ITERATIONS] [THREADS]
#   MODELS="resnet18" tests/bench/hawq_bench.sh ...   (default: resnet18 resnet50)
set -euo pipefail
build=${1:-build/release}
samples=${2:-32}
iterations=${3:-100}
threads=${4:-2}
models=${MODELS:-resnet18 resnet50}
zoo=${QS_ZOO_DIR:-/work/zoo}
cli="$build/app/quantscope-cli"
bench="$build/tests/bench/qs_hawq_bench"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

for model in $models; do
    echo "== $model: hawq --hw npu, $samples samples, $iterations iterations, $threads thread(s)"
    start=$(date +%s.%N)
    timer=()
    [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f "cpu: user %U s, sys %S s" -o "$out/$model.time")
    "${timer[@]}" "$cli" hawq "$zoo/$model.onnx" --hw npu --compression-ratio 1.5 --calib-random "$samples" \
        --samples "$samples" --iterations "$iterations" --threads "$threads" \
        --traces-out "$out/$model.traces.json" --setup-out "$out/$model.setup.json" \
        >"$out/$model.log" 2>"$out/$model.err"
    end=$(date +%s.%N)
    grep -o 'hawq: traces.*' "$out/$model.err"
    echo "wall $(echo "$end - $start" | bc) s"
    # On a shared machine the CPU time is the figure to extrapolate from, not the wall time.
    [[ -f $out/$model.time ]] && cat "$out/$model.time"
    traces=$(grep -o 'hawq: traces [0-9.e+-]*' "$out/$model.err" | awk '{print $3}')
    awk -v t="$traces" -v n="$samples" -v k="$iterations" 'BEGIN {
        printf "traces per sample-iteration %.4f s; traces extrapolated to 32 x 100: %.0f s\n",
            t / (n * k), t / (n * k) * 3200 }'
    "$bench" "$zoo/$model.onnx" "$out/$model.traces.json" 2,4,8 trace-order
done
for model in $models; do
    echo "== pareto search on $model"
    "$bench" "$zoo/$model.onnx" "$out/$model.traces.json" 2,4,8 pareto
    "$bench" "$zoo/$model.onnx" "$out/$model.traces.json" 4,8 pareto
done
