#!/usr/bin/env bash
# The real window under Xvfb: open the demo model, grab the screen, and check that the graph
# area is drawn (not blank: several colours and real contrast). Skips (77) without xvfb-run or
# ImageMagick. Usage: xvfb_screenshot_test.sh QUANTSCOPE MODEL [OUT.png]
set -uo pipefail
app=$1 model=$2 out=${3:-}
command -v xvfb-run >/dev/null && command -v import >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shot=${out:-$tmp/shot.png}
export XDG_CONFIG_HOME=$tmp/config
xvfb-run -a -s "-screen 0 1280x820x24" bash -c '
    "$1" "$2" & pid=$!
    sleep 8
    import -window root "$3"
    kill $pid; wait $pid 2>/dev/null; true' _ "$app" "$model" "$shot" 2>/dev/null
[ -s "$shot" ] || { echo "FAIL: no screenshot"; exit 1; }
# The graph is the left part of the window; the model dock is on the right.
graph=$tmp/graph.png
convert "$shot" -crop 800x700+0+40 +repage "$graph"
colours=$(convert "$graph" -format %k info:)
spread=$(convert "$graph" -colorspace Gray -format '%[fx:standard_deviation]' info:)
echo "graph area: $colours colours, grey standard deviation $spread"
[ "$colours" -gt 50 ] || { echo "FAIL: graph area looks blank ($colours colours)"; exit 1; }
awk -v s="$spread" 'BEGIN { exit !(s > 0.05) }' || { echo "FAIL: no contrast ($spread)"; exit 1; }
echo "screenshot: ok"
