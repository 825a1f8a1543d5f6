#!/usr/bin/env bash
# clang-tidy (checks and options in the root .clang-tidy) over core/ and the CLI, using the
# build's compile_commands.json. Two files at a time; every file must stay clean except
# core/runtime/ops/conv_transpose.cpp, whose reference loop and shape rule are still over the
# complexity limit (to be split).
set -uo pipefail
src=$1 build=$2
cd "$src"
files=$(git ls-files 'core/*.cpp' 'app/cli/*.cpp' 'app/cli_main.cpp' \
    ':!core/runtime/ops/conv_transpose.cpp' 2>/dev/null)
status=0
printf '%s\n' $files | xargs -P 2 -n 4 clang-tidy -p "$build" --quiet 2>/dev/null >"$build/clang-tidy.log" || status=1
if ((status)) || grep -qE '(warning|error):' "$build/clang-tidy.log"; then
    grep -E '(warning|error):' "$build/clang-tidy.log" | sort -u
    exit 1
fi
echo "clang-tidy: $(wc -w <<<"$files") files clean"
