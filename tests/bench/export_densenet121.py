#!/usr/bin/env python3
"""Export torchvision DenseNet-121 (random seeded weights) to ONNX, as make_zoo.py exports its
models: the layout benchmark's worst case (622 nodes, Concats with many long edges). The zoo
script lives outside this repository; this adds the one model it lacks.

usage: export_densenet121.py OUT_DIR      (writes OUT_DIR/densenet121.onnx; needs Debian's
                                            python3-torch, python3-torchvision, python3-onnx)
"""
import os
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.densenet121().eval()
    path = os.path.join(sys.argv[1], "densenet121.onnx")
    torch.onnx.export(model, torch.randn(1, 3, 224, 224), path, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
