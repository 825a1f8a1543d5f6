#!/usr/bin/env bash
# quantscope-cli compress-weights / convert-fp16 without a runtime: NNCF's table, sizes, the JSON
# report, opset and IR version of the result, and one-line errors with the usage exit code.
set -uo pipefail
cli=$1 writer=$2 demo=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect() { # expect CODE PATTERN -- ARGS...
    local code=$1 pattern=$2; shift 3
    local out rc
    out=$("$cli" "$@" 2>&1); rc=$?
    [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code: $out"
    if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; then
        fail "'$*' output lacks /$pattern/: $out"
    fi
}

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
expect 1 'data-aware' -- compress-weights "$tmp/llm.onnx" --mode int4_asym --calib-dataset "$tmp" --out "$tmp/x.onnx"

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
