#!/usr/bin/env bash
# What opening a model costs, for every zoo model, tiny_bert, the Paddle OCR detector, DenseNet-121
# and the 10k-op synthetic chain, all in one run:
#   - qs_open_bench: time to the first drawn graph in the GUI (offscreen, grouped, default
#     expansion), to expand the biggest group, and for a Cancel to stop an expand-all layout;
#   - `quantscope-cli render` to a finished SVG (the whole graph, every group open);
#   - plain `dot -Tsvg` on the DOT that `render --out X.dot` writes for the same graph, capped at
#     DOT_TIMEOUT seconds (default 300; a capped run prints ">N").
# Export DenseNet-121 first with tests/bench/export_densenet121.py $QS_ZOO_DIR.
#
#   tests/bench/open_bench.sh [BUILD_DIR]
set -uo pipefail
build=${1:-build/release}
zoo=${QS_ZOO_DIR:-/work/zoo}
here=$(cd "$(dirname "$0")" && pwd)
dot_timeout=${DOT_TIMEOUT:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

models=()
for name in squeezenet1_1 resnet18 mobilenet_v2 efficientnet_b0 shufflenet_v2_x1_0 resnet50 \
            tiny_bert densenet121; do
  [[ -f $zoo/$name.onnx ]] && models+=("$zoo/$name.onnx") || echo "skip $name: $zoo/$name.onnx absent"
done
[[ -f ${PPOCR:-/work/shared/models/ppocr_det.onnx} ]] && models+=("${PPOCR:-/work/shared/models/ppocr_det.onnx}")
"$build/tests/bench/qs_layout_bench" --ops 10000 --runs 1 --dot-runs 0 --write-onnx "$work/synthetic10k.onnx" >/dev/null
models+=("$work/synthetic10k.onnx")

echo "== GUI: first drawn graph, expand, cancel"
QT_QPA_PLATFORM=offscreen "$build/tests/bench/qs_open_bench" "${models[@]}"

echo "== render SVG vs plain dot -Tsvg"
printf '%-24s %10s %12s %10s\n' model render dot speedup
for model in "${models[@]}"; do
  name=$(basename "$model" .onnx)
  start=$(date +%s.%N)
  if ! QT_QPA_PLATFORM=offscreen "$build/app/cli/quantscope-cli" render "$model" --out "$work/$name.svg" >/dev/null 2>"$work/$name.err"; then
    echo "$name: render failed: $(tail -1 "$work/$name.err")"; continue
  fi
  render=$(echo "$(date +%s.%N) - $start" | bc)
  QT_QPA_PLATFORM=offscreen "$build/app/cli/quantscope-cli" render "$model" --out "$work/$name.dot" >/dev/null 2>&1
  start=$(date +%s.%N)
  if timeout "$dot_timeout" dot -Tsvg "$work/$name.dot" -o "$work/$name.dot.svg"; then
    dot=$(echo "$(date +%s.%N) - $start" | bc)
    printf '%-24s %9.2fs %11.2fs %9.0fx\n' "$name" "$render" "$dot" "$(echo "$dot / $render" | bc -l)"
  else
    printf '%-24s %9.2fs %11s %9s\n' "$name" "$render" ">${dot_timeout}s" ">$(echo "$dot_timeout / $render" | bc)x"
  fi
done
