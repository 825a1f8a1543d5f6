#!/usr/bin/env bash
# `quantscope-cli info` on every make_zoo.py model agrees with the onnx Python package on node
# count (Constant nodes become initializers), initializer count and parameter count. Skips (77)
# when the zoo ($QS_ZOO_DIR) or python3-onnx is absent; fails without the zoo when QS_REQUIRE_ZOO=1
# (packaging/test.sh exports the zoo and sets both).
set -uo pipefail
cli=$1
zoo=${QS_ZOO_DIR:-}
py=/usr/bin/python3
if ! ls "$zoo"/*.onnx >/dev/null 2>&1; then
    [ "${QS_REQUIRE_ZOO:-}" = 1 ] && { echo "FAIL: no zoo models in '$zoo' and QS_REQUIRE_ZOO=1"; exit 1; }
    echo "no zoo models in '$zoo' (set QS_ZOO_DIR): skipped"; exit 77
fi
"$py" -c 'import onnx, numpy' 2>/dev/null || { echo "python3-onnx missing: skipped"; exit 77; }
status=0
for model in "$zoo"/*.onnx; do
    ours=$("$cli" info --json "$model") || { echo "FAIL: info $model"; status=1; continue; }
    if ! "$py" - "$model" "$ours" <<'PY'; then status=1; fi
import json, sys
import numpy as np
import onnx
from onnx import numpy_helper
model = onnx.load(sys.argv[1])
ours = json.loads(sys.argv[2])
constants = [n for n in model.graph.node if n.op_type == "Constant"]
params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
params += sum(numpy_helper.to_array(n.attribute[0].t).size for n in constants)
expected = {
    "node_count": len(model.graph.node) - len(constants),
    "initializer_count": len(model.graph.initializer) + len(constants),
    "parameter_count": params,
}
bad = {k: (ours[k], v) for k, v in expected.items() if ours[k] != v}
name = sys.argv[1].rsplit("/", 1)[-1]
print(("FAIL " if bad else "ok   ") + name, expected if not bad else bad)
sys.exit(1 if bad else 0)
PY
done
exit $status
