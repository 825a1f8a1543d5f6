#!/usr/bin/env bash
# ONNX Runtime's top-1 of the trained demo model and of its 8-bit QDQ export (quantize --hw cpu
# --out) on the committed held-out split: float equals the recorded count, and ORT's 8-bit top-1
# (graph optimizations "disabled", and "all": integer kernels) stays within 1 point of float, as
# ours does (evaluate_cli_test.sh); `evaluate --ort` reports the same ONNX Runtime counts as this
# independent script. Skips (77) without node or onnxruntime-node.
set -uo pipefail
cli=$1 models=$2 ort_dir=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
model=$models/digits_cnn.onnx x=$models/digits_test_inputs.npy y=$models/digits_test_labels.npy
"$cli" quantize "$model" --hw cpu --calib-npy "$models/digits_calib_inputs.npy" \
    --out "$tmp/int8.onnx" >"$tmp/quantize.log" 2>&1 || { cat "$tmp/quantize.log"; exit 1; }
failures=0
for level in disabled all; do
    node "$here/ort/accuracy.mjs" --ort-dir "$ort_dir" --optimization "$level" \
        --inputs "$x" --labels "$y" "$model" "$tmp/int8.onnx" >"$tmp/ort_$level.txt" ||
        { cat "$tmp/ort_$level.txt"; exit 1; }
    echo "ORT ($level): $(tr '\n' ' ' <"$tmp/ort_$level.txt")"
    /usr/bin/python3 - "$models/digits_cnn.accuracy.json" "$tmp/ort_$level.txt" <<'PY' ||
import json, re, sys
recorded = json.load(open(sys.argv[1]))["correct"]
fp, q = (int(c) for c in re.findall(r"top-1 (\d+)/360", open(sys.argv[2]).read()))
if fp != recorded:
    sys.exit(f"ORT float top-1 {fp}/360, recorded {recorded}/360")
if abs(fp - q) > 3.6:
    sys.exit(f"ORT 8-bit top-1 {q}/360 is more than 1 point from float {fp}/360")
PY
        failures=$((failures + 1))
done

# evaluate --ort (ORT's default optimizations, "all"): the counts accuracy.mjs printed.
"$cli" evaluate "$model" "$tmp/int8.onnx" --calib-npy "$x" --labels-npy "$y" --ort \
    --ort-dir "$ort_dir" --json >"$tmp/eval.json" || { echo "FAIL: evaluate --ort failed"; exit 1; }
/usr/bin/python3 - "$tmp/eval.json" "$tmp/ort_all.txt" <<'PY' || failures=$((failures + 1))
import json, re, sys
report = json.load(open(sys.argv[1]))
got = [m["accuracy"]["top1_correct"] for m in report["models"] if m["runtime"] == "onnxruntime"]
expected = [int(c) for c in re.findall(r"top-1 (\d+)/360", open(sys.argv[2]).read())]
print(f"evaluate --ort: ONNX Runtime top-1 {got}, node script {expected}")
sys.exit(0 if got == expected else 1)
PY
[ "$failures" -eq 0 ] && echo "ONNX Runtime: float and 8-bit accuracy as expected"
exit $((failures > 0))
