#!/usr/bin/env bash
# What a whole `quantscope-cli run` process adds per sample to the executor's own work, for the
# data sources compare_ort.sh does not time: --random and --images. Per round: qs_runtime_bench's
# loop over K batches in its own process (loop_ms_per_sample), then whole processes on 1 and on
# K batches of seeded random data, and on 8 and 64 JPEG images of 640 x 480 (made with
# ImageMagick); per sample = (t_many - t_few) / (samples more), against the loop.
#   tests/bench/run_overhead.sh BUILD_DIR ZOO_DIR [ROUNDS] [MODEL ...]
# SETTINGS (environment, default "1x1 2x1 2x8"): THREADSxBATCH settings.
set -euo pipefail
build=$1 zoo=$2 rounds=${3:-3}
shift 3 2>/dev/null || shift $#
models=${*:-"resnet18 shufflenet_v2_x1_0 mobilenet_v2"}
settings=${SETTINGS:-"1x1 2x1 2x8"}
cli=$build/app/quantscope-cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/few" "$work/many"
for i in $(seq -w 0 63); do
    convert -size 640x480 -seed "$((10#$i))" plasma:fractal "$work/many/i$i.jpg"
done
cp "$work"/many/i0[0-7].jpg "$work/few/"
seconds() { # COMMAND... -> wall seconds
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
printf '%-20s %3s %3s %10s %11s %8s %11s %8s\n' model thr bat loop_ms/smp random_ms/s ratio \
    images_ms/s ratio
for model in $models; do
    for setting in $settings; do
        threads=${setting%x*} batch=${setting#*x}
        for ((r = 0; r < rounds; r++)); do
            loop=$("$build/tests/bench/qs_runtime_bench" "$zoo/$model.onnx" "$work/bench" 5 \
                "$threads" "$batch" 2>/dev/null | sed 's/.*"loop_ms_per_sample": \([0-9.]*\).*/\1/')
            k=$(echo "$loop $batch" | awk '{k = int(2000 / ($1 * $2)) + 1; print (k < 5 ? 5 : (k > 41 ? 41 : k))}')
            one=$(seconds "$cli" run "$zoo/$model.onnx" --random "$batch" --batch "$batch" \
                --threads "$threads")
            many=$(seconds "$cli" run "$zoo/$model.onnx" --random "$((k * batch))" \
                --batch "$batch" --threads "$threads")
            few=$(seconds "$cli" run "$zoo/$model.onnx" --images "$work/few" --batch "$batch" \
                --threads "$threads")
            lots=$(seconds "$cli" run "$zoo/$model.onnx" --images "$work/many" --batch "$batch" \
                --threads "$threads")
            echo "$model $threads $batch $loop $one $many $k $few $lots" | awk '{
                random = ($6 - $5) * 1000 / (($7 - 1) * $3); images = ($9 - $8) * 1000 / 56
                printf "%-20s %3d %3d %10.2f %11.2f %8.2f %11.2f %8.2f\n", $1, $2, $3, $4,
                       random, random / $4, images, images / $4 }'
        done
    done
done
