#!/usr/bin/env python3
"""Time per kind of node, ours against ONNX Runtime's own profiler, for one model.

A kind is the op type, with convolutions split by shape: "Conv 1x1", "Conv 3x3",
"Conv depthwise 5x5" (ONNX Runtime names its fused nodes otherwise, so nodes are matched by kind,
not by name). Our fused Conv chains carry their element-wise tails (Relu, Add, SiLU, ...); ONNX
Runtime runs some of those as nodes of their own (QuickGelu is its fused SiLU), listed apart.

usage: profile_vs_ort.py MODEL.onnx OURS_NODES.txt ORT_PROFILE.json REPEATS
  OURS_NODES.txt: the "node<TAB>name<TAB>ms" lines of QS_BENCH_PROFILE=nodes qs_runtime_bench
"""
import collections
import json
import sys

import onnx


def conv_kind(weight_shape, group):
    kh, kw = weight_shape[2], weight_shape[3]
    if group > 1 and weight_shape[1] == 1:
        return "Conv depthwise %dx%d" % (kh, kw)
    return "Conv %dx%d" % (kh, kw)


def our_kinds(model_path):
    model = onnx.load(model_path, load_external_data=False)
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    kinds = {}
    for node in model.graph.node:
        kind = node.op_type
        if node.op_type == "Conv" and len(node.input) > 1 and node.input[1] in shapes:
            group = next((a.i for a in node.attribute if a.name == "group"), 1)
            kind = conv_kind(shapes[node.input[1]], group)
        kinds[node.name] = kind
    return kinds


def ort_kind(event):
    args = event["args"]
    op = args.get("op_name", "?")
    shapes = [list(s.values())[0] for s in args.get("input_type_shape", [])]
    if op in ("Conv", "FusedConv", "NchwcConv") and len(shapes) > 1 and len(shapes[1]) == 4:
        channels = shapes[0][1] if len(shapes[0]) > 1 else 0
        group = channels if shapes[1][1] == 1 and channels > 1 else 1
        return conv_kind(shapes[1], group)
    return op


def main():
    model_path, ours_path, ort_path, repeats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    kinds = our_kinds(model_path)
    ours = collections.defaultdict(float)
    for line in open(ours_path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3 and parts[0] == "node":
            ours[kinds.get(parts[1], "?")] += float(parts[2])
    theirs = collections.defaultdict(float)
    for event in json.load(open(ort_path)):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            theirs[ort_kind(event)] += event["dur"] / 1000.0 / repeats
    rows = sorted(set(ours) | set(theirs), key=lambda k: -max(ours.get(k, 0), theirs.get(k, 0)))
    print("%-24s %9s %9s %7s" % ("kind", "ours_ms", "ort_ms", "ratio"))
    for kind in rows:
        a, b = ours.get(kind, 0.0), theirs.get(kind, 0.0)
        ratio = "%7.2f" % (a / b) if a > 0 and b > 0 else "%7s" % "-"
        print("%-24s %9.3f %9.3f %s" % (kind, a, b, ratio))
    a, b = sum(ours.values()), sum(theirs.values())
    print("%-24s %9.3f %9.3f %7.2f" % ("total", a, b, a / b if b else 0.0))


if __name__ == "__main__":
    main()
