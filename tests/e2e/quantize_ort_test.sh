#!/usr/bin/env bash
# ONNX Runtime runs the QDQ models `quantscope-cli quantize --out` writes: 8-bit (CPU, symmetric;
# NPU mixed preset, asymmetric uint8, two outputs), all 4-bit (int4 activations and weights at
# opset 21), mixed 8/6/4/3-bit activations with 8/4-bit weights (Clip + QDQ, per-channel Max/Min),
# and NPU requantizers (4-bit below 8-bit parents). ORT with graph optimizations disabled executes
# the QDQ graph as written and must equal our executor (`quantscope-cli run`) on the same model
# within 1e-4 relative (these outputs are float); our executor in turn equals the fake-quant
# simulation (unit test QdqVsSimulation). At level "all" ORT fuses QDQ into integer kernels and
# quantizes Conv biases to int32, which rounds differently: that run must load, run and stay
# finite, and its difference is printed.
# ONNX Runtime 1.30 and int4 activations: at levels above "disabled" its ClipQuantFusion throws on
# an int4 zero point after Relu/Clip ("Unexpected data type for QuantizeLinear input
# y_zero_point"), and the demo's int4 requantizer corrupts its heap; those models run at
# "disabled" only (all-4-bit) or are exported with --no-int4-activations (requantizers).
# Skips (77) without node or onnxruntime-node (install it with tests/e2e/ort/install.sh).
set -uo pipefail
cli=$1 demo=$2 tiny=$3 ort_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

compare() { # compare NAME MODEL LEVELS
    local name=$1 model=$2 levels=$3
    "$cli" info --json "$model" >"$tmp/$name.info.json" || { fail "$name: info failed"; return; }
    echo "== $name"
    local level tol rc
    for level in $levels; do
        tol=1e-4
        [ "$level" = all ] && tol=none
        node "$here/ort/qdq_vs_ours.mjs" --ort-dir "$ort_dir" --cli "$cli" \
            --info "$tmp/$name.info.json" --work "$tmp/$name.work" --samples 3 \
            --optimization "$level" --tol "$tol" "$model"
        rc=$?
        [ "$rc" -eq 77 ] && exit 77
        [ "$rc" -eq 0 ] || fail "$name: ORT ($level) and our executor differ"
    done
}

quantized() { # quantized NAME LEVELS MODEL EXPECT [quantize options...]; EXPECT: grep -E on the log
    local name=$1 levels=$2 model=$3 expect=$4; shift 4
    "$cli" quantize "$model" --calib-random 8 --out "$tmp/$name.onnx" "$@" \
        >"$tmp/$name.log" 2>&1 || { fail "$name: quantize failed: $(cat "$tmp/$name.log")"; return; }
    grep -Eq "$expect" "$tmp/$name.log" || fail "$name: log lacks /$expect/: $(cat "$tmp/$name.log")"
    compare "$name" "$tmp/$name.onnx" "$levels"
}

both="disabled all"
quantized demo_int8_cpu "$both" "$demo" "opset 13, .*onnx::checker: passed" --hw cpu \
    --preset performance
quantized tiny_int8_npu_mixed "$both" "$tiny" "onnx::checker: passed" --hw npu --preset mixed
requant=(--hw npu --rule merge_with_potential_requantization --set /block1/Add:0=4
    --set /se/Mul:0=4)
quantized demo_requantizers "$both" "$demo" "Requantizers: 2" "${requant[@]}" --no-int4-activations

"$cli" quantize "$demo" --setup-out "$tmp/setup.json" >/dev/null || fail "setup-out failed"
node "$here/ort/set_bits.mjs" "$tmp/setup.json" "$tmp/int4.json" 4 4
quantized demo_int4 disabled "$demo" "0 clipped grids; opset 21" --setup-in "$tmp/int4.json"
quantized demo_int4_in_int8 "$both" "$demo" "[1-9][0-9]* clipped grids; opset 21" \
    --setup-in "$tmp/int4.json" --no-int4-activations
node "$here/ort/set_bits.mjs" "$tmp/setup.json" "$tmp/mixed.json" 8,6,4,3 8,4
quantized demo_mixed_8643 "$both" "$demo" "[1-9][0-9]* clipped grids; opset 21" \
    --setup-in "$tmp/mixed.json"

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "ONNX Runtime: QDQ models run and match our executor"
