#!/usr/bin/env bash
# Layout of a 10,000-op skip chain: our sectioned layout (median of 5) vs. plain `dot -Tsvg` on
# the same graph (median of DOT_RUNS, default 3), in one run.
set -euo pipefail
bench=${1:-build/release/tests/bench/qs_layout_bench}
"$bench" --ops 10000 --runs 5 --dot-runs "${DOT_RUNS:-3}"
