#!/usr/bin/env bash
# HAWQ setups exported to QDQ models run in ONNX Runtime and match our executor: `hawq --hw npu`
# (4/8-bit weights and activations) on the digits and demo models, trace order and pareto, then
# `quantize --setup-in ... --out`, then ORT (graph optimizations disabled: ORT 1.30's fusions
# reject int4 zero points, see quantize_ort_test.sh) against `quantscope-cli run` within 1e-4.
# Skips (77) without node or onnxruntime-node.
set -uo pipefail
cli=$1 digits=$2 demo=$3 ort_dir=$4
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

check() { # check NAME MODEL RATIO QUANTIZE_OPTIONS [hawq options...]
    local name=$1 model=$2 ratio=$3 qopts=$4; shift 4
    "$cli" hawq "$model" --hw npu --calib-random 4 --samples 4 --iterations 10 \
        --compression-ratio "$ratio" --setup-out "$tmp/$name.setup.json" "$@" \
        >"$tmp/$name.hawq.log" 2>&1 || { fail "$name: hawq failed: $(cat "$tmp/$name.hawq.log")"; return; }
    grep -q 'Chosen HAWQ bitwidth sequence' "$tmp/$name.hawq.log" || fail "$name: no log line"
    "$cli" quantize "$model" --setup-in "$tmp/$name.setup.json" --calib-random 8 \
        --out "$tmp/$name.onnx" $qopts >"$tmp/$name.q.log" 2>&1 ||
        { fail "$name: quantize failed: $(cat "$tmp/$name.q.log")"; return; }
    "$cli" info --json "$tmp/$name.onnx" >"$tmp/$name.info.json" || { fail "$name: info"; return; }
    echo "== $name: $(grep -o 'ratio=[0-9.]*' "$tmp/$name.hawq.log")"
    node "$here/ort/qdq_vs_ours.mjs" --ort-dir "$ort_dir" --cli "$cli" \
        --info "$tmp/$name.info.json" --work "$tmp/$name.work" --samples 3 \
        --optimization disabled --tol 1e-4 "$tmp/$name.onnx"
    local rc=$?
    [ "$rc" -eq 77 ] && exit 77
    [ "$rc" -eq 0 ] || fail "$name: ORT and our executor differ"
}

check digits_trace "$digits" 1.4 ""
# This front point puts 4-bit activations where ORT 1.30 computes them wrongly even with
# optimizations disabled (max |ORT - ours| 14 on logits of magnitude 7, while the same setup with
# int4 activations spelt as Clip + 8-bit QDQ agrees to 1e-7 and our two exports agree with each
# other): exported with --no-int4-activations, as quantize_ort_test.sh does for its requantizers.
check digits_pareto "$digits" 1.6 --no-int4-activations --search pareto
check demo_trace "$demo" 1.3 ""
exit $((failures > 0))
