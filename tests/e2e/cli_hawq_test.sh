#!/usr/bin/env bash
# quantscope-cli hawq on the trained digits model under the NPU config (4- and 2-bit options):
# NNCF's log line and tables, HAWQ.json in the documented shape, the Pareto CSV, the bitwidth DOT,
# traces saved and reused (--traces-out / --traces-in), the pareto search never worse than trace
# order at the same target, strict mode, NNCF's out-of-range error, and the setup exported to a
# QDQ model by `quantize --setup-in ... --out`.
set -uo pipefail
cli=$1 model=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3

common=(--hw npu --calib-random 4 --samples 4 --iterations 10)
expect 0 'Chosen HAWQ bitwidth sequence with ratio=[0-9.]+, bitwidth per weightable layer=\[' -- \
    hawq "$model" "${common[@]}" --compression-ratio 1.3 --setup-out "$tmp/setup.json" \
    --report "$tmp/hawq.json" --pareto-out "$tmp/pareto.csv" --bitwidth-dot "$tmp/graph.dot" \
    --traces-out "$tmp/traces.json"
expect 0 'Num bits \(N\) \| N-bits WQs / Placed WQs' -- \
    hawq "$model" --hw npu --traces-in "$tmp/traces.json" --compression-ratio 1.3 \
    --setup-out "$tmp/setup2.json"
cmp -s "$tmp/setup.json" "$tmp/setup2.json" || fail "--traces-in gave another setup"

"$py" - "$tmp/hawq.json" <<'PY' || fail "HAWQ.json is not as documented"
import json, sys
r = json.load(open(sys.argv[1]))
for key in ["compression_ratio_target", "mode", "search", "layers", "candidates", "chosen",
            "pareto", "merged_quantizers", "requantizers"]:
    assert key in r, key
assert r["mode"] == "liberal" and r["search"] == "trace-order"
assert len(r["layers"]) >= 2
for layer in r["layers"]:
    for key in ["node", "weight", "numel", "macs", "avg_trace", "bits_allowed", "perturbation",
                "chosen_weight_bits", "activation_bits"]:
        assert key in layer, key
    assert layer["avg_trace"] > 0 and layer["macs"] > 0
    assert str(layer["chosen_weight_bits"]) in layer["perturbation"]
chosen = r["candidates"][r["chosen"]]
assert chosen["ratio"] >= 1.3, chosen
assert [l["chosen_weight_bits"] for l in r["layers"]] == chosen["weight_bits"]
for c in r["candidates"]:
    assert len(c["weight_bits"]) == len(r["layers"])
    if c["ratio"] >= 1.3:
        assert c["metric"] >= chosen["metric"]
assert r["chosen"] in r["pareto"]
PY
head -1 "$tmp/pareto.csv" | grep -q '^index,ratio,metric,on_front,chosen,weight_bits$' ||
    fail "pareto CSV header"
[ "$(grep -c ',1,[0-9 ]*$' "$tmp/pareto.csv")" -eq 1 ] || fail "pareto CSV: not one chosen row"
grep -q 'WFQ_\[B:' "$tmp/graph.dot" || fail "bitwidth DOT lacks WFQ nodes"
grep -q 'AFQ_\[B:' "$tmp/graph.dot" || fail "bitwidth DOT lacks AFQ nodes"
grep -qE 'fillcolor=(red|green|purple)' "$tmp/graph.dot" || fail "bitwidth DOT lacks colours"

# The exact front is never worse than NNCF's trace order at the same target.
expect 0 'Pareto front' -- hawq "$model" --hw npu --traces-in "$tmp/traces.json" \
    --compression-ratio 1.3 --search pareto --setup-out "$tmp/pareto_setup.json" \
    --report "$tmp/pareto.json"
"$py" - "$tmp/hawq.json" "$tmp/pareto.json" <<'PY' || fail "pareto worse than trace order"
import json, sys
t, p = (json.load(open(f)) for f in sys.argv[1:3])
mt = t["candidates"][t["chosen"]]["metric"]
mp = p["candidates"][p["chosen"]]["metric"]
assert p["search"] == "pareto" and mp <= mt * (1 + 1e-12), (mp, mt)
assert p["candidates"][p["chosen"]]["ratio"] >= 1.3
PY

# Under the requantization rule the branches of a shared quantizer that got other bit widths split
# off: merged quantizers and a requantizer are counted.
expect 0 'merged quantizers: [1-9][0-9]*, requantizers: [1-9]' -- hawq "$model" --hw npu \
    --rule merge_with_potential_requantization --traces-in "$tmp/traces.json" \
    --compression-ratio 1.6 --search pareto --setup-out "$tmp/rq.json"
expect 0 'Chosen HAWQ' -- hawq "$model" --hw npu --traces-in "$tmp/traces.json" --mode strict \
    --compression-ratio 1.2 --setup-out "$tmp/strict.json"
expect 2 'Invalid compression ratio=9. Should be within range \[1\.000, [0-9.]+\]' -- \
    hawq "$model" --hw npu --traces-in "$tmp/traces.json" --compression-ratio 9 \
    --setup-out "$tmp/x.json"
expect 2 'needs a dataset' -- hawq "$model" --hw npu --compression-ratio 1.2 \
    --setup-out "$tmp/x.json"
expect 0 '' -- hessian "$model" --mode activation --granularity per-tensor --samples 2 \
    --calib-random 2 --iterations 2 --out "$tmp/activation.json"
expect 1 'weights-mode per-tensor' -- hawq "$model" --hw npu --compression-ratio 1.2 \
    --traces-in "$tmp/activation.json" --setup-out "$tmp/x.json"
expect 2 'none of \{3\}' -- hawq "$model" --hw npu --bits 3 --traces-in "$tmp/traces.json" \
    --compression-ratio 1.0 --setup-out "$tmp/x.json"

# --session writes the quantization section and the HAWQ section.
expect 0 'Session: ' -- hawq "$model" --hw npu --traces-in "$tmp/traces.json" \
    --compression-ratio 1.3 --setup-out "$tmp/s.json" --session "$tmp/s.qscope"
"$py" - "$tmp/s.qscope" <<'PY' || fail "session lacks the hawq section"
import json, sys
s = json.load(open(sys.argv[1]))
h = s["sections"]["hawq"]
assert h["ratio"] >= 1.3 and h["layers"] and "weight_bits" in h["layers"][0], h
# The analysis the GUI restores its Pareto explorer from, for this model.
assert h["model_hash"] == s["model"]["hash"], (h["model_hash"], s["model"])
assert h["settings"]["hw_config"] == "npu" and h["traces"]["targets"], h["settings"]
assert len(h["candidates"]) > max(h["pareto"] + h["trace_order"] + [h["chosen"]]), h["chosen"]
assert all(len(c["weight_bits"]) == len(h["layers"]) for c in h["candidates"])
assert all(l["perturbation"] and l["macs"] > 0 for l in h["layers"])
PY

# The setup exports as a QDQ model.
expect 0 'QDQ model: ' -- quantize "$model" --setup-in "$tmp/setup.json" --calib-random 8 \
    --out "$tmp/hawq.qdq.onnx"
[ -s "$tmp/hawq.qdq.onnx" ] || fail "no QDQ model written"

exit $((failures > 0))
