#!/usr/bin/env bash
# Weight compression on one core vs the numpy reference, in the same run: INT4_ASYM group 128 and
# INT8_ASYM per channel over 6 x [4096, 4096] float32 weights (~10^8). Prints median times, the
# speed-up over numpy, and GB/s of float32 input against memcpy of the same bytes.
#   tests/bench/compression_bench.sh [BUILD_DIR] [REPETITIONS]
set -euo pipefail
build=${1:-build/release}
reps=${2:-5}
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
[ -x "$python" ] || python=python3
core=${QS_BENCH_CORE:-0}
json=$(mktemp); trap 'rm -f "$json"' EXIT
taskset -c "$core" "$build/tests/bench/qs_compression_bench" --benchmark_repetitions="$reps" \
    --benchmark_report_aggregates_only=true --benchmark_format=json >"$json"
reference="$here/../unit/compression/numpy_reference.py"
if ! "$python" -c 'import numpy' 2>/dev/null; then
    echo "numpy is not available to $python: no reference timing" >&2
    numpy_int4=nan numpy_int8=nan
else
    numpy_int4=$(taskset -c "$core" "$python" "$reference" bench int4_asym 4096 4096 6 "$reps")
    numpy_int8=$(taskset -c "$core" "$python" "$reference" bench int8_asym 4096 4096 6 "$reps")
fi
"$python" - "$json" "$numpy_int4" "$numpy_int8" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
def median(name, key="real_time"):
    for run in runs:
        if run["name"].startswith(name) and run.get("aggregate_name") == "median":
            return run[key] / 1e3, run["cpu_time"] / 1e3  # ms -> s
    raise SystemExit(f"no median for {name}")
weights = 6 * 4096 * 4096
gigabytes = weights * 4 / 1e9
memcpy, memcpy_cpu = median("BM_Memcpy")
print(f"{weights:,} float32 weights ({gigabytes:.2f} GB), one core, medians")
print(f"{'':24}{'ours s':>9}{'(cpu s)':>9}{'numpy s':>9}{'speed-up':>10}{'GB/s':>8}{'of memcpy':>11}")
print(f"{'memcpy':24}{memcpy:9.3f}{memcpy_cpu:9.3f}{'':9}{'':10}{gigabytes / memcpy:8.2f}{'100%':>11}")
for label, name, numpy in (("int4_asym, group 128", "BM_Int4AsymGroup128", float(sys.argv[2])),
                           ("int8_asym, per-channel", "BM_Int8AsymPerChannel", float(sys.argv[3]))):
    ours, cpu = median(name)
    print(f"{label:24}{ours:9.3f}{cpu:9.3f}{numpy:9.3f}{numpy / ours:9.1f}x{gigabytes / ours:8.2f}"
          f"{100 * memcpy / ours:10.0f}%")
PY
