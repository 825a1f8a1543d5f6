#!/usr/bin/env bash
# Our packed GEMM against ONNX Runtime's (MLAS's SGEMM, through a one-MatMul model: gemm_ort.js)
# on the zoo's layer shapes (qs_gemm_bench's list), warm (IMAGES 1) or as a batch runs them (B and
# C rotating over IMAGES images), in alternating rounds; prints per shape the medians, GFLOP/s and
# ours / ONNX Runtime. (Debian's PyTorch multiplies matrices with the reference BLAS, about
# 5 GFLOP/s here, so it is no peer for a GEMM.)
#   tests/bench/gemm_bench.sh BUILD_DIR NODE_MODULES [THREADS] [IMAGES] [ROUNDS]
set -euo pipefail
build=$1 modules=$2 threads=${3:-1} images=${4:-1} rounds=${5:-3}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
"$build/tests/bench/qs_gemm_bench" "$threads" 1 >"$out/shapes"
/usr/bin/python3 - "$out" <<'PY'
import json, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
out = sys.argv[1]
for index, line in enumerate(open(f"{out}/shapes")):
    s = json.loads(line)
    a = numpy_helper.from_array(np.random.default_rng(1).standard_normal((s["m"], s["k"])).astype(np.float32), "A")
    node = helper.make_node("MatMul", ["A", "B"], ["C"])
    graph = helper.make_graph([node], "gemm", [helper.make_tensor_value_info("B", TensorProto.FLOAT, [s["k"], s["n"]])],
                              [helper.make_tensor_value_info("C", TensorProto.FLOAT, [s["m"], s["n"]])], [a])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, f"{out}/gemm_{index}.onnx")
PY
for r in $(seq "$rounds"); do
    "$build/tests/bench/qs_gemm_bench" "$threads" "$images" >"$out/ours.$r"
    NODE_PATH="$modules" node "$here/gemm_ort.js" "$out/ours.$r" "$out" "$threads" >"$out/ort.$r"
done
/usr/bin/python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(side):
    runs = [[json.loads(l) for l in open(f"{out}/{side}.{r}")] for r in range(1, rounds + 1)]
    return [(runs[0][i], statistics.median(run[i]["ms"] for run in runs)) for i in range(len(runs[0]))]
print("%-32s %-20s %8s %7s %8s %7s %6s" % ("layer", "m x k x n (B)", "ours_ms", "GFLOP/s", "ort_ms", "GFLOP/s", "ratio"))
for (shape, a), (_, b) in zip(load("ours"), load("ort")):
    flop = 2.0 * shape["m"] * shape["k"] * shape["n"]
    dims = "%dx%dx%d %s" % (shape["m"], shape["k"], shape["n"], "in" if shape["b"] == "in_place" else "pk")
    print("%-32s %-20s %8.3f %7.1f %8.3f %7.1f %6.2f" % (shape["layer"], dims, a, flop / a / 1e6, b, flop / b / 1e6, a / b))
PY
