#!/usr/bin/env bash
# The review pages in a real browser: the demo model's REVIEW.html and DIFF.html opened from disk in headless
# Chromium, a screenshot taken; the screenshot must not be blank (several colours, the bit-width
# colours among them) and the browser log must show no script error. Skips (77) without chromium.
# SHOT_DIR keeps the screenshot for a look.
set -uo pipefail
cli=$1 models=$2
demo=$models/digits_cnn.onnx
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "SKIP: chromium is not installed (Debian package 'chromium')"
    exit 77
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
unset DISPLAY WAYLAND_DISPLAY QT_QPA_PLATFORM
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$cli" report "$demo" --calib-npy "$models/digits_test_inputs.npy" \
    --labels-npy "$models/digits_test_labels.npy" --out "$tmp/REVIEW.html" >/dev/null 2>"$tmp/err" ||
    { echo "FAIL: report exited $?: $(tail -3 "$tmp/err")" >&2; exit 1; }

"$cli" quantize "$demo" --hw npu --setup-out "$tmp/a.json" >/dev/null 2>&1 &&
    "$cli" quantize "$demo" --hw npu --set '/fc/Gemm=4' --setup-out "$tmp/b.json" >/dev/null 2>&1 &&
    "$cli" diff "$tmp/a.json" "$tmp/b.json" --model "$demo" --hw npu --out "$tmp/DIFF.html" \
        >/dev/null 2>"$tmp/err" || { echo "FAIL: diff failed: $(tail -3 "$tmp/err")" >&2; exit 1; }

start=$(date +%s.%N)
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 \
    --screenshot="$tmp/shot.png" --window-size=1280,900 "file://$tmp/REVIEW.html" \
    >"$tmp/browser.out" 2>"$tmp/browser.log"
rc=$?
end=$(date +%s.%N)
echo "chromium: page loaded and screenshot taken in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') s (exit $rc)"
[ -s "$tmp/shot.png" ] || fail "no screenshot (chromium exited $rc): $(tail -5 "$tmp/browser.log")"
if grep -E 'Uncaught|:CONSOLE[:(]' "$tmp/browser.log" >"$tmp/script.err"; then
    fail "script errors in the page: $(head -3 "$tmp/script.err")"
fi
# The page's script ran: the graph was fitted into its viewport (a transform on its canvas).
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile2" --dump-dom "file://$tmp/REVIEW.html" >"$tmp/dom.html" 2>/dev/null
grep -q 'style="transform: translate(' "$tmp/dom.html" || fail "the zoom/pan script did not run"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile3" --enable-logging=stderr --v=0 \
    --screenshot="$tmp/diff.png" --window-size=1280,900 "file://$tmp/DIFF.html" \
    >/dev/null 2>"$tmp/diff.log"
[ -s "$tmp/diff.png" ] || fail "no screenshot of DIFF.html"
grep -E 'Uncaught|:CONSOLE[:(]' "$tmp/diff.log" && fail "script errors in DIFF.html"
if [ -s "$tmp/shot.png" ]; then
    /usr/bin/python3 - "$tmp/shot.png" <<'EOF' || fail "the screenshot looks blank"
import sys
from PIL import Image
image = Image.open(sys.argv[1]).convert("RGB")
colours = image.getcolors(maxcolors=1 << 20) or []
if len(colours) < 16:
    sys.exit(f"only {len(colours)} colours")
# The 8-bit green of the badges, legend and bars (DESIGN.md) is somewhere on the first screen.
green = sum(n for n, (r, g, b) in colours if abs(r - 0x2E) < 12 and abs(g - 0x9D) < 12 and abs(b - 0x4A) < 12)
if green < 50:
    sys.exit(f"no 8-bit green on the page ({green} pixels)")
EOF
    if [ -n "${SHOT_DIR:-}" ]; then
        mkdir -p "$SHOT_DIR" && cp "$tmp/shot.png" "$SHOT_DIR/review_report.png" &&
            cp "$tmp/diff.png" "$SHOT_DIR/review_diff.png"
    fi
fi
[ "$failures" -eq 0 ] && echo "review report in chromium: all checks passed"
exit "$failures"
