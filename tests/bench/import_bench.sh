#!/usr/bin/env bash
# Import vs bare protobuf parse on ResNet-50: median wall time of 5 repetitions (Google
# Benchmark) and peak RSS of one fresh process each. Needs the zoo (make_zoo.py) in QS_ZOO_DIR.
set -euo pipefail
bench=${1:-build/release/tests/bench/qs_import_bench}
zoo=${QS_ZOO_DIR:?set QS_ZOO_DIR to a make_zoo.py export (packaging/test.sh writes one to build/zoo)}
"$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_filter='resnet50|efficientnet'
for mode in parse import; do "$bench" --rss "$mode" "$zoo/resnet50.onnx"; done
