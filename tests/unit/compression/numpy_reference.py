#!/usr/bin/python3
"""Reference implementation, in numpy, of NNCF's integer weight compression formulas
(reference/nncf-quantization.md section 5), written independently of the C++ kernels.

  numpy_reference.py compare DUMP_TOOL   random matrices through qs_compression_dump, compared
                                         bit for bit (codes, scales, zero points)
  numpy_reference.py bench MODE N_ROWS N_COLS COUNT REPEATS
                                         times the reference on COUNT random [N_ROWS, N_COLS]
                                         MatMul weights; prints median seconds per pass

Exits 77 (skip) when numpy is not importable.
"""
import os
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:
    print("numpy is not available: skipping")
    sys.exit(77)

BITS = {"int8_sym": 8, "int8_asym": 8, "int4_sym": 4, "int4_asym": 4}


def grouped(weight, axis, group_size):
    """Reshape the reduction axis r into (r / g, g); statistics reduce over the new g axis."""
    shape = list(weight.shape)
    shape[axis:axis + 1] = [shape[axis] // group_size, group_size]
    return weight.reshape(shape), axis + 1


def quantize(weight, mode, group_size, channel_axis):
    """Returns (codes in the weight's shape, scales, zero points or None) with the scale in
    DequantizeLinear's layout: [C] per channel, the grouped axis divided by g otherwise."""
    weight = weight.astype(np.float32)
    channel_axis %= weight.ndim
    reduction = tuple(a for a in range(weight.ndim) if a != channel_axis)
    work = weight
    if group_size > 0:
        assert len(reduction) == 1
        work, axis = grouped(weight, reduction[0], group_size)
        reduction = (axis,)
    bits = BITS[mode]
    eps = np.finfo(np.float32).eps
    if mode.endswith("_asym"):
        low, high = 0, 2**bits - 1
        w_min = np.min(work, axis=reduction, keepdims=True)
        w_max = np.max(work, axis=reduction, keepdims=True)
        scale = (w_max - w_min) / (high - low)
        scale = np.where(np.abs(scale) < eps, eps, scale).astype(np.float32)
        with np.errstate(invalid="ignore"):
            zero_point = (low - np.round(w_min / scale)).astype(np.int32)
        zero_point = np.clip(zero_point, low, high)
        codes = work / scale
        codes += zero_point.astype(np.float32)
        codes = np.clip(np.round(codes), low, high).astype(np.uint8)
    else:
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        w_abs_min = np.abs(np.min(work, axis=reduction, keepdims=True))
        w_max = np.max(work, axis=reduction, keepdims=True)
        scale = np.where(w_abs_min >= w_max, w_abs_min, -w_max)
        scale /= 2 ** (bits - 1)
        scale = np.where(np.abs(scale) < eps, eps, scale).astype(np.float32)
        zero_point = None
        codes = np.clip(np.round(work / scale), low, high).astype(np.int8)
    codes = codes.reshape(weight.shape)
    if work is weight:
        scale = scale.reshape(-1)
        zero_point = None if zero_point is None else zero_point.reshape(-1)
    else:
        scale = np.squeeze(scale, axis=reduction[0])
        zero_point = None if zero_point is None else np.squeeze(zero_point, axis=reduction[0])
    return codes, scale, zero_point


def random_cases(rng):
    """(name, weight, channel axis, group sizes) covering both group layouts and odd rows."""
    matmul = rng.standard_normal((256, 96)).astype(np.float32)
    matmul[:, 3] = 0.25  # a constant column (one output channel of a MatMul)
    matmul[:, 5] *= 1e-9  # a column below the epsilon floor
    matmul[:, 7] = np.abs(matmul[:, 7])  # all positive: zero outside the range
    matmul[:, 9] = np.round(matmul[:, 9] * 8) / 8  # many exact ties after scaling
    gemm_t = rng.uniform(-3, 1, (48, 512)).astype(np.float32)
    gemm_t[2, :] = -1.5
    conv = rng.standard_normal((16, 8, 3, 3)).astype(np.float32)
    conv_t = rng.standard_normal((8, 4, 3, 3)).astype(np.float32)
    big = (rng.standard_normal((1024, 384)) * rng.uniform(0.01, 10, 384)).astype(np.float32)
    return [
        ("matmul", matmul, 1, [-1, 32, 64, 128]),
        ("gemm_transposed", gemm_t, 0, [-1, 32, 128, 256]),
        ("conv", conv, 0, [-1]),
        ("conv_transpose", conv_t, 1, [-1]),
        ("big", big, 1, [-1, 128]),
    ]


def compare(tool):
    rng = np.random.default_rng(20260729)
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, weight, axis, group_sizes in random_cases(rng):
            path = os.path.join(tmp, name + ".f32")
            weight.tofile(path)
            for mode in BITS:
                for group_size in group_sizes:
                    prefix = os.path.join(tmp, f"{name}_{mode}_{group_size}")
                    subprocess.run([tool, path, prefix, mode, str(group_size), str(axis)] +
                                   [str(d) for d in weight.shape], check=True)
                    codes, scale, zero_point = quantize(weight, mode, group_size, axis)
                    ours_codes = np.fromfile(prefix + ".codes", dtype=codes.dtype)
                    ours_scale = np.fromfile(prefix + ".scales", dtype=np.float32)
                    ours_zp = np.fromfile(prefix + ".zps", dtype=np.uint8)
                    problems = []
                    if not np.array_equal(ours_codes, codes.reshape(-1)):
                        bad = np.flatnonzero(ours_codes != codes.reshape(-1))
                        problems.append(f"{bad.size} codes differ (first at {bad[0]})")
                    if ours_scale.tobytes() != scale.astype(np.float32).reshape(-1).tobytes():
                        problems.append("scales differ")
                    if zero_point is not None and not np.array_equal(
                            ours_zp, zero_point.reshape(-1).astype(np.uint8)):
                        problems.append("zero points differ")
                    if zero_point is None and ours_zp.size != 0:
                        problems.append("symmetric mode wrote zero points")
                    checked += 1
                    if problems:
                        failures += 1
                        print(f"FAIL {name} {mode} g={group_size}: {'; '.join(problems)}")
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


def bench(mode, rows, cols, count, repeats):
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal((rows, cols), dtype=np.float32) for _ in range(count)]
    group_size = 128 if BITS[mode] == 4 else -1
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for weight in weights:
            quantize(weight, mode, group_size, 1)
        times.append(time.perf_counter() - start)
    times.sort()
    print(f"{times[len(times) // 2]:.6f}")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "compare":
        return compare(argv[2])
    if len(argv) == 7 and argv[1] == "bench":
        return bench(argv[2], int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
