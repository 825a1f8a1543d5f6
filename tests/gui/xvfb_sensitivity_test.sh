#!/usr/bin/env bash
# The real window under Xvfb with --hessian-random: the model's Hessian scores are computed on
# start (random samples, 10 iterations), the sensitivity overlay and the Sensitivity dock come up.
# Checks the screenshot: the plasma ramp's dark purple and yellow ends (the least and the most
# sensitive op's frame, the legend and the dock's bars) are on screen. Skips (77) without xvfb-run
# or ImageMagick. Usage: xvfb_sensitivity_test.sh QUANTSCOPE MODEL [OUT.png] [SECONDS]
set -uo pipefail
app=$1 model=$2 out=${3:-} wait=${4:-12}
command -v xvfb-run >/dev/null && command -v import >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shot=${out:-$tmp/shot.png}
export XDG_CONFIG_HOME=$tmp/config
xvfb-run -a -s "-screen 0 1280x820x24" bash -c '
    "$1" --hessian-random 4 "$2" & pid=$!
    sleep "$4"
    import -window root "$3"
    kill $pid; wait $pid 2>/dev/null; true' _ "$app" "$model" "$shot" "$wait" 2>/dev/null
[ -s "$shot" ] || { echo "FAIL: no screenshot"; exit 1; }
# Dark blue-purple (13, 8, 135) and yellow (240, 249, 33), with some tolerance.
count() { # IMAGE -> "purple yellow"
    convert "$1" -depth 8 txt:- | awk -F'[(),]' 'NR > 1 {
        r = $3; g = $4; b = $5
        if (r < 60 && g < 50 && b > 110 && b < 170) purple++
        if (r > 200 && g > 210 && b < 90) yellow++
    } END { printf "%d %d\n", purple, yellow }'
}
read -r purple yellow <<<"$(count "$shot")"
echo "plasma ends on screen: $purple dark purple, $yellow yellow pixels"
[ "$purple" -gt 40 ] || { echo "FAIL: no least-sensitive (purple) colour on screen"; exit 1; }
[ "$yellow" -gt 40 ] || { echo "FAIL: no most-sensitive (yellow) colour on screen"; exit 1; }
echo "sensitivity overlay: ok"
