#!/usr/bin/env bash
# The README's exit codes for every command: 2 only for a wrong command line (unknown option,
# malformed option value), 1 for any bad input file or data, with one error line naming the file
# and the problem. Includes the broken files of issue #18: hand-edited setups, .npy files of the
# wrong dtype, order, length or shape, HW configs and sessions, and an unwritable --out.
set -uo pipefail
cli=$1 model=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

# expect_line CODE PATTERN -- ARGS...: as expect, and stderr is exactly one "error:" line.
expect_line() {
    local code=$1 pattern=$2; shift 3
    local err rc
    err=$("$cli" "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code: $err"
    [ "$(wc -l <<<"$err")" -eq 1 ] || fail "'$*' wrote more than one line on stderr: $err"
    grep -qE -- "$pattern" <<<"$err" || fail "'$*' stderr lacks /$pattern/: $err"
}

printf 'not an onnx model' >"$tmp/garbage.onnx"
mkdir -p "$tmp/ro" && chmod a-w "$tmp/ro"
unwritable="$tmp/no/such/dir/out.onnx"

# --- every command: an unknown option and a malformed value are usage (2), a bad model is 1.
declare -A valid=(
    [info]=""
    [quantize]="--calib-random 2 --out $tmp/x.onnx"
    [compress-weights]="--mode int8_sym --out $tmp/x.onnx"
    [convert-fp16]="--out $tmp/x.onnx"
    [run]="--random 2"
    [hessian]="--mode activation --granularity per-tensor --samples 2 --calib-random 2 --out $tmp/h.json"
    [hawq]="--compression-ratio 1.5 --calib-random 2 --samples 2 --setup-out $tmp/x.json"
    [evaluate]="$model --calib-random 2"
    [prune]="--target-memory 50% --importance l2 --out $tmp/x.onnx"
)
for command in "${!valid[@]}"; do
    # shellcheck disable=SC2086 # the flags split into words on purpose
    expect 2 'usage error' -- "$command" "$model" ${valid[$command]} --no-such-option
    # shellcheck disable=SC2086
    expect_line 1 "garbage.onnx" -- "$command" "$tmp/garbage.onnx" ${valid[$command]}
    # A stray word is refused by name (hessian, hawq and evaluate once took it for a positional
    # --calib-batch), except by evaluate, whose MODEL... takes it for one more model.
    if [ "$command" != evaluate ]; then
        # shellcheck disable=SC2086
        expect 2 "not expected: stray" -- "$command" "$model" ${valid[$command]} stray
    fi
    "$cli" "$command" --help | grep -q '^Usage:.*batch' && fail "$command --help: a batch positional"
done
# (A build without Qt has no `render`; `render --help` would still exit 0 with the main help.)
if "$cli" --help 2>/dev/null | grep -q '^  render '; then
    expect 2 'usage error' -- render "$model" --no-such-option
    expect 2 'must end in' -- render "$model" --out "$tmp/graph.txt"
    expect 1 'garbage.onnx' -- render "$tmp/garbage.onnx" --out "$tmp/graph.svg"
fi
expect 2 'usage error' -- quantize "$model" --calib-random many
expect 2 'usage error' -- run "$model" --random
expect 2 'usage error' -- hessian "$model" --samples zero
expect 2 "unknown --rule 'sideways'|--rule: sideways not in" -- quantize "$model" --rule sideways
expect 2 "unknown compression mode 'int3'" -- compress-weights "$model" --mode int3 --out "$tmp/x.onnx"
expect 2 'expects a percentage' -- prune "$model" --target-memory lots --importance l2 --out "$tmp/x.onnx"
expect 2 'Invalid compression ratio' -- hawq "$model" --compression-ratio 99 --calib-random 2 --samples 2 --iterations 2 --setup-out "$tmp/x.json"
expect 2 'nothing to evaluate' -- evaluate "$model" --calib-random 2

# --- unwritable outputs are bad input (1).
expect_line 1 "no/such/dir" -- convert-fp16 "$model" --out "$unwritable"
expect 1 "no/such/dir" -- quantize "$model" --calib-random 2 --out "$unwritable"
expect 1 "no/such/dir" -- quantize "$model" --setup-out "$tmp/no/such/dir/setup.json"
expect 1 "no/such/dir" -- compress-weights "$model" --mode int8_sym --out "$unwritable"
expect 1 "no/such/dir" -- run "$model" --random 2 --out "$tmp/no/such/dir"
expect_line 1 "^quantscope-cli: error: --out-dir: cannot create the folder '$model/outputs'" -- \
    run "$model" --random 2 --out-dir "$model/outputs"
expect 1 "it is a folder" -- run "$model" --random 2 --out "$tmp"
expect 1 "no/such/dir" -- prune "$model" --target-memory 90% --simd 1 --importance l2 --out "$unwritable"

# --- setups (quantize --setup-in, render --setup): the issue's broken files and one per check.
"$cli" quantize "$model" --setup-out "$tmp/setup.json" >/dev/null || fail "cannot write a setup"
/usr/bin/python3 - "$tmp" "$model" <<'PY' || fail "cannot write the broken setups"
import json, sys
tmp = sys.argv[1]
s = json.load(open(f"{tmp}/setup.json"))
points = s["quantization_points"]
act = next(k for k, v in points.items() if v["qip_class"].startswith("Activation")
           and not v["qip"]["target_node_name"].startswith("nncf_model_input"))
wgt = next(k for k, v in points.items() if v["qip_class"].startswith("Weight"))
wnode = points[wgt]["qip"]["target_node_name"]
def broken(name, edit):
    t = json.loads(json.dumps(s)); edit(t)
    json.dump(t, open(f"{tmp}/{name}.json", "w"), indent=1)
def at(t, k): return t["quantization_points"][k]
def port77(t): at(t, act)["qip"].update(target_node_name=wnode, input_port_id=77)
broken("port77", port77)
broken("group99999", lambda t: t["unified_scale_groups"].update({"0": [int(act), 99999]}))
broken("bits1e30", lambda t: at(t, act)["qconfig"].update(num_bits=1e30))
broken("bits_string", lambda t: at(t, act)["qconfig"].update(num_bits="8"))
broken("no_node", lambda t: at(t, act)["qip"].update(target_node_name="ghost"))
broken("weightless", lambda t: at(t, wgt)["qip"].update(target_node_name=points[act]["qip"]["target_node_name"]))
broken("group_weight", lambda t: t["unified_scale_groups"].update({"0": [int(act), int(wgt)]}))
broken("unknown_field", lambda t: at(t, act)["qip"].update(input_port=0))
broken("bad_id", lambda t: t["quantization_points"].update({"x1": at(t, act)}))
broken("same_point", lambda t: t["quantization_points"].update({"9999": at(t, act)}))
broken("bad_mode", lambda t: at(t, act)["qconfig"].update(mode="Symmetric"))
broken("requant_missing", lambda t: t.update(requantization=[{"requantizer": int(act), "upstream": 4242}]))
broken("merged_present", lambda t: t.update(merged=[{"removed": int(act), "merged_into": int(wgt)}]))
text = open(f"{tmp}/setup.json").read()
open(f"{tmp}/repeated_key.json", "w").write('{"merged": [], ' + text.lstrip()[1:])
open(f"{tmp}/not_json.json", "w").write('{"quantization_points": ')
open(f"{tmp}/setup_meta.txt", "w").write(f"{act} {wgt} {wnode}\n")
PY
read -r act wgt wnode <"$tmp/setup_meta.txt"
setup_error() { # setup_error FILE PATTERN
    expect_line 1 "setup '$tmp/$1.json': $2" -- quantize "$model" --setup-in "$tmp/$1.json"
}
setup_error port77 "quantization_points\[$act\]\.qip\.input_port_id: node '$wnode' has [0-9]+ inputs, no input 77"
setup_error group99999 'unified_scale_groups\[0\]\[1\]: no quantization point 99999'
setup_error bits1e30 "quantization_points\[$act\]\.qconfig\.num_bits: expected an integer in 2\.\.16, got 1e\+30"
setup_error bits_string "quantization_points\[$act\]\.qconfig\.num_bits: expected an integer in 2\.\.16, got a string"
setup_error no_node "quantization_points\[$act\]\.qip\.target_node_name: no node 'ghost' in the model"
setup_error weightless "quantization_points\[$wgt\]\.qip\.target_node_name: node '.*' has no constant weight"
setup_error group_weight "unified_scale_groups\[0\]\[1\]: quantization point $wgt is a weight point"
setup_error unknown_field "quantization_points\[$act\]\.qip\.input_port: unknown field"
setup_error bad_id "quantization_points\.x1: the key 'x1' is not an id"
setup_error same_point "quantization_points\[9999\]\.qip: the same insertion point .* as quantization_points\[$act\]"
setup_error bad_mode "quantization_points\[$act\]\.qconfig\.mode: unknown quantization mode 'Symmetric'"
setup_error requant_missing 'requantization\[0\]\.upstream: no quantization point 4242'
setup_error merged_present "merged\[0\]\.removed: quantization point $act is still in quantization_points"
setup_error repeated_key 'merged: key given twice'
setup_error not_json 'not valid JSON'
expect_line 1 "--setup-in: file '$tmp/missing.json': no such file" -- quantize "$model" --setup-in "$tmp/missing.json"
# The bad point no longer vanishes from an exported model: nothing is written.
expect 1 'no input 77' -- quantize "$model" --setup-in "$tmp/port77.json" --calib-random 2 --out "$tmp/q.onnx"
[ -e "$tmp/q.onnx" ] && fail "a model was exported from a setup with a bad point"
if "$cli" --help 2>/dev/null | grep -q '^  render '; then
    expect_line 1 "setup '$tmp/port77.json': .*no input 77" -- render "$model" --setup "$tmp/port77.json" --out "$tmp/g.svg"
fi

# --- .npy datasets: wrong dtype, Fortran order, truncated, wrong shape for the model input.
/usr/bin/python3 - "$tmp" <<'PY' || fail "cannot write the broken .npy files"
import numpy as np, sys
tmp = sys.argv[1]
x = np.random.default_rng(0).standard_normal((4, 1, 32, 32)).astype(np.float32)
np.save(f"{tmp}/good.npy", x)
np.save(f"{tmp}/int8.npy", x.astype(np.int8))
np.save(f"{tmp}/float64.npy", x.astype(np.float64))
np.save(f"{tmp}/fortran.npy", np.asfortranarray(x))
np.save(f"{tmp}/shape.npy", np.zeros((4, 3, 32, 32), np.float32))
np.save(f"{tmp}/flat.npy", np.zeros((4, 1024), np.float32))
data = open(f"{tmp}/good.npy", "rb").read()
open(f"{tmp}/truncated.npy", "wb").write(data[:-100])
open(f"{tmp}/header.npy", "wb").write(data[:40])
bad = data.replace(b"(4, 1, 32, 32)", b"(4, 1, 32, -1)")
open(f"{tmp}/negative.npy", "wb").write(bad)
PY
npy_error() { # npy_error FILE PATTERN
    expect_line 1 "'$tmp/$1.npy'.*$2" -- run "$model" --input "$tmp/$1.npy"
    expect 1 "'$tmp/$1.npy'.*$2" -- quantize "$model" --calib-npy "$tmp/$1.npy" --out "$tmp/q.onnx"
}
expect 0 '' -- run "$model" --input "$tmp/good.npy"
npy_error int8 'holds int8 data, the input takes float$'
npy_error float64 'holds double data, the input takes float$'
npy_error fortran 'Fortran-order'
npy_error shape 'has shape \[4,3,32,32\], the input is'
npy_error flat 'has shape \[4,1024\], the input is'
npy_error truncated 'truncated file'
npy_error header 'truncated .npy header'
npy_error negative 'malformed .npy header'
expect 1 "'$tmp/int8.npy'" -- evaluate "$model" --calib-npy "$tmp/int8.npy" --labels-npy "$tmp/int8.npy"
expect 1 "'$tmp/float64.npy'.*int64 label" -- evaluate "$model" --calib-npy "$tmp/good.npy" --labels-npy "$tmp/float64.npy"

# --- HW configs: an unknown built-in name or alias, a broken file.
expect_line 1 "unknown HW config 'tpu'" -- quantize "$model" --hw tpu
printf '{"operations": [{"type": "Convolution", "quantization": {"activations": "q9"}}]}' >"$tmp/alias.json"
expect_line 1 "HW config '$tmp/alias.json'.*unknown alias 'q9'" -- quantize "$model" --hw "$tmp/alias.json"
printf '{"operations": [], "operations": []}' >"$tmp/twice.json"
expect_line 1 "HW config '$tmp/twice.json'.*operations: key given twice" -- quantize "$model" --hw "$tmp/twice.json"
printf '{"config": {"quantization": {"q": {"bits": 1e30}}}, "operations": [{"type": "Convolution", "quantization": {"activations": "q"}}]}' >"$tmp/bits.json"
expect_line 1 "config\.quantization\.q\.bits.*1\.\.32" -- quantize "$model" --hw "$tmp/bits.json"
expect_line 1 "--hw: file '$tmp/missing.json': no such file" -- prune "$model" --hw "$tmp/missing.json" --target-memory 50% --simd 1 --importance l2 --out "$tmp/x.onnx"

# --- sessions: broken .qscope files are bad input.
"$cli" quantize "$model" --session "$tmp/s.qscope" >/dev/null || fail "cannot write a session"
/usr/bin/python3 - "$tmp" <<'PY' || fail "cannot write the broken sessions"
import json, sys
tmp = sys.argv[1]
s = json.load(open(f"{tmp}/s.qscope"))
def broken(name, edit):
    t = json.loads(json.dumps(s)); edit(t)
    json.dump(t, open(f"{tmp}/{name}.qscope", "w"))
q = lambda t: t["sections"]["quantization"]
first = next(iter(s["sections"]["quantization"]["choices"]))
broken("bits", lambda t: q(t)["choices"][first]["qconfig"].update(num_bits=1e30))
broken("preset", lambda t: q(t).update(preset="fastest"))
broken("zoom", lambda t: t.update(view={"zoom": "big", "center_x": 0, "center_y": 0}))
broken("version", lambda t: t.update(quantscope_session=99))
broken("port", lambda t: q(t)["choices"][first]["qip"].update(input_port_id=-4))
PY
session_error() { # session_error FILE PATTERN
    cp "$tmp/$1.qscope" "$tmp/work.qscope"
    expect_line 1 "session '$tmp/work.qscope': $2" -- quantize "$model" --session "$tmp/work.qscope"
}
session_error bits 'sections\.quantization\.choices\[[0-9]+\]\.qconfig\.num_bits: expected an integer'
session_error preset "sections\.quantization\.preset: unknown preset 'fastest'"
session_error zoom 'view\.zoom: expected a number, got a string'
session_error version 'quantscope_session: session format version 99 is not supported'
session_error port 'sections\.quantization\.choices\[[0-9]+\]\.qip\.input_port_id: -4 is out of range'

[ "$failures" -eq 0 ] && echo "cli exit codes: all checks passed"
exit $((failures > 0))
