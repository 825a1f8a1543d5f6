#!/usr/bin/env bash
# quantscope-cli hessian on the demo model: SCORES.json in the documented shape (per-tensor,
# per-channel that adds up, weights mode, per-element .npy files), shards that merge into the
# full run, and clear errors: bad flags exit 2, a bad model exits 1.
set -uo pipefail
cli=$1 demo=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
py=/usr/bin/python3

expect 0 'score' -- hessian "$demo" --mode activation --granularity per-tensor --samples 4 \
    --iterations 5 --calib-random 4 --out "$tmp/t.json"
expect 0 '' -- hessian "$demo" --mode activation --granularity per-channel --samples 4 \
    --iterations 5 --calib-random 4 --out "$tmp/c.json"
$py - "$tmp/t.json" "$tmp/c.json" <<'PY' || fail "SCORES.json is not as documented"
import json, sys
t = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert t["mode"] == "activation" and t["granularity"] == "per_tensor", t
assert t["iterations"] == 5 and t["samples"] == 4 and t["batch"] == 4, t
assert t["outputs"] and t["sample_indices"] == [0, 1, 2, 3]
assert len(t["targets"]) > 0
for a, b in zip(t["targets"], c["targets"]):
    assert a["node"] == b["node"] and a["tensor"] and a["numel"] > 0 and a["shape"]
    assert len(a["per_sample"]) == 4 and all(len(row) == 1 for row in a["per_sample"])
    assert len(b["per_sample"][0]) == a["shape"][0]
    for row_t, row_c in zip(a["per_sample"], b["per_sample"]):
        assert abs(sum(row_c) - row_t[0]) <= 1e-6 * max(1.0, row_t[0]), (a["node"], row_t, row_c)
    assert abs(a["mean"][0] - sum(r[0] for r in a["per_sample"]) / 4) <= 1e-9 * max(1, a["mean"][0])
PY
# Weights mode, per-element into .npy files.
expect 0 '' -- hessian "$demo" --mode weights --granularity per-element --samples 2 --batch 2 \
    --iterations 3 --calib-random 2 --out "$tmp/w.json" --npy-dir "$tmp/npy"
$py - "$tmp/w.json" "$tmp" <<'PY' || fail "per-element .npy files are not as documented"
import json, sys, os
import numpy as np
w = json.load(open(sys.argv[1]))
assert w["mode"] == "weights" and w["granularity"] == "per_element"
for t in w["targets"]:
    a = np.load(os.path.join(sys.argv[2], t["npy"]))
    assert list(a.shape) == [2] + t["shape"], (a.shape, t["shape"])
    assert "per_sample" not in t
PY
# Shards 0:3 and 3:5 merge into the run over 5 samples; overlapping shards are refused.
common=(--mode activation --granularity per-tensor --iterations 4 --calib-random 5)
expect 0 '' -- hessian "$demo" "${common[@]}" --samples 5 --batch 2 --out "$tmp/all.json"
expect 0 '' -- hessian "$demo" "${common[@]}" --sample-range 0:3 --out "$tmp/s1.json"
expect 0 '' -- hessian "$demo" "${common[@]}" --sample-range 3:5 --out "$tmp/s2.json"
expect 0 'merged 2 shard' -- hessian --merge "$tmp/s2.json" "$tmp/s1.json" --out "$tmp/merged.json"
$py - "$tmp/all.json" "$tmp/merged.json" <<'PY' || fail "merged shards differ from the full run"
import json, sys
a = json.load(open(sys.argv[1])); m = json.load(open(sys.argv[2]))
assert m["sample_indices"] == [0, 1, 2, 3, 4]
for x, y in zip(a["targets"], m["targets"]):
    for p, q in zip(x["per_sample"], y["per_sample"]):
        assert abs(p[0] - q[0]) <= 1e-5 * max(1e-12, abs(p[0])), (x["node"], p, q)
PY
expect 1 'overlap' -- hessian --merge "$tmp/s1.json" "$tmp/all.json" --out "$tmp/bad.json"
# Bad flags: exit 2.
expect 2 'mode' -- hessian "$demo" --mode sideways --granularity per-tensor --samples 2 --calib-random 2 --out "$tmp/x.json"
expect 2 'needs --mode and --granularity' -- hessian "$demo" --samples 2 --calib-random 2 --out "$tmp/x.json"
expect 2 'dataset' -- hessian "$demo" --mode activation --granularity per-tensor --samples 2 --out "$tmp/x.json"
expect 2 'sample-range' -- hessian "$demo" "${common[@]}" --sample-range 3:1 --out "$tmp/x.json"
expect 2 "no node named 'nowhere'" -- hessian "$demo" "${common[@]}" --samples 2 --target nowhere --out "$tmp/x.json"
expect 1 'not enough samples: the dataset holds 5, the request needs 9' -- hessian "$demo" "${common[@]}" --samples 9 --out "$tmp/x.json"
expect 2 'required' -- hessian "$demo" "${common[@]}" --samples 2
# A bad model: exit 1.
printf 'not a model' >"$tmp/bad.onnx"
expect 1 "model '$tmp/bad.onnx'" -- hessian "$tmp/bad.onnx" "${common[@]}" --samples 2 --out "$tmp/x.json"
[ "$failures" -eq 0 ] && echo "cli hessian: all checks passed"
exit $((failures > 0))
