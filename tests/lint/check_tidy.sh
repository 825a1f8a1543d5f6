#!/usr/bin/env bash
# clang-tidy (checks and options in the root .clang-tidy) over core/ and the CLI, using the
# build's compile_commands.json. Two files at a time; every file must stay clean.
#
# Running clang-tidy over all files costs over an hour on two cores (ctest allows it 60 minutes), so a file is skipped when
# its result is already known: clean runs are remembered by a key of everything the result
# depends on (clang-tidy's version, .clang-tidy, the compile command and the preprocessed
# translation unit, so an edit to any header it includes runs it again; tidy_key.py). Known keys
# are kept in ~/.cache/quantscope/clang-tidy and, for a fresh clone on a fresh machine with the
# same compiler and headers, in tests/lint/tidy_clean.txt (the keys do not depend on the folder).
#   QS_TIDY_CACHE=0   runs every file
#   QS_TIDY_RECORD=1  rewrites tests/lint/tidy_clean.txt after a clean run (commit it)
set -uo pipefail
src=$1 build=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$src" || exit 1
mapfile -t files < <(git ls-files 'core/*.cpp' 'app/cli/*.cpp' 'app/cli_main.cpp' 2>/dev/null)
((${#files[@]})) || {
    echo "clang-tidy: no files found under $src"
    exit 1
}

cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/quantscope/clang-tidy
use_cache=${QS_TIDY_CACHE:-1}
if [[ $use_cache == 1 ]] && ! mkdir -p "$cache_dir" 2>/dev/null; then
    echo "clang-tidy: cannot create $cache_dir; keys only from tests/lint/tidy_clean.txt"
    cache_dir=
fi
# Not the "Host CPU" line of --version: it names the machine's processor (znver3,
# sapphirerapids), which the result does not depend on, and made every key of one kind of
# machine unknown on another (a fresh-clone CI run then checked all files).
config_key=$({
    clang-tidy --version | grep -v 'Host CPU'
    cat .clang-tidy
} | sha256sum | cut -d' ' -f1)

declare -A key_of known
to_check=()
if [[ $use_cache == 1 ]]; then
    while read -r file key; do
        key_of[$file]=$config_key-$key
    done < <(printf '%s\n' "${files[@]}" | python3 "$here/tidy_key.py" "$src" "$build")
    if [[ -f $here/tidy_clean.txt ]]; then
        while read -r key; do
            known[$key]=1
        done <"$here/tidy_clean.txt"
    fi
    for file in "${files[@]}"; do
        key=${key_of[$file]:-}
        if [[ -n $key && (-n ${known[$key]:-} || (-n $cache_dir && -f $cache_dir/$key)) ]]; then
            continue
        fi
        to_check+=("$file")
    done
else
    to_check=("${files[@]}")
fi

log=$build/clang-tidy.log
: >"$log"
if ((${#to_check[@]})); then
    # Each clean file's key is remembered as soon as its run ends, so a run stopped half way (a
    # timeout, a killed job) still spares the next one the files it got through.
    # shellcheck disable=SC2016 # $0 (build), $1 (cache), $2 (file), $3 (key) are the inner shell's
    for file in "${to_check[@]}"; do
        printf '%s\n%s\n' "$file" "${key_of[$file]:-none}"
    done | xargs -P 2 -n 2 -d '\n' sh -c \
        'out="$0/clang-tidy.$(echo "$2" | tr / _)"; clang-tidy -p "$0" --quiet "$2" >"$out.log" 2>&1; rc=$?; echo $rc >"$out.rc"
         if [ "$rc" = 0 ] && [ -n "$1" ] && [ "$3" != none ] && ! grep -qE "(warning|error):" "$out.log"; then : >"$1/$3"; fi' \
        "$build" "$cache_dir"
fi
failed=0
for file in "${to_check[@]}"; do
    file_log=$build/clang-tidy.$(echo "$file" | tr / _).log
    file_rc=${file_log%.log}.rc
    rc=$(cat "$file_rc" 2>/dev/null || echo "not run")
    if [[ $rc != 0 ]] || grep -qE '(warning|error):' "$file_log"; then
        failed=1
        echo "$file: clang-tidy exited $rc" >>"$log"
        cat "$file_log" >>"$log" 2>/dev/null
    elif [[ -n $cache_dir && -n ${key_of[$file]:-} ]]; then
        : >"$cache_dir/${key_of[$file]}"
    fi
    rm -f "$file_log" "$file_rc"
done
if ((failed)); then
    grep -E '(warning|error):|clang-tidy exited [^0]' "$log" | sort -u
    exit 1
fi
if [[ ${QS_TIDY_RECORD:-0} == 1 && $use_cache == 1 ]]; then
    for file in "${files[@]}"; do
        [[ -n ${key_of[$file]:-} ]] && echo "${key_of[$file]}"
    done | sort >"$here/tidy_clean.txt"
    echo "clang-tidy: recorded $(wc -l <"$here/tidy_clean.txt") clean keys in tests/lint/tidy_clean.txt"
fi
echo "clang-tidy: ${#files[@]} files clean ($((${#files[@]} - ${#to_check[@]})) known clean, ${#to_check[@]} checked)"
