#!/usr/bin/env bash
# clang-tidy (checks and options in the root .clang-tidy) over core/ and the CLI, using the
# build's compile_commands.json. Two files at a time; every file must stay clean.
set -uo pipefail
src=$1 build=$2
cd "$src" || exit 1
mapfile -t files < <(git ls-files 'core/*.cpp' 'app/cli/*.cpp' 'app/cli_main.cpp' 2>/dev/null)
status=0
printf '%s\n' "${files[@]}" | xargs -P 2 -n 4 clang-tidy -p "$build" --quiet 2>/dev/null >"$build/clang-tidy.log" || status=1
if ((status)) || grep -qE '(warning|error):' "$build/clang-tidy.log"; then
    grep -E '(warning|error):' "$build/clang-tidy.log" | sort -u
    exit 1
fi
echo "clang-tidy: ${#files[@]} files clean"
