#!/usr/bin/env bash
# The issue's done-when on every make_zoo.py model: `quantize --calib-random N --out` writes a QDQ
# model ONNX Runtime loads and runs (finite outputs) at optimization levels "disabled" and "all";
# the ORT-vs-our-executor differences are printed (our executor equals the fake-quant simulation:
# unit test QdqVsSimulation.ZooModels). Larger models differ by one-step rounding flips that
# propagate (core/quantization/README.md, "Larger models"), so no bound is asserted here.
# Skips (77) without the zoo ($QS_ZOO_DIR; a failure when QS_REQUIRE_ZOO=1), node or
# onnxruntime-node.
set -uo pipefail
cli=$1 ort_dir=$2 samples=${3:-8}
here=$(cd "$(dirname "$0")" && pwd)
zoo=${QS_ZOO_DIR:-}
if ! ls "$zoo"/*.onnx >/dev/null 2>&1; then
    [ "${QS_REQUIRE_ZOO:-}" = 1 ] && { echo "FAIL: no zoo models in '$zoo' and QS_REQUIRE_ZOO=1"; exit 1; }
    echo "no zoo models in '$zoo' (set QS_ZOO_DIR): skipped"; exit 77
fi
command -v node >/dev/null || { echo "node not found: skipping"; exit 77; }
[ -d "$ort_dir/node_modules/onnxruntime-node" ] || {
    echo "onnxruntime-node not installed in $ort_dir: skipping"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
for model in "$zoo"/*.onnx; do
    name=$(basename "$model" .onnx)
    echo "== $name"
    if ! "$cli" quantize "$model" --hw cpu --preset performance --calib-random "$samples" \
        --out "$tmp/$name.onnx" >"$tmp/$name.log" 2>&1; then
        echo "FAIL: $name: quantize failed: $(tail -3 "$tmp/$name.log")" >&2
        failures=$((failures + 1))
        continue
    fi
    grep -E "^Output|^QDQ model" "$tmp/$name.log"
    "$cli" info --json "$tmp/$name.onnx" >"$tmp/$name.info.json"
    for level in disabled all; do
        node "$here/ort/qdq_vs_ours.mjs" --ort-dir "$ort_dir" --cli "$cli" \
            --info "$tmp/$name.info.json" --work "$tmp/$name.work" --samples 2 \
            --optimization "$level" --tol none "$tmp/$name.onnx"
        rc=$?
        [ "$rc" -eq 77 ] && exit 77
        [ "$rc" -eq 0 ] || { echo "FAIL: $name: ORT ($level)" >&2; failures=$((failures + 1)); }
    done
    rm -rf "$tmp/$name.work" "$tmp/$name.onnx"
done
[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ONNX Runtime loads and runs every zoo QDQ model"
