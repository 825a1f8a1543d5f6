#!/usr/bin/env bash
# `quantscope-cli prune` end to end on the demo model: the per-section table and totals,
# PRUNING.json (masks, scores, target met), the pruned model re-imported and run, --scores-in
# from `hessian`, --lock / --keep, errors for a bad target, an unreachable one (naming the
# minimum), a wrong --keep and an unknown node (usage errors, exit 2); then the pruned model goes
# through `quantize`, and `prune --session` makes a session work on the pruned model: `quantize`,
# `compress-weights`, `hawq` and `report` with that --session continue on it from the dense file.
set -uo pipefail
cli=$1 model=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/expect.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

expect 0 "pruning sections; importance lfh, SIMD 4" -- prune "$model" --target-memory 85% \
    --simd 4 --samples 4 --iterations 20 --no-early-stop --calib-random 4 --out "$tmp/p.onnx" \
    --report "$tmp/p.json"
/usr/bin/python3 - "$tmp/p.json" <<'PY' || fail "PRUNING.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["importance"] == "lfh" and r["simd"] == 4, r
assert r["pruned_bytes"] <= r["target_bytes"] < r["dense_bytes"], r
assert r["sections"], "no sections"
for s in r["sections"]:
    assert len(s["mask"]) == s["channels"] == len(s["scores"]), s["entry"]
    assert sum(s["mask"]) == s["kept"] >= 4, s["entry"]
    kept = [x for x, m in zip(s["scores"], s["mask"]) if m]
    pruned = [x for x, m in zip(s["scores"], s["mask"]) if not m]
    assert not pruned or max(pruned) <= min(kept), s["entry"]
assert all(n["reason"] for n in r["not_prunable"])
PY
expect 0 "Nodes" -- info "$tmp/p.onnx"
expect 0 "" -- run "$tmp/p.onnx" --random 2

# Scores computed by `hessian` and read back give the same masks.
expect 0 "" -- hessian "$model" --mode weights --granularity per-channel --samples 4 \
    --iterations 20 --calib-random 4 --out "$tmp/scores.json"
expect 0 "" -- prune "$model" --target-memory 85% --simd 4 --scores-in "$tmp/scores.json" \
    --out "$tmp/q.onnx" --report "$tmp/q.json"
/usr/bin/python3 - "$tmp/p.json" "$tmp/q.json" <<'PY' || fail "--scores-in masks differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert [s["mask"] for s in a["sections"]] == [s["mask"] for s in b["sections"]]
PY

entry=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['sections'][0]['entry'])" "$tmp/p.json")
expect 0 "\(locked\)" -- prune "$model" --target-memory 95% --importance l2 --simd 1 \
    --lock "$entry" --out "$tmp/l.onnx"
expect 0 "\(fixed\)" -- prune "$model" --target-memory 95% --importance random --simd 1 \
    --keep "$entry=3" --out "$tmp/k.onnx"

expect 2 "expects a percentage" -- prune "$model" --target-memory 50kb --importance l2 --out "$tmp/x.onnx"
expect 2 "below the minimum of [0-9]+ bytes" -- prune "$model" --target-memory 100 \
    --importance l2 --out "$tmp/x.onnx"
expect 2 "is not the entry node of a pruning section" -- prune "$model" --target-memory 50% \
    --importance l2 --lock no_such_node --out "$tmp/x.onnx"
expect 2 "--keep expects NODE=CHANNELS" -- prune "$model" --target-memory 50% --importance l2 \
    --keep "$entry" --out "$tmp/x.onnx"
expect 2 "needs a dataset" -- prune "$model" --target-memory 50% --out "$tmp/x.onnx"
[ -e "$tmp/x.onnx" ] && fail "a failed prune wrote its output"

# Quantize after prune: the pruned model is a model like any other.
expect 0 "" -- quantize "$tmp/p.onnx" --hw cpu --calib-random 4 --out "$tmp/p.qdq.onnx"
expect 0 "QuantizeLinear" -- info "$tmp/p.qdq.onnx"

# One pipeline, one session: prune --session, then quantize the dense file through the session.
expect 0 "" -- quantize "$model" --hw npu --session "$tmp/s.qscope"
/usr/bin/python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['sections']['quantization']['choices']" \
    "$tmp/s.qscope" || fail "the dense session has no choices"
expect 0 "Session: .*works on the pruned model" -- prune "$model" --target-memory 85% \
    --importance l2 --simd 4 --out "$tmp/s.onnx" --report "$tmp/s.json" --session "$tmp/s.qscope"
/usr/bin/python3 - "$tmp/s.qscope" <<'PY' || fail "the pruned session"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["sections"]["pruning"]["applied"] is True, s["sections"]["pruning"]
assert s["sections"]["quantization"]["hw_config"] == "npu", s["sections"]["quantization"]
assert not s["sections"]["quantization"].get("choices"), "dense choices kept"
PY
expect 0 "Session: " -- quantize "$model" --session "$tmp/s.qscope" --calib-random 4 \
    --out "$tmp/s.qdq.onnx"
/usr/bin/python3 - "$tmp/s.json" "$tmp/s.onnx" "$tmp/s.qdq.onnx" <<'PY' || fail "QDQ of the pruned session"
import json, sys
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import onnx
report = json.load(open(sys.argv[1]))
pruned, qdq = (onnx.load(p) for p in sys.argv[2:])
def out_channels(m, name):
    """The entry's weight rows, through the weight DequantizeLinear in a QDQ model."""
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    producers = {o: n for n in m.graph.node for o in n.output}
    weight = next(n for n in m.graph.node if n.name == name).input[1]
    while weight not in inits:
        weight = producers[weight].input[0]
    return inits[weight][0]
for s in report["sections"]:
    assert out_channels(pruned, s["entry"]) == s["kept"], s["entry"]
    assert out_channels(qdq, s["entry"]) == s["kept"], s["entry"]
assert any(s["kept"] < s["channels"] for s in report["sections"]), "nothing pruned"
assert any(n.op_type == "QuantizeLinear" for n in qdq.graph.node)
PY
expect 0 "" -- run "$tmp/s.qdq.onnx" --random 2
expect 0 "Session: " -- compress-weights "$model" --mode int8_asym --session "$tmp/s.qscope" \
    --out "$tmp/s.int8.onnx"
expect 0 "" -- run "$tmp/s.int8.onnx" --random 2
expect 0 "Session: " -- hawq "$model" --hw npu --compression-ratio 1.2 --samples 2 \
    --iterations 5 --calib-random 2 --setup-out "$tmp/s.hawq.json" --session "$tmp/s.qscope"
/usr/bin/python3 - "$tmp/s.json" "$tmp/s.int8.onnx" "$tmp/s.qscope" <<'PY' || fail "int8 / HAWQ of the pruned session"
import json, sys
sys.path.insert(0, "/usr/lib/python3/dist-packages")
import onnx
report = json.load(open(sys.argv[1]))
m = onnx.load(sys.argv[2])
inits = {i.name: list(i.dims) for i in m.graph.initializer}
producers = {o: n for n in m.graph.node for o in n.output}
for s in report["sections"]:
    weight = next(n for n in m.graph.node if n.name == s["entry"]).input[1]
    while weight not in inits:
        weight = producers[weight].input[0]
    assert inits[weight][0] == s["kept"], (s["entry"], inits[weight])
session = json.load(open(sys.argv[3]))
assert session["sections"]["pruning"]["applied"] is True
assert "hawq" in session["sections"], session["sections"].keys()
PY
expect 0 "" -- hessian "$model" --mode weights --granularity per-tensor --samples 2 \
    --iterations 5 --calib-random 2 --out "$tmp/dense_traces.json"
expect 2 "works on its pruned model" -- hawq "$model" --hw npu --compression-ratio 1.2 \
    --traces-in "$tmp/dense_traces.json" --setup-out "$tmp/x.json" --session "$tmp/s.qscope"
if "$cli" --help | grep -qE "^  report +"; then # report and diff need the Qt build (not ASan's)
    expect 0 "pruning" -- report --session "$tmp/s.qscope" --out "$tmp/s.html"
    expect 1 "works on its pruned model" -- diff "$tmp/s.qscope" "$tmp/s.qscope" \
        --out "$tmp/d.html"
fi
# A session saved for another model is refused before any work, and left as it was.
cp "$tmp/s.qscope" "$tmp/s.before"
expect 1 "session" -- prune "$tmp/p.onnx" --target-memory 90% --importance l2 \
    --out "$tmp/y.onnx" --session "$tmp/s.qscope"
cmp -s "$tmp/s.qscope" "$tmp/s.before" || fail "a refused prune --session changed the session"
[ -e "$tmp/y.onnx" ] && fail "a refused prune --session wrote its output"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "prune CLI ok"
