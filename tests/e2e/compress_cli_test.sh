#!/usr/bin/env bash
# quantscope-cli compress-weights / convert-fp16 without a runtime: NNCF's table, sizes, the JSON
# report, opset and IR version of the result, and one-line errors with the usage exit code.
set -uo pipefail
cli=$1 writer=$2 demo=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

"$writer" "$tmp/llm.onnx" || fail "cannot write the tiny LLM"
expect 0 'compress-weights' -- --help
expect 0 'group-fallback' -- compress-weights --help
expect 0 'keep-io-types' -- convert-fp16 --help
expect 2 "unknown compression mode 'int3'" -- compress-weights "$tmp/llm.onnx" --mode int3 --out "$tmp/x.onnx"
expect 2 'usage' -- compress-weights "$tmp/llm.onnx" --mode int4_asym
expect 2 'outside \[0, 1\]' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 2 --out "$tmp/x.onnx"
expect 2 "unknown group-size fallback" -- compress-weights "$tmp/llm.onnx" --mode int4_asym --group-fallback maybe --out "$tmp/x.onnx"
expect 2 "node 'mlp.up' \(MatMul\), weight 'mlp.up.weight': Channel size 128 should be divisible by size of group 96" \
    -- compress-weights "$tmp/llm.onnx" --mode int4_asym --group-size 96 --out "$tmp/x.onnx"
[ -e "$tmp/x.onnx" ] && fail "a failed run wrote its output"
expect 0 'int4_asym, group size 256 \| 40% \(1 / 4\)' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --group-size 96 --group-fallback adjust --out "$tmp/adjust.onnx"
expect 0 '\| float +\| 80% \(2 / 4\)' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --group-size 96 --group-fallback ignore --out "$tmp/ignore.onnx"

# Data-aware sensitivity: token ids as an int64 .npy dataset (4 samples of the [1, 8] input).
python3 - "$tmp/ids.npy" <<'PY' || fail "cannot write the token dataset"
import struct, sys
header = "{'descr': '<i8', 'fortran_order': False, 'shape': (4, 8), }"
header += " " * (64 - 10 - len(header) - 1) + "\n"
body = b"".join(struct.pack("<q", (7 * i + 3) % 64) for i in range(32))
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body)
PY
expect 2 "unknown sensitivity metric 'hessian'" -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 0.6 --sensitivity-metric hessian --out "$tmp/x.onnx"
expect 2 "'mean_activation_variance' needs a dataset" -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 0.6 --sensitivity-metric mean_activation_variance --out "$tmp/x.onnx"
expect 1 "float inputs only; 'input_ids' is int64" -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 0.6 --calib-random 4 --out "$tmp/x.onnx"
expect 2 'excludes' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --calib-random 4 --calib-npy "$tmp/ids.npy" --out "$tmp/x.onnx"
expect 0 'Sensitivity: max_activation_variance over 4 dataset row\(s\) in batches of 1' \
    -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 0.6 --calib-npy "$tmp/ids.npy" --out "$tmp/aware.onnx" --report "$tmp/aware.json"
expect 0 'Sensitivity: mean_activation_magnitude' \
    -- compress-weights "$tmp/llm.onnx" --mode int4_asym --ratio 0.6 --calib-npy "$tmp/ids.npy" --sensitivity-metric mean_activation_magnitude --out "$tmp/aware2.onnx"
# --session: the plan goes into the session's compression section, a second run keeps the others.
expect 0 "Session: $tmp/llm.qscope" -- compress-weights "$tmp/llm.onnx" --mode int8_asym --out "$tmp/s.onnx" --session "$tmp/llm.qscope"
python3 -c "
import json
s = json.load(open('$tmp/llm.qscope'))
assert s['quantscope_session'] == 2 and s['sections']['compression']['options']['mode'] == 'int8_asym', s
s['sections']['hawq'] = {'kept': True}
json.dump(s, open('$tmp/llm.qscope', 'w'))
" || fail "the compress-weights --session file is not as expected"
expect 0 "Session: $tmp/llm.qscope" -- compress-weights "$tmp/llm.onnx" --mode int4_sym --out "$tmp/s.onnx" --session "$tmp/llm.qscope"
python3 -c "
import json
s = json.load(open('$tmp/llm.qscope'))
assert s['sections']['hawq'] == {'kept': True} and s['sections']['compression']['options']['mode'] == 'int4_sym', s
" || fail "compress-weights --session dropped a section or kept the old plan"
python3 - "$tmp/aware.json" <<'PY' || fail "the data-aware --report JSON is not as expected"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["options"]["sensitivity_metric"] == "max_activation_variance", report["options"]
weights = {w["weight"]: w for w in report["weights"]}
for name in ("mlp.up.weight", "mlp.down.weight"):
    assert weights[name]["activation_statistic"] > 0, weights[name]
    assert weights[name]["sensitivity"] > 0, weights[name]
modes = sorted(weights[n]["mode"] for n in ("mlp.up.weight", "mlp.down.weight"))
assert modes == ["int4_asym", "int8_asym"], modes
least = min(("mlp.up.weight", "mlp.down.weight"), key=lambda n: weights[n]["sensitivity"])
assert weights[least]["mode"] == "int4_asym", (least, weights)
PY

expect 0 '\| Weight compression mode +\| % all parameters \(layers\) +\| % ratio-defining parameters \(layers\) \|' \
    -- compress-weights "$tmp/llm.onnx" --mode int4_asym --out "$tmp/int4.onnx" --report "$tmp/int4.json"
expect 0 'int4_asym, group size 128 \| 80% \(2 / 4\)' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --out "$tmp/int4.onnx"
expect 0 'Model size: [0-9.]+ MiB -> [0-9.]+ MiB' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --out "$tmp/int4.onnx"
expect 0 'Opset 21, IR version 10' -- compress-weights "$tmp/llm.onnx" --mode int4_sym --ratio 0.6 --group-size 32 --out "$tmp/mixed.onnx"
expect 0 'onnx::checker: passed' -- compress-weights "$tmp/llm.onnx" --mode int8_sym --out "$tmp/int8.onnx"
expect 0 'onnx::checker: passed' -- compress-weights "$demo" --mode int8_asym --out "$tmp/demo8.onnx"
expect 0 'ai.onnx:21' -- info "$tmp/int4.onnx"
expect 0 'DequantizeLinear +4' -- info "$tmp/int4.onnx"
expect 0 'Cast nodes inserted' -- convert-fp16 "$tmp/llm.onnx" --out "$tmp/fp16.onnx" --keep-io-types
expect 0 'onnx::checker: passed' -- convert-fp16 "$demo" --out "$tmp/demo16.onnx" --block-op Softmax

python3 - "$tmp/int4.json" <<'PY' || fail "the --report JSON is not as expected"
import json, sys
report = json.load(open(sys.argv[1]))
assert report["options"]["mode"] == "int4_asym" and report["options"]["group_size"] == 128
modes = {w["weight"]: (w["mode"], w["group_size"]) for w in report["weights"]}
assert modes["mlp.up.weight"] == ("int4_asym", 128), modes
assert modes["lm_head.weight"] == ("int8_asym", -1), modes
assert report["summary"]["opset"] == 21 and report["summary"]["ir_version"] == 10
assert report["summary"]["weight_bytes_after"] < report["summary"]["weight_bytes_before"] / 4
PY

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "compress-weights / convert-fp16 CLI: all checks passed"
