#!/usr/bin/env bash
# quantscope-cli run --passes/--verbose: each pass of the pipeline is named and timed on stderr with
# the changes it made, the run after the passes writes the same output shape, and an unknown pass
# is a usage error naming it.
set -uo pipefail
cli=$1 demo=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$cli" run "$demo" --random 2 --passes inference --verbose --out "$tmp/folded.npy" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || fail "run --passes inference exited $rc: $(cat "$tmp/err")"
for pass in remove-identity fold-constants fold-batch-norm; do
    grep -qE "^pass $pass: [0-9.e+-]+ ms" "$tmp/err" || fail "--verbose does not time pass $pass"
done
grep -q "folded BatchNormalization '.*' into Conv '" "$tmp/err" ||
    fail "--verbose does not list the folds: $(cat "$tmp/err")"
grep -qE "^  Conv: [0-9.e+-]+ ms" "$tmp/err" || fail "--verbose does not time the op types"

"$cli" run "$demo" --random 2 --out "$tmp/plain.npy" 2>/dev/null || fail "plain run failed"
# Same .npy header (dtype, shape) and size: the passes keep the outputs' shape.
[ "$(head -c 128 "$tmp/plain.npy")" = "$(head -c 128 "$tmp/folded.npy")" ] ||
    fail "the folded model's output header differs"
[ "$(stat -c %s "$tmp/plain.npy")" = "$(stat -c %s "$tmp/folded.npy")" ] ||
    fail "the folded model's output size differs"

"$cli" run "$demo" --random 1 --passes fold-batch-norm,no-such-pass 2>"$tmp/err"
rc=$?
[ "$rc" -ne 0 ] || fail "an unknown pass was accepted"
grep -q "no-such-pass" "$tmp/err" || fail "the error does not name the unknown pass: $(cat "$tmp/err")"

[ "$failures" -eq 0 ] && echo "cli run --passes: all checks passed"
exit $((failures > 0))
