#!/usr/bin/env bash
# The real window under Xvfb with --calibrate-random: the demo model on NPU with a 4-bit input
# quantizer is calibrated on start and the SQNR overlay comes up. Checks the screenshot: the
# legend's colour bar (top-left of the graph) runs from red to green, and the graph area holds
# both a red ring (the 4-bit quantizer, low SQNR) and green rings (8-bit ones). Skips (77) without
# xvfb-run or ImageMagick. Usage: xvfb_sqnr_overlay_test.sh QUANTSCOPE MODEL [OUT.png]
set -uo pipefail
app=$1 model=$2 out=${3:-}
command -v xvfb-run >/dev/null && command -v import >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shot=${out:-$tmp/shot.png}
export XDG_CONFIG_HOME=$tmp/config
xvfb-run -a -s "-screen 0 1280x820x24" bash -c '
    "$1" --hw npu --set "#1=4" --calibrate-random 8 "$2" & pid=$!
    sleep 10
    import -window root "$3"
    kill $pid; wait $pid 2>/dev/null; true' _ "$app" "$model" "$shot" 2>/dev/null
[ -s "$shot" ] || { echo "FAIL: no screenshot"; exit 1; }
# Pixels that are clearly red (r > 170, g and b < 90) and clearly green (g > 150, r and b < 110).
count() { # IMAGE GEOMETRY -> "red green"
    convert "$1" -crop "$2" +repage -depth 8 txt:- | awk -F'[(),]' 'NR > 1 {
        r = $3; g = $4; b = $5
        if (r > 170 && g < 90 && b < 90) red++
        if (g > 150 && r < 110 && b < 110) green++
    } END { printf "%d %d\n", red, green }'
}
read -r legend_red legend_green <<<"$(count "$shot" 220x90+0+20)"
read -r graph_red graph_green <<<"$(count "$shot" 620x560+220+20)"
echo "legend: $legend_red red, $legend_green green pixels; graph: $graph_red red, $graph_green green"
[ "$legend_red" -gt 20 ] && [ "$legend_green" -gt 20 ] || { echo "FAIL: no SQNR legend"; exit 1; }
# The badges alone (4-bit red, 8-bit green fills) give about 80 red and 270 green pixels here; the
# rings and dB labels add as many again.
[ "$graph_red" -gt 120 ] || { echo "FAIL: no red (low SQNR) ring on the graph"; exit 1; }
[ "$graph_green" -gt 450 ] || { echo "FAIL: no green (high SQNR) ring on the graph"; exit 1; }
echo "sqnr overlay: ok"
