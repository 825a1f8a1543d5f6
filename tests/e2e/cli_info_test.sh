#!/usr/bin/env bash
# quantscope-cli info: output on the demo model, exit codes (0 ok, 1 bad input, 2 usage) and a
# one-line error naming the file for every bad input.
set -uo pipefail
cli=$1 writer=$2 demo=$3
tmp=$(mktemp -d); trap 'chmod -R u+rwx "$tmp"; rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect() { # expect CODE PATTERN -- ARGS...
    local code=$1 pattern=$2; shift 3
    local out err rc
    out=$("$cli" "$@" 2>"$tmp/err"); rc=$?; err=$(cat "$tmp/err")
    [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code (stderr: $err)"
    if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out$err"; then
        fail "'$*' output lacks /$pattern/: $out $err"
    fi
}

expect 0 '^quantscope-cli [0-9]+\.[0-9]+\.[0-9]+' -- --version
expect 0 'info' -- --help
expect 0 'input-shape' -- info --help
expect 2 'subcommand' --
expect 2 'usage' -- --no-such-flag
expect 2 'usage' -- info
expect 2 'input-shape' -- info "$demo" --input-shape input=1,x
expect 2 "'nope'" -- info "$demo" --input-shape nope=1,3,96,96
expect 0 'Nodes: +42' -- info "$demo"
expect 0 'input +float +1x3x64x64' -- info "$demo" --input-shape input=1,3,64,64
expect 0 'Conv +13' -- info "$demo"

"$cli" info --json "$demo" >"$tmp/info.json" || fail "info --json exited $?"
python3 - "$tmp/info.json" <<'PY' || fail "info --json is not the expected JSON"
import json, sys
info = json.load(open(sys.argv[1]))
assert info["node_count"] == 42, info["node_count"]
assert info["opset"] == 13
assert info["inputs"][0]["name"] == "input"
assert info["op_type_counts"]["Conv"] == 13
assert info["opaque_nodes"] == []
PY

"$writer" "$tmp/bad" >"$tmp/cases" || fail "cannot write bad models"
while IFS=$'\t' read -r name phrase; do
    "$cli" info "$tmp/bad/$name" >"$tmp/out" 2>"$tmp/err"; rc=$?
    [ "$rc" -eq 1 ] || fail "$name: exit $rc, expected 1"
    [ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$tmp/err")"
    grep -qF -- "$name" "$tmp/err" || fail "$name: message does not name the file: $(cat "$tmp/err")"
    grep -qF -- "$phrase" "$tmp/err" || fail "$name: message lacks '$phrase': $(cat "$tmp/err")"
    [ -s "$tmp/out" ] && fail "$name: printed to stdout"
done <"$tmp/cases"
[ "$(wc -l <"$tmp/cases")" -ge 15 ] || fail "too few bad-input cases"

if [ "$failures" -gt 0 ]; then
    echo "$failures failure(s)" >&2
    exit 1
fi
echo "cli info: all checks passed ($(wc -l <"$tmp/cases") bad inputs)"
