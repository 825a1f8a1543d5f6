#!/usr/bin/env bash
# The real window under Xvfb with --compare: the digits model on NPU laid over a setup whose input
# quantizer and stem Conv weight are 4-bit (written by quantscope-cli). Checks the screenshot: the
# legend (top-left of the graph) and the two rings (at the top of the graph) are amber. Skips (77)
# without xvfb-run or ImageMagick. Usage: xvfb_compare_test.sh QUANTSCOPE CLI MODEL [OUT.png]
set -uo pipefail
app=$1 cli=$2 model=$3 out=${4:-}
command -v xvfb-run >/dev/null && command -v import >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shot=${out:-$tmp/shot.png}
export XDG_CONFIG_HOME=$tmp/config
"$cli" quantize "$model" --hw npu --set '#1=4' --set '/stem/stem.0/Conv=4' \
    --setup-out "$tmp/four.json" >/dev/null 2>&1 || { echo "FAIL: quantize --setup-out"; exit 1; }
xvfb-run -a -s "-screen 0 1280x820x24" bash -c '
    "$1" --hw npu --compare "$2" "$3" & pid=$!
    sleep 10
    import -window root "$4"
    kill $pid; wait $pid 2>/dev/null; true' _ "$app" "$tmp/four.json" "$model" "$shot" 2>/dev/null
[ -s "$shot" ] || { echo "FAIL: no screenshot"; exit 1; }
# Amber pixels (the overlay's 0xE08E0B): r > 190, 110 < g < 170, b < 70.
amber() { # IMAGE GEOMETRY
    convert "$1" -crop "$2" +repage -depth 8 txt:- | awk -F'[(),]' 'NR > 1 {
        if ($3 > 190 && $4 > 110 && $4 < 170 && $5 < 70) n++
    } END { print n + 0 }'
}
legend=$(amber "$shot" 280x60+0+80)
rings=$(amber "$shot" 300x180+300+40)
echo "amber pixels: legend $legend, rings $rings"
[ "$legend" -gt 100 ] || { echo "FAIL: no comparison legend"; exit 1; }
[ "$rings" -gt 100 ] || { echo "FAIL: no ring on the changed badges"; exit 1; }
echo "compare overlay: ok"
