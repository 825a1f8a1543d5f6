#!/usr/bin/env bash
# quantscope-cli run's datasets (runtime::DatasetSource, shared with quantize and compress-weights):
# .npy rows and N random samples give that many output rows, also for a static batch of 1, and
# wrong datasets are clear errors naming run's own options.
set -uo pipefail
cli=$1 demo=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# shellcheck source=expect.sh
source "$(dirname "$0")/expect.sh"

/usr/bin/python3 -c "import numpy as np; np.save('$tmp/x.npy', np.random.default_rng(1).standard_normal((5, 3, 96, 96)).astype(np.float32))" ||
    fail "cannot write the .npy input"
expect 0 'output 0: \[5,10\]' -- run "$demo" --input "$tmp/x.npy"
expect 0 'ran 3 sample\(s\) in 3 batch\(es\)' -- run "$demo" --random 3 --batch 1
# The one batch rule: a dynamic batch runs up to 8 samples at once.
expect 0 'ran 3 sample\(s\) in 1 batch\(es\)' -- run "$demo" --random 3
# Progress into a pipe (not a terminal): whole lines, no carriage-return redraws.
progress=$("$cli" run "$demo" --random 3 --batch 1 2>&1 >/dev/null)
grep -qE '^progress 100% ' <<<"$progress" || fail "no final progress line in: $progress"
if grep -q $'\r' <<<"$progress"; then fail "carriage returns in piped progress: $progress"; fi
# A static batch of 1: N random samples are N runs of it.
expect 0 'output 0: \[3,10\]' -- run "$demo" --random 3 --input-shape input=1,3,96,96
expect 2 'give exactly one dataset: --input, --images or --random' -- run "$demo"
expect 2 'the model has 1 input\(s\), got 2 \.npy file\(s\); give one --input per input' -- run "$demo" --input "$tmp/x.npy" --input "$tmp/x.npy"
expect 1 "--input '$tmp/missing.npy' for input 'input'" -- run "$demo" --input "$tmp/missing.npy"
expect 2 'excludes' -- run "$demo" --random 2 --images "$tmp"
[ "$failures" -eq 0 ] && echo "cli run datasets: all checks passed"
exit $((failures > 0))
