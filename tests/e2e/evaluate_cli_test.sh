#!/usr/bin/env bash
# quantscope-cli evaluate on the trained demo model (resources/models/digits_cnn.onnx) and its
# committed held-out split: the float top-1 is the count recorded by the training script; 8-bit QDQ
# (quantize --hw cpu, calibrated on the committed calibration set, --out) stays within 1 point of
# it; two models print their top-1 agreement and output cosine; wrong labels are clear errors.
set -uo pipefail
cli=$1 models=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
model=$models/digits_cnn.onnx x=$models/digits_test_inputs.npy y=$models/digits_test_labels.npy
data=(--calib-npy "$x" --labels-npy "$y")

correct=$(/usr/bin/python3 -c "import json; print(json.load(open('$models/digits_cnn.accuracy.json'))['correct'])") ||
    fail "cannot read digits_cnn.accuracy.json"
expect 0 "digits_cnn.onnx +[0-9.]+% \\($correct/360\\) +[0-9.]+%" -- evaluate "$model" "${data[@]}"

"$cli" quantize "$model" --hw cpu --calib-npy "$models/digits_calib_inputs.npy" \
    --out "$tmp/int8.onnx" >"$tmp/quantize.log" 2>&1 || fail "quantize failed: $(cat "$tmp/quantize.log")"
expect 0 'top-1 agreement +output cosine' -- evaluate "$model" "$tmp/int8.onnx" "${data[@]}"
"$cli" evaluate "$model" "$tmp/int8.onnx" "${data[@]}" --json >"$tmp/eval.json" ||
    fail "evaluate --json failed"
/usr/bin/python3 - "$tmp/eval.json" <<'PY' || fail "8-bit top-1 is not within 1 point of float"
import json, sys
report = json.load(open(sys.argv[1]))
fp, q = (m["accuracy"] for m in report["models"])
agreement = report["models"][1]["agreement_with_first"]
print(f"float top-1 {fp['top1_correct']}/{fp['samples']} = {100 * fp['top1']:.2f}%, "
      f"8-bit QDQ top-1 {q['top1_correct']}/{q['samples']} = {100 * q['top1']:.2f}%, "
      f"agreement {100 * agreement['top1_agreement']:.2f}%, cosine {agreement['cosine_similarity']:.6f}")
assert "agreement_with_first" not in report["models"][0]
assert fp["top5"] >= fp["top1"] and len(fp["per_class"]) == 10
sys.exit(0 if abs(fp["top1"] - q["top1"]) <= 0.01 else 1)
PY

# Agreement without labels (any dataset, random samples too); one model without labels has nothing
# to report.
expect 0 '(reference)' -- evaluate "$model" "$tmp/int8.onnx" --calib-random 4
expect 2 'nothing to evaluate: give --labels-npy' -- evaluate "$model" --calib-npy "$x"
expect 2 'not --calib-random' -- evaluate "$model" "$tmp/int8.onnx" --calib-random 4 --labels-npy "$y"
expect 2 'give exactly one dataset: --calib-npy, --calib-images or --calib-random' -- evaluate "$model" --labels-npy "$y"

# Wrong labels: a count that is not the sample count, an id outside the 10 classes, float labels.
/usr/bin/python3 -c "
import numpy as np
y = np.load('$y')
np.save('$tmp/short.npy', y[:359])
bad = y.copy(); bad[7] = 10
np.save('$tmp/out_of_range.npy', bad)
np.save('$tmp/float.npy', y.astype(np.float32))
" || fail "cannot write the bad labels"
expect 1 'holds 359 label.s. for 360 sample' -- evaluate "$model" --calib-npy "$x" --labels-npy "$tmp/short.npy"
expect 1 "label 10 of sample 7 is outside the output's 10 classes \\(ids 0\\.\\.9\\)" -- \
    evaluate "$model" --calib-npy "$x" --labels-npy "$tmp/out_of_range.npy"
expect 1 'must hold one int64 label per sample' -- evaluate "$model" --calib-npy "$x" --labels-npy "$tmp/float.npy"
# --ort without ONNX Runtime: where to find it, or that it cannot be loaded (or node is missing).
QS_ORT_DIR='' expect 2 'give --ort-dir DIR' -- evaluate "$model" "${data[@]}" --ort
expect 1 "onnxruntime-node cannot be loaded from '$tmp'|cannot start 'node'" -- \
    evaluate "$model" "${data[@]}" --ort --ort-dir "$tmp"
# --calib-samples keeps the first N samples and their labels.
expect 0 '\([0-9]+/100\)' -- evaluate "$model" "${data[@]}" --calib-samples 100
[ "$failures" -eq 0 ] && echo "cli evaluate: all checks passed"
exit $((failures > 0))
