#!/usr/bin/env python3
"""Data-aware sensitivity of `compress-weights` against numpy.

Writes the tiny LLM, feeds it 24 token sequences as a .npy dataset, and checks for each
data-aware metric that the report's activation statistic of mlp.up and mlp.down equals the same
reduction done in numpy on the layer inputs (embedding rows; ReLU of the up projection), and that
the sensitivity is the data-free one times that statistic.

Usage: activation_reference.py QUANTSCOPE_CLI WRITE_TINY_LLM. Exits 77 without numpy or onnx.
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    sys.exit(77)

REDUCTIONS = {
    "mean_activation_variance": lambda x: np.mean(np.var(x, axis=-2), axis=-1),
    "max_activation_variance": lambda x: np.max(np.var(x, axis=-2), axis=-1),
    "mean_activation_magnitude": lambda x: np.mean(np.max(np.abs(x), axis=-2), axis=-1),
}


def report(cli, model, out, *args):
    path = os.path.join(out, "report.json")
    subprocess.run([cli, "compress-weights", model, "--mode", "int4_asym", "--ratio", "0.6",
                    "--out", os.path.join(out, "out.onnx"), "--report", path, *args],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path) as handle:
        return {w["weight"]: w for w in json.load(handle)["weights"]}


def main():
    cli, writer = sys.argv[1], sys.argv[2]
    failures = 0
    with tempfile.TemporaryDirectory() as out:
        model = os.path.join(out, "llm.onnx")
        subprocess.run([writer, model], check=True)
        weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(model).graph.initializer}
        ids = np.random.default_rng(3).integers(0, 64, size=(24, 8), dtype=np.int64)
        ids_path = os.path.join(out, "ids.npy")
        np.save(ids_path, ids)
        # One sample is one [1, 8] sequence: per-sample statistics, averaged over the 24.
        x = weights["embed.weight"][ids]
        inputs = {"mlp.up.weight": x,
                  "mlp.down.weight": np.maximum(x @ weights["mlp.up.weight"], 0)}
        free = report(cli, model, out)
        for metric, reduce in REDUCTIONS.items():
            aware = report(cli, model, out, "--calib-npy", ids_path,
                           "--sensitivity-metric", metric)
            for name, activation in inputs.items():
                want = float(np.mean(reduce(activation.astype(np.float64))))
                got = aware[name]["activation_statistic"]
                sensitivity = free[name]["sensitivity"] * want
                ok = abs(got - want) <= 1e-5 * abs(want) and \
                    abs(aware[name]["sensitivity"] - sensitivity) <= 1e-5 * sensitivity
                print(f"{metric:26} {name:16} ours {got:.9g} numpy {want:.9g} "
                      f"{'ok' if ok else 'MISMATCH'}")
                failures += 0 if ok else 1
    if failures:
        print(f"{failures} mismatch(es)")
        return 1
    print("activation statistics agree with numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
