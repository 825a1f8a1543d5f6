#!/usr/bin/env bash
# ONNX Runtime runs what compress-weights and convert-fp16 write. Compressed models must equal
# the float model with quantize-dequantized weights (--dequantized-out) within 1e-5 relative;
# FP16 models are compared with the float32 model and their error printed. Skips (77) without
# node or onnxruntime-node (install it with tests/e2e/ort/install.sh).
set -uo pipefail
cli=$1 writer=$2 demo=$3 ort_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
zoo=${QS_ZOO_DIR:-} # the resnet18 part needs it; a failure without it when QS_REQUIRE_ZOO=1
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

compare() { # compare NAME REF TEST TOL [run_compare options...]
    local name=$1 ref=$2 test=$3 tol=$4; shift 4
    "$cli" info --json "$ref" >"$tmp/info.json" || { fail "$name: info failed"; return; }
    echo "== $name"
    node "$here/ort/run_compare.mjs" --ort-dir "$ort_dir" --info "$tmp/info.json" --tol "$tol" \
        "$@" "$ref" "$test"
    local rc=$?
    [ "$rc" -eq 77 ] && exit 77
    [ "$rc" -eq 0 ] || fail "$name: outputs differ"
}

compressed() { # compressed NAME MODEL [compress-weights options...]
    local name=$1 model=$2; shift 2
    "$cli" compress-weights "$model" "$@" --out "$tmp/$name.onnx" \
        --dequantized-out "$tmp/$name.sim.onnx" >"$tmp/$name.log" 2>&1 ||
        { fail "$name: compress-weights failed: $(cat "$tmp/$name.log")"; return; }
    compare "$name" "$tmp/$name.sim.onnx" "$tmp/$name.onnx" 1e-5 --int-max 64
}

"$writer" "$tmp/llm.onnx" || fail "cannot write the tiny LLM"
compressed llm_int4_asym "$tmp/llm.onnx" --mode int4_asym
compressed llm_int4_sym_mixed "$tmp/llm.onnx" --mode int4_sym --group-size 32 --ratio 0.6
compressed llm_int4_all_layers "$tmp/llm.onnx" --mode int4_asym --group-size 64 --all-layers
compressed llm_int8_asym "$tmp/llm.onnx" --mode int8_asym
compressed llm_int8_sym "$tmp/llm.onnx" --mode int8_sym
compressed demo_int8_sym "$demo" --mode int8_sym
compressed demo_int4_all_layers "$demo" --mode int4_asym --all-layers --group-fallback adjust

for keep in --keep-io-types ""; do
    "$cli" convert-fp16 "$tmp/llm.onnx" --out "$tmp/llm16.onnx" $keep >/dev/null ||
        fail "convert-fp16 llm $keep failed"
    compare "llm_fp16 ${keep:-float16-io}" "$tmp/llm.onnx" "$tmp/llm16.onnx" 1e-2 --int-max 64
done
for keep in --keep-io-types ""; do
    "$cli" convert-fp16 "$demo" --out "$tmp/demo16.onnx" $keep >/dev/null ||
        fail "convert-fp16 demo $keep"
    compare "demo_fp16 ${keep:-float16-io}" "$demo" "$tmp/demo16.onnx" 1e-2
done

if [ ! -f "$zoo/resnet18.onnx" ] && [ "${QS_REQUIRE_ZOO:-}" = 1 ]; then
    fail "no resnet18.onnx in zoo '$zoo' and QS_REQUIRE_ZOO=1"
elif [ -f "$zoo/resnet18.onnx" ]; then
    compressed resnet18_int8_asym "$zoo/resnet18.onnx" --mode int8_asym
    "$cli" convert-fp16 "$zoo/resnet18.onnx" --out "$tmp/r16.onnx" --keep-io-types >/dev/null ||
        fail "convert-fp16 resnet18"
    compare resnet18_fp16 "$zoo/resnet18.onnx" "$tmp/r16.onnx" 1e-2
fi

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "ONNX Runtime: compressed and FP16 models run and match"
