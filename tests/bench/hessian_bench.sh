#!/usr/bin/env bash
# Hessian benchmark, in one run:
#  1. one Hutchinson iteration (a reverse sweep to every Conv output) / one forward, for resnet18,
#     mobilenet_v2 and resnet50 at batch 1 and 8 on 1 and 2 threads (goal <= 3x);
#  2. the whole `quantscope-cli hessian` run (activation, per-tensor, every Conv output, resnet18,
#     8 random samples, batch 8, 10 iterations) against the same estimator in PyTorch
#     (hessian_torch.py), both on THREADS threads (goal: >= 2x faster);
#  3. batch 32 vs batch 1: seconds per sample-iteration and peak RSS (resnet18, 32 samples,
#     2 iterations).
#   tests/bench/hessian_bench.sh [BUILD_DIR] [THREADS]
set -euo pipefail
build=${1:-build/release}
threads=${2:-2}
zoo=${QS_ZOO_DIR:-/work/zoo}
here=$(cd "$(dirname "$0")" && pwd)
cli="$build/app/quantscope-cli"
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT

echo "== sweep / forward (qs_hessian_bench MODEL BATCH THREADS)"
for model in resnet18 mobilenet_v2 resnet50; do
    for batch in 1 8; do
        for t in 1 2; do
            "$build/tests/bench/qs_hessian_bench" "$zoo/$model.onnx" "$batch" "$t" 3
        done
    done
done

echo "== whole run: resnet18, 8 samples, batch 8, 10 iterations, $threads thread(s)"
start=$(date +%s.%N)
"$cli" hessian "$zoo/resnet18.onnx" --mode activation --granularity per-tensor --op-type Conv \
    --samples 8 --batch 8 --iterations 10 --calib-random 8 --threads "$threads" \
    --out "$out/scores.json" >/dev/null 2>"$out/log"
end=$(date +%s.%N)
qs=$(echo "$end - $start" | bc)
torch=$(/usr/bin/python3 "$here/hessian_torch.py" resnet18 8 8 10 "$threads")
/usr/bin/python3 - "$qs" "$torch" <<'PY'
import json, sys
qs = float(sys.argv[1]); torch = json.loads(sys.argv[2])["torch_seconds"]
print(json.dumps({"quantscope_seconds": round(qs, 2), "torch_seconds": round(torch, 2),
                  "speedup": round(torch / qs, 2)}))
PY

echo "== batch 32 vs batch 1: resnet18, 32 samples, 2 iterations, $threads thread(s)"
for batch in 1 32; do
    /usr/bin/time -f "%e %M" -o "$out/time" "$cli" hessian "$zoo/resnet18.onnx" \
        --mode activation --granularity per-tensor --op-type Conv --samples 32 --batch "$batch" \
        --iterations 2 --calib-random 32 --threads "$threads" --out "$out/b$batch.json" \
        >/dev/null 2>/dev/null
    read -r seconds rss <"$out/time"
    echo "{\"batch\": $batch, \"seconds\": $seconds, \"ms_per_sample_iteration\": $(echo "scale=2; $seconds * 1000 / 64" | bc), \"peak_rss_mib\": $((rss / 1024))}"
done
