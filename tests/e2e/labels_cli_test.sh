#!/usr/bin/env bash
# --labels-npy in every flow that reads a dataset, on the trained demo model and its committed
# held-out split: `run` states the model's top-1 (the count recorded next to the model);
# compress-weights, prune and hawq state the float and the compressed model's top-1 in the console
# and under "accuracy" in their --report; a label id outside the 10 classes is a clear error.
set -uo pipefail
cli=$1 models=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
model=$models/digits_cnn.onnx x=$models/digits_test_inputs.npy y=$models/digits_test_labels.npy
data=(--calib-npy "$x" --labels-npy "$y")
hessian=(--samples 4 --iterations 10)

expect 0 'Top-1 accuracy: 98\.33 % \(354/360\), top-5 100\.00 %' -- run "$model" --input "$x" --labels-npy "$y"
expect 0 'Top-1 accuracy: float 98\.33 %, compressed [0-9.]+ %' -- \
    compress-weights "$model" --mode int8_asym "${data[@]}" --out "$tmp/int8.onnx" \
    --report "$tmp/compress.json"
expect 0 'Top-1 accuracy: float 98\.33 %, pruned [0-9.]+ %' -- \
    prune "$model" --target-memory 90% --simd 1 "${data[@]}" "${hessian[@]}" \
    --out "$tmp/pruned.onnx" --report "$tmp/prune.json"
expect 0 'Top-1 accuracy: float 98\.33 %, mixed precision [0-9.]+ %' -- \
    hawq "$model" --hw npu --compression-ratio 1.4 "${data[@]}" "${hessian[@]}" \
    --setup-out "$tmp/hawq_setup.json" --report "$tmp/hawq.json"

# The reports' figures are those `evaluate` gives for the written models.
/usr/bin/python3 - "$tmp" "$models/digits_cnn.accuracy.json" <<'PY' ||
import json, sys
tmp, record = sys.argv[1], json.load(open(sys.argv[2]))
for name, key in (("compress", "compressed"), ("prune", "pruned"), ("hawq", "mixed_precision")):
    accuracy = json.load(open(f"{tmp}/{name}.json"))["accuracy"]
    assert accuracy["float"]["top1_correct"] == record["correct"], (name, accuracy["float"])
    assert accuracy["float"]["samples"] == 360, (name, accuracy["float"])
    assert 0.5 < accuracy[key]["top1"] <= 1.0, (name, accuracy[key])
    print(f"{name}: float {100 * accuracy['float']['top1']:.2f} %, "
          f"{key} {100 * accuracy[key]['top1']:.2f} %")
PY
    fail "a report lacks the float top-1 or the compressed model's"
for name in int8 pruned; do
    top1=$("$cli" evaluate "$tmp/$name.onnx" --calib-npy "$x" --labels-npy "$y" --json |
        /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['models'][0]['accuracy']['top1_correct'])")
    report=$([[ $name == int8 ]] && echo compress || echo prune)
    key=$([[ $name == int8 ]] && echo compressed || echo pruned)
    stated=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/$report.json'))['accuracy']['$key']['top1_correct'])")
    [[ $top1 == "$stated" ]] || fail "$report states $stated correct, evaluate of $name.onnx gives $top1"
done

/usr/bin/python3 -c "
import numpy as np
y = np.load('$y'); y[3] = 12; np.save('$tmp/bad_id.npy', y)"
expect 1 'label 12 of sample 3 is outside' -- run "$model" --input "$x" --labels-npy "$tmp/bad_id.npy"
expect 1 'label 12 of sample 3 is outside' -- \
    compress-weights "$model" --mode int8_asym --calib-npy "$x" --labels-npy "$tmp/bad_id.npy" \
    --out "$tmp/bad.onnx"
[[ ! -e $tmp/bad.onnx ]] || fail "compress-weights wrote its model although the labels are bad"
expect 1 'label 12 of sample 3 is outside' -- \
    prune "$model" --target-memory 90% --simd 1 --importance l2 --calib-npy "$x" \
    --labels-npy "$tmp/bad_id.npy" --out "$tmp/bad.onnx"
[[ ! -e $tmp/bad.onnx ]] || fail "prune wrote its model although the labels are bad"
# Labels for a model without class scores (ONNX's Relu test model: [3, 4, 5] out) are refused in
# every flow, not ignored.
relu=/usr/share/libonnx-testdata/data/node/test_relu/model.onnx
/usr/bin/python3 -c "
import numpy as np
np.save('$tmp/maps_x.npy', np.random.default_rng(0).random((3, 4, 5), dtype=np.float32))
np.save('$tmp/maps_y.npy', np.array([0, 1, 2], dtype=np.int64))"
for command in "compress-weights --mode int8_asym" quantize; do
    # shellcheck disable=SC2086 # the command's words
    expect 1 'labels need class scores, but the model.s first output is \[3,4,5\]' -- \
        $command "$relu" --calib-npy "$tmp/maps_x.npy" --labels-npy "$tmp/maps_y.npy" \
        --out "$tmp/maps.onnx"
done
[ "$failures" -eq 0 ] && echo "labels in every flow: ok"
exit $((failures > 0))
