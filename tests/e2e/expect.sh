# Sourced by the CLI e2e tests after they set $cli: `fail MESSAGE` counts a failure in $failures,
# `expect CODE PATTERN -- ARGS...` runs "$cli" ARGS and checks its exit code and, unless PATTERN is
# empty, that its stdout + stderr match the extended regex PATTERN.
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect() { # expect CODE PATTERN -- ARGS...
    local code=$1 pattern=$2; shift 3
    local out rc
    out=$("$cli" "$@" 2>&1); rc=$?
    [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code: $out"
    if [ -n "$pattern" ] && ! grep -qE -- "$pattern" <<<"$out"; then
        fail "'$*' output lacks /$pattern/: $out"
    fi
}
