#!/usr/bin/env bash
# `quantscope-cli prune` end to end on the demo model: the per-section table and totals,
# PRUNING.json (masks, scores, target met), the pruned model re-imported and run, --scores-in
# from `hessian`, --lock / --keep, errors for a bad target, an unreachable one (naming the
# minimum), a wrong --keep and an unknown node (usage errors, exit 2); then the pruned model goes through `quantize`.
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

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "prune CLI ok"
