#!/usr/bin/env bash
# quantscope-cli quantize with calibration on the demo model: random, .npy and image datasets,
# --setup-out / --setup-in round trip, the --report and --encodings-out JSON, output cosine
# similarity float vs 8-bit, the QDQ model (--out), and one-line errors with the usage exit code.
set -uo pipefail
cli=$1 demo=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

expect 0 'calib-random' -- quantize --help
expect 0 'range-estimator' -- quantize --help
expect 2 'need a calibration dataset' -- quantize "$demo" --report "$tmp/r.json"
expect 2 'excludes' -- quantize "$demo" --calib-random 4 --calib-images "$tmp"
expect 2 'one --calib-npy per input' -- quantize "$demo" --calib-npy a.npy --calib-npy b.npy
expect 2 "unknown range estimator|not in" -- quantize "$demo" --calib-random 4 --range-estimator best
expect 1 "--setup-in: file '$tmp/missing.json': no such file" -- quantize "$demo" --setup-in "$tmp/missing.json" --calib-random 2
expect 2 'expects shape|batch' -- quantize "$demo" --calib-random 4 --calib-batch 0

# Random data, propagation setup saved for the round trip.
expect 0 "Output 'logits': cosine similarity 0\.99[0-9]+" \
    -- quantize "$demo" --hw cpu --preset performance --calib-random 16 --setup-out "$tmp/setup.json" \
       --report "$tmp/report.json" --encodings-out "$tmp/enc.json"
# The same setup from the file gives the same parameters: the same quantizers and configs, and
# ranges equal up to float rounding (batches of 4 instead of 16 add the kernels' partial sums in
# another order, which can move a range by an ulp).
expect 0 'Calibrated 29 quantizers on 16 samples' \
    -- quantize "$demo" --setup-in "$tmp/setup.json" --calib-random 16 --calib-batch 4 --encodings-out "$tmp/enc_in.json"
python3 - "$tmp/enc.json" "$tmp/enc_in.json" <<'PY' || fail "--setup-in (batch 4) changed the parameters"
import json, sys
def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-6 * max(abs(a), abs(b), 1e-30)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return a == b
sys.exit(0 if same(json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))) else 1)
PY
# The QDQ model: checker-clean, original I/O names, one Q/DQ pair per activation quantizer.
expect 0 'QDQ model: .*17 activation Q/DQ pairs, 12 weight DequantizeLinear.*onnx::checker: passed' \
    -- quantize "$demo" --setup-in "$tmp/setup.json" --calib-random 4 --out "$tmp/demo.qdq.onnx"
expect 0 'QuantizeLinear +17' -- info "$tmp/demo.qdq.onnx"
expect 0 'logits +float' -- info "$tmp/demo.qdq.onnx"
expect 0 'output 0: \[2,10\]' -- run "$tmp/demo.qdq.onnx" --random 2
expect 2 'need a calibration dataset' -- quantize "$demo" --out "$tmp/x.onnx"
expect 2 'need propagation' -- quantize "$demo" --setup-in "$tmp/setup.json" --set x=4 --calib-random 2

# .npy samples (written without numpy: a 1.0 header and float32 data) and a percentile run.
python3 - "$tmp/in.npy" <<'PY' || fail "cannot write the .npy input"
import math, struct, sys
n, shape = 5, (5, 3, 96, 96)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (shape,)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
count = 5 * 3 * 96 * 96
data = struct.pack("<%df" % count, *(math.sin(i * 0.37) for i in range(count)))
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
PY
expect 0 'Calibrated 29 quantizers on 3 samples' \
    -- quantize "$demo" --calib-npy "$tmp/in.npy" --calib-samples 3 --range-estimator percentile

# A folder of images (24-bit BMPs written without libraries), resized to the 96x96 input.
mkdir -p "$tmp/images"
python3 - "$tmp/images" <<'PY' || fail "cannot write the BMP images"
import struct, sys
w = h = 8
for k in range(4):
    # 24 bytes per row: already a multiple of 4, no padding.
    pixels = b"".join(bytes(((x * 31 + k * 50) % 256, (y * 29) % 256, (x * y + k) % 256))
                      for y in range(h) for x in range(w))
    header = b"BM" + struct.pack("<IHHI", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    open("%s/img%d.bmp" % (sys.argv[1], k), "wb").write(header + info + pixels)
PY
expect 0 'Calibrated 29 quantizers on 3 samples' \
    -- quantize "$demo" --calib-images "$tmp/images" --calib-samples 3 --range-estimator minmax

python3 - "$tmp/report.json" "$tmp/enc.json" <<'PY' || fail "the --report / --encodings-out JSON is not as expected"
import json, sys
report = json.load(open(sys.argv[1]))
enc = json.load(open(sys.argv[2]))
assert report["calibration"]["samples"] == 16 and report["calibration"]["range_estimator"] == "nncf"
assert "Num bits (N)" in report["bitwidth_table"]
out = report["simulation"]["outputs"][0]
assert out["name"] == "logits" and out["cosine_similarity"] >= 0.99 and out["top1_agreement"] is not None
quantizers = report["quantizers"]
assert len(quantizers) == 29 and set(quantizers) == set(enc["quantizers"])
weights = [q for q in quantizers.values() if q["is_weight"]]
assert weights and all(q["channel_axis"] == 0 and len(q["scale"]) > 1 for q in weights)
for q in quantizers.values():
    assert q["sqnr_db"] is None or q["sqnr_db"] > 10, q
    assert q["levels"] == q["quant_max"] - q["quant_min"] + 1
    assert all(s > 0 for s in q["scale"])
    assert all(q["quant_min"] <= z <= q["quant_max"] for z in q["zero_point"])
PY

# Class folders: labels from the sorted class names; --labels-npy with a wrong count is refused.
mkdir -p "$tmp/classes/b_dog" "$tmp/classes/a_cat"
cp "$tmp/images/img0.bmp" "$tmp/images/img1.bmp" "$tmp/classes/a_cat/"
cp "$tmp/images/img2.bmp" "$tmp/classes/b_dog/"
expect 0 'Calibrated 29 quantizers on 3 samples' -- quantize "$demo" --calib-classes "$tmp/classes" --calib-batch 2
python3 -c "
import struct
header = \"{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\"
header += ' ' * (63 - (10 + len(header)) % 64) + '\\n'
open('$tmp/labels.npy', 'wb').write(b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(header)) + header.encode() + struct.pack('<2q', 0, 1))
" || fail "cannot write the labels"
expect 1 "--labels-npy '$tmp/labels.npy' holds 2 label\(s\) for 3 sample\(s\)" -- quantize "$demo" --calib-images "$tmp/images" --calib-samples 3 --labels-npy "$tmp/labels.npy"

# --session: a new file gets the propagation settings and the calibration summary; a second run
# restores the settings from it (no --hw) and keeps the sections it does not rewrite.
expect 0 "Session: $tmp/demo.qscope" -- quantize "$demo" --hw npu --set /block1/pw/Conv=4 --calib-random 4 --session "$tmp/demo.qscope"
python3 - "$tmp/demo.qscope" <<'PY' || fail "the --session file is not as expected"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["quantscope_session"] == 2, s
q = s["sections"]["quantization"]
assert q["hw_config"] == "npu" and any(c["qconfig"]["num_bits"] == 4 for c in q["choices"].values()), q
assert s["sections"]["calibration"]["samples"] == 4, s["sections"]
PY
expect 0 "Session: $tmp/demo.qscope" -- quantize "$demo" --session "$tmp/demo.qscope" --setup-out "$tmp/session_setup.json"
grep -q '"num_bits": 4' "$tmp/session_setup.json" || fail "--session did not restore the 4-bit choice"
python3 -c "import json; s = json.load(open('$tmp/demo.qscope')); assert s['sections']['quantization']['hw_config'] == 'npu' and 'calibration' in s['sections'], s" ||
    fail "a run without calibration dropped the session's sections"
expect 2 'does not combine with --ignore' -- quantize "$demo" --session "$tmp/demo.qscope" --ignore stem

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "calibrate CLI: all checks passed"
