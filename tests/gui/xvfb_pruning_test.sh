#!/usr/bin/env bash
# The real window under Xvfb with --prune-target: the model is pruned on start (l2 importance,
# no dataset), its first section's entry is selected and centred, and the Pruning dock comes up.
# Checks the screenshot: the gauge's green fill (pruned bytes within the target) and the first
# section's colour (its tint on the graph, the kept bars of the dock's score chart) are on
# screen. Skips (77) without xvfb-run or ImageMagick, or when MODEL is "zoo:NAME" and
# $QS_ZOO_DIR has no NAME.onnx.
# Usage: xvfb_pruning_test.sh QUANTSCOPE MODEL|zoo:NAME [OUT.png] [SECONDS] [EXTRA ARGS...]
set -uo pipefail
app=$1 model=$2 out=${3:-} wait=${4:-12}
if [[ $model == zoo:* ]]; then
    model=${QS_ZOO_DIR:-}/${model#zoo:}.onnx
    [ -f "$model" ] || { echo "no $model (set QS_ZOO_DIR): skipped"; exit 77; }
fi
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
[ ${#extra[@]} -gt 0 ] || extra=(--prune-target 80% --prune-simd 4)
command -v xvfb-run >/dev/null && command -v import >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
shot=${out:-$tmp/shot.png}
export XDG_CONFIG_HOME=$tmp/config
xvfb-run -a -s "-screen 0 1280x820x24" bash -c '
    app=$1 model=$2 shot=$3 wait=$4; shift 4
    "$app" --prune-importance l2 "$@" "$model" & pid=$!
    sleep "$wait"
    import -window root "$shot"
    kill $pid; wait $pid 2>/dev/null; true' _ "$app" "$model" "$shot" "$wait" \
    "${extra[@]}" 2>/dev/null
[ -s "$shot" ] || { echo "FAIL: no screenshot"; exit 1; }
# The gauge's green (46, 125, 50) and section 0's blue (78, 121, 167), darkened for the bars
# and the entry's kept bar, with some tolerance.
count() { # IMAGE -> "green blue"
    convert "$1" -depth 8 txt:- | awk -F'[(),]' 'NR > 1 {
        r = $3; g = $4; b = $5
        if (r > 30 && r < 62 && g > 110 && g < 140 && b > 35 && b < 65) green++
        if (r > 55 && r < 90 && g > 95 && g < 135 && b > 135 && b < 180) blue++
    } END { printf "%d %d\n", green, blue }'
}
read -r green blue <<<"$(count "$shot")"
echo "pruning on screen: $green gauge-green, $blue section-blue pixels"
[ "$green" -gt 400 ] || { echo "FAIL: no memory gauge within the target"; exit 1; }
[ "$blue" -gt 400 ] || { echo "FAIL: no section colour (tint, kept bars)"; exit 1; }
echo "pruning view: ok"
