#!/usr/bin/env bash
# quantscope-cli render: SVG, PNG, PDF and DOT of the demo model without a display, the same
# bytes on a second run, one badge per quantizer with --setup / --hw, one-line errors and exit
# codes for bad output names and bad models.
set -uo pipefail
cli=$1 demo=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

for ext in svg png pdf dot; do
    for run in 1 2; do
        "$cli" render "$demo" --out "$tmp/demo$run.$ext" 2>"$tmp/err" ||
            fail "render to .$ext exited $?: $(cat "$tmp/err")"
    done
    cmp -s "$tmp/demo1.$ext" "$tmp/demo2.$ext" || fail ".$ext output differs between two runs"
done
head -c 200 "$tmp/demo1.svg" | grep -q '<svg\|<?xml' || fail "SVG lacks an svg header"
grep -q '/fc/Gemm' "$tmp/demo1.svg" || fail "SVG lacks the node name /fc/Gemm"
[ "$(head -c 8 "$tmp/demo1.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    fail "PNG lacks the PNG signature"
head -c 5 "$tmp/demo1.pdf" | grep -q '%PDF-' || fail "PDF lacks the %PDF header"
grep -q '^digraph' "$tmp/demo1.dot" || fail "DOT does not start with digraph"
[ "$(grep -c ' -> ' "$tmp/demo1.dot")" -gt 42 ] || fail "DOT has too few edges"
if command -v dot >/dev/null; then
    dot -Tsvg "$tmp/demo1.dot" -o "$tmp/check.svg" 2>/dev/null || fail "dot rejects our DOT"
fi
"$cli" render "$demo" --out "$tmp/dark.svg" --theme dark 2>/dev/null || fail "--theme dark failed"
cmp -s "$tmp/dark.svg" "$tmp/demo1.svg" && fail "--theme dark drew the same image"

# Quantizer badges: one label in the badge font per quantizer of the setup, from --setup and --hw.
"$cli" quantize "$demo" --hw npu --setup-out "$tmp/setup.json" >/dev/null 2>&1 ||
    fail "quantize for the badges failed"
quantizers=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["quantization_points"]))' "$tmp/setup.json")
"$cli" render "$demo" --setup "$tmp/setup.json" --out "$tmp/setup.svg" 2>"$tmp/err" ||
    fail "render --setup exited $?: $(cat "$tmp/err")"
badges=$(grep -o '<text [^>]*font-family="QuantscopeBadge"' "$tmp/setup.svg" | wc -l)
[ "$badges" -eq "$quantizers" ] || fail "--setup SVG has $badges badges, setup has $quantizers"
"$cli" render "$demo" --hw npu --out "$tmp/hw.svg" 2>"$tmp/err" ||
    fail "render --hw exited $?: $(cat "$tmp/err")"
badges=$(grep -o '<text [^>]*font-family="QuantscopeBadge"' "$tmp/hw.svg" | wc -l)
[ "$badges" -eq "$quantizers" ] || fail "--hw npu SVG has $badges badges, setup has $quantizers"
"$cli" render "$demo" --setup "$tmp/missing.json" --out "$tmp/y.svg" 2>/dev/null &&
    fail "a missing --setup file was accepted"

"$cli" render "$demo" --out "$tmp/graph.bmp" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 2 ] || fail "bad --out suffix exited $rc, expected 2"
grep -q "\.svg, \.png, \.pdf or \.dot" "$tmp/err" || fail "bad suffix message: $(cat "$tmp/err")"
[ ! -e "$tmp/graph.bmp" ] || fail "a file was written for a bad suffix"
"$cli" render "$tmp/missing.onnx" --out "$tmp/x.svg" 2>"$tmp/err"; rc=$?
[ "$rc" -eq 1 ] || fail "missing model exited $rc, expected 1"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "missing model error is not one line: $(cat "$tmp/err")"
"$cli" render "$demo" 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "render without --out exited $rc, expected 2"
"$cli" info "$demo" >/dev/null || fail "info needs a display now"

[ "$failures" -eq 0 ] && echo "cli render: all checks passed"
exit "$failures"
