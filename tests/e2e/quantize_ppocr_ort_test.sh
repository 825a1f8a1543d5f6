#!/usr/bin/env bash
# The trained Paddle text detector (tests/data/models/ppocr_det.onnx: opset 11, Constant-node
# weights, dynamic batch/height/width) quantized end to end from an .npy dataset: its input dims
# are fixed to 1x3x256x256 (python3-onnx), two seeded samples of that size are written with numpy,
# `quantize --calib-npy --out` writes the QDQ model, and ONNX Runtime (graph optimizations
# disabled) must equal our executor on it within 1e-4 relative; at level "all" it must run and
# stay finite. Skips (77) without node, onnxruntime-node or python3-onnx.
set -uo pipefail
cli=$1 model=$2 ort_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
"$py" -c 'import onnx, numpy' 2>/dev/null || { echo "python3-onnx missing: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$py" - "$model" "$tmp" <<'PY' || { echo "FAIL: could not prepare the model and dataset"; exit 1; }
import sys
import numpy as np
import onnx
model = onnx.load(sys.argv[1])
dims = model.graph.input[0].type.tensor_type.shape.dim
for d, size in zip(dims, (1, 3, 256, 256)):
    d.ClearField("dim_param")
    d.dim_value = size
onnx.save(model, sys.argv[2] + "/ppocr_det_256.onnx")
rng = np.random.default_rng(0)
np.save(sys.argv[2] + "/calib.npy", rng.uniform(-1, 1, (2, 3, 256, 256)).astype(np.float32))
PY
failures=0
for setting in cpu:performance npu:mixed; do
    hw=${setting%%:*} preset=${setting#*:}
    name=ppocr_${hw}_$preset
    if ! "$cli" quantize "$tmp/ppocr_det_256.onnx" --hw "$hw" --preset "$preset" \
        --calib-npy "$tmp/calib.npy" --out "$tmp/$name.onnx" >"$tmp/$name.log" 2>&1; then
        echo "FAIL: $name: quantize failed: $(tail -5 "$tmp/$name.log")" >&2
        failures=$((failures + 1))
        continue
    fi
    grep -E "^Output|^QDQ model" "$tmp/$name.log"
    "$cli" info --json "$tmp/$name.onnx" >"$tmp/$name.info.json"
    for level in disabled all; do
        tol=1e-4
        [ "$level" = all ] && tol=none
        node "$here/ort/qdq_vs_ours.mjs" --ort-dir "$ort_dir" --cli "$cli" \
            --info "$tmp/$name.info.json" --work "$tmp/$name.$level" --samples 2 \
            --optimization "$level" --tol "$tol" "$tmp/$name.onnx"
        rc=$?
        [ "$rc" -eq 77 ] && exit 77
        [ "$rc" -eq 0 ] || { echo "FAIL: $name: ORT ($level) and our executor differ" >&2;
            failures=$((failures + 1)); }
    done
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ONNX Runtime runs the quantized Paddle detector and equals our executor"
