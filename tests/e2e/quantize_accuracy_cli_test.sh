#!/usr/bin/env bash
# quantscope-cli quantize with --labels-npy on the trained demo model and its committed held-out
# split: the console and the --report JSON state the float top-1 (the count recorded next to the
# model) and the 8-bit top-1 (within 1 point); a label id outside the 10 classes and a labels file
# of the wrong length are clear errors (exit 2, invalid input).
set -uo pipefail
cli=$1 models=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
model=$models/digits_cnn.onnx x=$models/digits_test_inputs.npy y=$models/digits_test_labels.npy
data=(--calib-npy "$x" --labels-npy "$y" --calib-samples 360)

expect 0 'Top-1 accuracy: float 98\.33 %, quantized [0-9.]+ %' -- \
    quantize "$model" "${data[@]}" --report "$tmp/report.json"
/usr/bin/python3 - "$tmp/report.json" "$models/digits_cnn.accuracy.json" <<'PY' ||
import json, sys
report, record = (json.load(open(p)) for p in sys.argv[1:3])
fp, q = report["accuracy"]["float"], report["accuracy"]["quantized"]
assert fp["top1_correct"] == record["correct"], (fp, record["correct"])
assert abs(q["top1"] - fp["top1"]) <= 0.01, (fp["top1"], q["top1"])
print(f"float top-1 {100 * fp['top1']:.2f} %, 8-bit {100 * q['top1']:.2f} %")
PY
    fail "the report's accuracy is not the recorded float top-1 with 8-bit within 1 point"

/usr/bin/python3 -c "
import numpy as np
y = np.load('$y'); y[3] = 12; np.save('$tmp/bad_id.npy', y)
np.save('$tmp/short.npy', np.load('$y')[:10])"
expect 1 'label 12 of sample 3 is outside' -- \
    quantize "$model" --calib-npy "$x" --labels-npy "$tmp/bad_id.npy" --calib-samples 360
expect 1 'holds 10 label\(s\) for 300 sample' -- quantize "$model" --calib-npy "$x" --labels-npy "$tmp/short.npy"
[ "$failures" -eq 0 ] && echo "quantize accuracy: ok"
exit $((failures > 0))
