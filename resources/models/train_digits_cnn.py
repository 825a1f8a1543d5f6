#!/usr/bin/python3
"""Train the bundled demo model, digits_cnn.onnx, on scikit-learn's handwritten digits.

The topology is the one make_demo_model.cpp builds (stem conv, MaxPool, depthwise-separable blocks
with residual Adds, a two-branch Concat, a squeeze-excitation gate, GlobalAveragePool, Gemm head),
with one input channel at 32 x 32. BatchNormalization stays in the export so that folding and
quantization see it. The digits (1,797 labelled 8 x 8 images, shipped inside Debian's
python3-sklearn: nothing is downloaded) are upscaled bilinearly to 32 x 32 with half-pixel centres,
scaled to [0, 1] and normalised with the tool's default image statistics for channel 0
((v - 0.485) / 0.229), so a folder of PNG digits reads the same with default flags.

Needs Debian's python3-torch, python3-sklearn and python3-onnx (the packages tagged @zoo in
packaging/debian-packages.txt; the product and CI only use the committed outputs). Seeded and run
on one thread with deterministic kernels, so a rerun with the same torch writes the same weights.

usage: /usr/bin/python3 resources/models/train_digits_cnn.py [OUT_DIR]   (default: this folder)

Writes to OUT_DIR:
  digits_cnn.onnx                 the trained model (opset 13, input [batch, 1, 32, 32], logits [batch, 10])
  digits_test_inputs.npy          the held-out split, float32 [N, 1, 32, 32]
  digits_test_labels.npy          its class ids, int64 [N]
  digits_calib_inputs.npy         a calibration set drawn from the training split, float32 [64, 1, 32, 32]
  digits_cnn.accuracy.json        float top-1 on the held-out split, per-class counts, training time
"""
import json
import os
import sys
import time

SEED = 20261201
TEST_FRACTION = 0.2
CALIB_SAMPLES = 64
EPOCHS = 40
BATCH = 32
LEARNING_RATE = 3e-3
WEIGHT_DECAY = 1e-4
SIDE = 32
MEAN = 0.485  # the tool's default image normalisation, channel 0
STD = 0.229


def build_model():
    import torch
    from torch import nn

    def conv_bn(cin, cout, k, stride=1, groups=1, act=None):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if act is not None:
            layers.append(act())
        return nn.Sequential(*layers)

    class Residual(nn.Module):
        """Depthwise 3x3 + pointwise 1x1, added to the input."""

        def __init__(self, channels, act):
            super().__init__()
            self.dw = conv_bn(channels, channels, 3, groups=channels, act=act)
            self.pw = conv_bn(channels, channels, 1)

        def forward(self, x):
            return x + self.pw(self.dw(x))

    class Expand(nn.Module):
        """Pointwise expansion, strided depthwise, pointwise projection."""

        def __init__(self, cin, cout):
            super().__init__()
            self.expand = conv_bn(cin, cout, 1, act=nn.ReLU)
            self.dw = conv_bn(cout, cout, 3, stride=2, groups=cout, act=nn.ReLU)
            self.project = conv_bn(cout, cout, 1)

        def forward(self, x):
            return self.project(self.dw(self.expand(x)))

    class TwoBranch(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.branch1x1 = nn.Sequential(nn.Conv2d(channels, channels // 2, 1), nn.ReLU())
            self.branch3x3 = nn.Sequential(nn.Conv2d(channels, channels // 2, 3, padding=1), nn.ReLU())

        def forward(self, x):
            return torch.cat([self.branch1x1(x), self.branch3x3(x)], dim=1)

    class SqueezeExcite(nn.Module):
        def __init__(self, channels, reduced):
            super().__init__()
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(channels, reduced, 1)
            self.fc2 = nn.Conv2d(reduced, channels, 1)

        def forward(self, x):
            return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(self.pool(x)))))

    class DigitsCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(1, 16, 3, stride=2, act=nn.ReLU)
            self.stem_pool = nn.MaxPool2d(2, 2)
            self.block1 = Residual(16, nn.ReLU6)
            self.block2 = Expand(16, 32)
            self.block3 = Residual(32, nn.Hardswish)
            self.mix = TwoBranch(32)
            self.se = SqueezeExcite(32, 8)
            self.head = conv_bn(32, 64, 1, act=nn.ReLU)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            x = self.stem_pool(self.stem(x))
            x = self.block3(self.block2(self.block1(x)))
            x = self.head(self.se(self.mix(x)))
            return self.fc(torch.flatten(self.pool(x), 1))

    return DigitsCnn()


def load_split():
    """The digits as normalised [N, 1, 32, 32] float32, split stratified into train and test."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    images = torch.from_numpy(digits.images.astype(np.float32) / 16.0).unsqueeze(1)
    images = F.interpolate(images, size=(SIDE, SIDE), mode="bilinear", align_corners=False)
    images = ((images - MEAN) / STD).numpy().astype(np.float32)
    labels = digits.target.astype(np.int64)
    return train_test_split(images, labels, test_size=TEST_FRACTION, stratify=labels,
                            random_state=SEED % (2 ** 32))


def shifted(batch, generator):
    """Random shifts of up to 2 pixels (zero-filled with the background value): digits are centred
    in the dataset, and a slightly shifted sample keeps the model from memorising positions."""
    import torch
    background = (0.0 - MEAN) / STD
    out = torch.full_like(batch, background)
    dy, dx = torch.randint(-2, 3, (2,), generator=generator).tolist()
    src_y = slice(max(0, -dy), SIDE - max(0, dy))
    dst_y = slice(max(0, dy), SIDE - max(0, -dy))
    src_x = slice(max(0, -dx), SIDE - max(0, dx))
    dst_x = slice(max(0, dx), SIDE - max(0, -dx))
    out[:, :, dst_y, dst_x] = batch[:, :, src_y, src_x]
    return out


def train(model, x_train, y_train):
    import torch
    from torch import nn

    generator = torch.Generator().manual_seed(SEED)
    inputs = torch.from_numpy(x_train)
    targets = torch.from_numpy(y_train)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=WEIGHT_DECAY)
    steps = EPOCHS * ((len(inputs) + BATCH - 1) // BATCH)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, LEARNING_RATE, total_steps=steps)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(EPOCHS):
        order = torch.randperm(len(inputs), generator=generator)
        total = 0.0
        for start in range(0, len(inputs), BATCH):
            index = order[start:start + BATCH]
            batch = shifted(inputs[index], generator)
            optimizer.zero_grad()
            loss = loss_fn(model(batch), targets[index])
            loss.backward()
            optimizer.step()
            schedule.step()
            total += loss.item() * len(index)
        if epoch % 10 == 9 or epoch == EPOCHS - 1:
            print(f"epoch {epoch + 1}/{EPOCHS}: loss {total / len(inputs):.4f}", flush=True)
    model.eval()


def export(model, path):
    import torch
    example = torch.zeros(1, 1, SIDE, SIDE)
    # PRESERVE with the model in eval mode keeps BatchNormalization as its own (inference) node:
    # the EVAL mode's peephole would fold it into the convolutions. Nothing here needs folding.
    torch.onnx.export(model, example, path, opset_version=13, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
    import onnx
    proto = onnx.load(path)
    proto.graph.name = "digits_cnn"
    proto.doc_string = ("Quantscope demo CNN trained on scikit-learn's digits (32x32, 1 channel, "
                        "normalised (v - 0.485) / 0.229); see train_digits_cnn.py")
    onnx.checker.check_model(proto)
    kinds = {node.op_type for node in proto.graph.node}
    assert "BatchNormalization" in kinds, "BatchNormalization was folded by the exporter"
    onnx.save(proto, path)


def main():
    import numpy as np
    import torch

    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x_train, x_test, y_train, y_test = load_split()
    model = build_model()
    started = time.monotonic()
    train(model, x_train, y_train)
    seconds = time.monotonic() - started
    with torch.no_grad():
        logits = model(torch.from_numpy(x_test))
    predicted = logits.argmax(dim=1).numpy()
    correct = int((predicted == y_test).sum())
    calib = x_train[np.random.default_rng(SEED).permutation(len(x_train))[:CALIB_SAMPLES]]

    export(model, os.path.join(out_dir, "digits_cnn.onnx"))
    np.save(os.path.join(out_dir, "digits_test_inputs.npy"), np.ascontiguousarray(x_test))
    np.save(os.path.join(out_dir, "digits_test_labels.npy"), y_test)
    np.save(os.path.join(out_dir, "digits_calib_inputs.npy"), np.ascontiguousarray(calib))
    per_class = {str(c): {"samples": int((y_test == c).sum()),
                          "correct": int(((predicted == c) & (y_test == c)).sum())} for c in range(10)}
    record = {
        "model": "digits_cnn.onnx",
        "inputs": "digits_test_inputs.npy",
        "labels": "digits_test_labels.npy",
        "samples": int(len(y_test)),
        "correct": correct,
        "top1": correct / len(y_test),
        "per_class": per_class,
        "train_samples": int(len(y_train)),
        "epochs": EPOCHS,
        "seed": SEED,
        "train_seconds": round(seconds, 1),
        "torch": torch.__version__,
    }
    with open(os.path.join(out_dir, "digits_cnn.accuracy.json"), "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    print(f"float top-1 {correct}/{len(y_test)} = {100.0 * correct / len(y_test):.2f}% "
          f"(trained in {seconds:.1f} s)")


if __name__ == "__main__":
    main()
