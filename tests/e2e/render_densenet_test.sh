#!/usr/bin/env bash
# quantscope-cli render of torchvision DenseNet-121 (622 ops, Concats with many long edges: plain
# dot takes minutes on it): a complete SVG with all 58 dense layers open, well inside the
# generous timeout (the speed goal lives in tests/bench/open_bench.sh). Skips (77) when
# $QS_ZOO_DIR/densenet121.onnx is absent (tests/bench/export_densenet121.py writes it; packaging/
# test.sh does), and fails instead with QS_REQUIRE_ZOO=1.
set -uo pipefail
cli=$1
model=${QS_ZOO_DIR:-}/densenet121.onnx
if [ ! -f "$model" ]; then
    [ "${QS_REQUIRE_ZOO:-0}" = 1 ] && { echo "FAIL: $model is absent (QS_REQUIRE_ZOO=1)"; exit 1; }
    echo "SKIP: $model is absent"; exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$cli" render "$model" --out "$tmp/densenet.svg" 2>"$tmp/err" ||
    fail "render exited $?: $(tail -3 "$tmp/err")"
head -c 200 "$tmp/densenet.svg" | grep -q '<svg\|<?xml' || fail "SVG lacks an svg header"
# Every one of the 58 dense layers is drawn open: its frame is titled with its scope.
layers=$(grep -o '/features/denseblock[1-4]/denselayer[0-9]*<' "$tmp/densenet.svg" | sort -u | wc -l)
[ "$layers" -eq 58 ] || fail "SVG shows $layers dense layers, DenseNet-121 has 58"
grep -q '/classifier/Gemm' "$tmp/densenet.svg" || fail "SVG lacks /classifier/Gemm"
[ "$failures" -eq 0 ] && echo "render of DenseNet-121: ok"
exit $((failures > 0))
