#!/usr/bin/env bash
# Image folders in ImageNet's layout (DIR/<class>/*.png, classes in sorted order) give the labels:
# three class folders of PNGs cut from the demo model's held-out digits (classes 0, 1, 2); evaluate
# and quantize with --calib-images DIR report accuracy over every image, --labels-from-folders says
# it explicitly, and a labels file on top of the folders is refused.
set -uo pipefail
cli=$1 models=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"
model=$models/digits_cnn.onnx
/usr/bin/python3 - "$models" "$tmp/digits" <<'PY' || { echo "SKIP: cannot write PNGs (PIL)"; exit 77; }
import os, sys
import numpy as np
from PIL import Image
x = np.load(os.path.join(sys.argv[1], "digits_test_inputs.npy"))
y = np.load(os.path.join(sys.argv[1], "digits_test_labels.npy"))
for c in range(3):
    os.makedirs(os.path.join(sys.argv[2], str(c)))
    for i in np.flatnonzero(y == c)[:4]:
        v = x[i, 0]
        v = (255 * (v - v.min()) / max(float(v.max() - v.min()), 1e-6)).astype(np.uint8)
        Image.fromarray(v).save(os.path.join(sys.argv[2], str(c), f"{i}.png"))
PY
dir=$tmp/digits
expect 0 'digits_cnn.onnx +[0-9.]+% \([0-9]+/12\)' -- evaluate "$model" --calib-images "$dir"
expect 0 'digits_cnn.onnx +[0-9.]+% \([0-9]+/12\)' -- \
    evaluate "$model" --calib-images "$dir" --labels-from-folders
expect 0 'Top-1 accuracy: float [0-9.]+ %, quantized [0-9.]+ % \([-+][0-9.]+ points; 12 labelled' -- \
    quantize "$model" --calib-images "$dir"
/usr/bin/python3 -c "import numpy as np; np.save('$tmp/y.npy', np.zeros(12, np.int64))"
expect 2 'both give labels' -- evaluate "$model" --calib-images "$dir" --labels-npy "$tmp/y.npy"
expect 1 'has no class subfolders' -- \
    evaluate "$model" --calib-images "$dir/0" --labels-from-folders
expect 2 'requires --calib-images|--calib-images is required' -- \
    evaluate "$model" --calib-npy "$models/digits_test_inputs.npy" --labels-from-folders
[ "$failures" -eq 0 ] && echo "class folders: ok"
exit $((failures > 0))
