#!/usr/bin/env bash
# Every tracked C++ file is formatted with the root .clang-format.
set -uo pipefail
cd "$1"
files=$(git ls-files '*.h' '*.cpp' 2>/dev/null || find core ui app tests resources -name '*.h' -o -name '*.cpp')
bad=()
for f in $files; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
    printf 'not clang-formatted (run clang-format -i):\n'
    printf '  %s\n' "${bad[@]}"
    exit 1
fi
echo "$(wc -w <<<"$files") files formatted"
