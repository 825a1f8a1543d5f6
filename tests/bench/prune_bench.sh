#!/usr/bin/env bash
# SIMD pruning figures (issue 21), all through `quantscope-cli prune`:
#  1. end to end, MCT's setting: LFH with 1 sample (`--samples 1`, 100 iterations), SIMD 32 from
#     the CPU HW config, targets 50 % and 70 %, on resnet50 and densenet121, one kernel thread
#     (MCT's anchor on this kind of machine: 777 s and 689 s; the goal is >= 30x faster);
#  2. the greedy alone (l2 scores) on resnet50 at 50 % with --simd 1 and --simd 32 (goal <= 50 ms
#     with SIMD 1);
#  3. LFH scores of resnet50 on SAMPLES samples: one Hessian batch vs one sample at a time;
#  4. end-to-end prune (LFH, --samples 1) on resnet18 and resnet50.
#   tests/bench/prune_bench.sh [BUILD_DIR] [ZOO_DIR]
# Environment: THREADS (default 1), SAMPLES (default 32, part 3), ITERATIONS (default 100, part 3;
# lower it on a loaded machine: the time scales linearly), PARTS (default "1 2 3 4").
set -euo pipefail
build=${1:-build/release}
zoo=${2:-${QS_ZOO_DIR:-/work/zoo}}
cli=$build/app/quantscope-cli
threads=${THREADS:-1}
samples=${SAMPLES:-32}
iterations=${ITERATIONS:-100}
parts=${PARTS:-1 2 3 4}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# prune ARGS... -> "total_s scores_s greedy_ms groups" from the CLI's own timing line.
run() {
    "$cli" prune "$@" --threads "$threads" --out "$tmp/out.onnx" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
        { cat "$tmp/err.txt" >&2; return 1; }
    sed -nE 's/^prune: scores ([0-9.e+-]+) s, greedy ([0-9.e+-]+) ms \(([0-9]+) groups\), total ([0-9.e+-]+) s$/\4 \1 \2 \3/p' "$tmp/err.txt"
}

for part in $parts; do
case $part in
1)
    echo "== 1. end to end, --samples 1, 100 iterations, SIMD 32, $threads thread(s)"
    printf '%-12s %6s %10s %10s %8s %8s\n' model target total_s mct_s speedup sections
    for spec in "resnet50 777" "densenet121 689"; do
        set -- $spec
        for target in 50% 70%; do
            read -r total _ _ _ < <(run "$zoo/$1.onnx" --target-memory "$target" --samples 1 \
                --calib-random 1)
            sections=$(grep -oE '^[0-9]+ pruning sections' "$tmp/out.txt" | cut -d' ' -f1)
            printf '%-12s %6s %10.2f %10s %7.1fx %8s\n' "$1" "$target" "$total" "$2" \
                "$(echo "$2 / $total" | bc -l)" "$sections"
        done
    done
    ;;
2)
    echo "== 2. greedy masks on resnet50, target 50 % (l2 scores)"
    printf '%-6s %10s %8s\n' simd greedy_ms groups
    for simd in 1 32; do
        read -r _ _ greedy groups < <(run "$zoo/resnet50.onnx" --target-memory 50% \
            --importance l2 --simd "$simd")
        printf '%-6s %10.3f %8s\n' "$simd" "$greedy" "$groups"
    done
    ;;
3)
    echo "== 3. LFH scores of resnet50, $samples samples, $iterations iterations"
    printf '%-18s %10s\n' hessian_batch scores_s
    for batch in "$samples" 1; do
        read -r _ scores _ _ < <(run "$zoo/resnet50.onnx" --target-memory 50% \
            --samples "$samples" --iterations "$iterations" --hessian-batch "$batch" \
            --calib-random "$samples")
        printf '%-18s %10.2f\n' "$batch" "$scores"
    done
    ;;
4)
    echo "== 4. end to end, LFH --samples 1, target 50 %"
    printf '%-12s %10s\n' model total_s
    for model in resnet18 resnet50; do
        read -r total _ _ _ < <(run "$zoo/$model.onnx" --target-memory 50% --samples 1 \
            --calib-random 1)
        printf '%-12s %10.2f\n' "$model" "$total"
    done
    ;;
esac
done
