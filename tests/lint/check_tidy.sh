#!/usr/bin/env bash
# clang-tidy (checks and options in the root .clang-tidy) over core/ and the CLI, using the
# build's compile_commands.json. Two files at a time; every file must stay clean.
#
# A file found clean is remembered under ~/.cache/quantscope/clang-tidy, keyed on everything its
# result depends on: clang-tidy's version, .clang-tidy, the compile command and the preprocessed
# translation unit (so an edit to any header it includes runs it again). Running clang-tidy over
# all files costs over 20 minutes on two cores; a tree where few files changed costs one or two.
# QS_TIDY_CACHE=0 runs every file.
set -uo pipefail
src=$1 build=$2
cd "$src" || exit 1
mapfile -t files < <(git ls-files 'core/*.cpp' 'app/cli/*.cpp' 'app/cli_main.cpp' 2>/dev/null)
((${#files[@]})) || {
    echo "clang-tidy: no files found under $src"
    exit 1
}

cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/quantscope/clang-tidy
use_cache=${QS_TIDY_CACHE:-1}
if [[ $use_cache == 1 ]] && ! mkdir -p "$cache_dir" 2>/dev/null; then
    echo "clang-tidy: cannot create $cache_dir; running every file"
    use_cache=0
fi
config_key=$({
    clang-tidy --version
    cat .clang-tidy
} | sha256sum | cut -d' ' -f1)

# The key of one file: the config key, its compile command and its preprocessed text. Prints
# nothing when the file has no compile command or does not preprocess (clang-tidy reports why).
file_key() {
    local file=$1
    python3 - "$build/compile_commands.json" "$src/$file" <<'EOF' || return 0
import json, shlex, subprocess, sys, hashlib
db, path = sys.argv[1], sys.argv[2]
for entry in json.load(open(db)):
    if entry["file"] != path:
        continue
    args = entry.get("arguments") or shlex.split(entry["command"])
    # Drop the output and the dependency-file flags; preprocess to stdout instead.
    kept, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if arg in ("-c", "-MD", "-MMD") or arg.startswith("-o"):
            continue
        kept.append(arg)
    text = subprocess.run(kept + ["-E", "-P"], cwd=entry["directory"], capture_output=True)
    if text.returncode != 0:
        sys.exit(1)
    digest = hashlib.sha256()
    digest.update(" ".join(args).encode())
    digest.update(text.stdout)
    print(digest.hexdigest())
    sys.exit(0)
sys.exit(1)
EOF
}
export -f file_key
export src build

to_check=()
keys=()
if [[ $use_cache == 1 ]]; then
    mapfile -t keys < <(printf '%s\n' "${files[@]}" |
        xargs -P 2 -n 1 bash -c 'printf "%s %s\n" "$1" "$(file_key "$1")"' _ | sort)
    declare -A key_of
    for line in "${keys[@]}"; do
        key_of[${line%% *}]=${line#* }
    done
    for file in "${files[@]}"; do
        key=${key_of[$file]:-}
        if [[ -n $key && -f $cache_dir/$config_key-$key ]]; then
            continue
        fi
        to_check+=("$file")
    done
else
    to_check=("${files[@]}")
fi

status=0
log=$build/clang-tidy.log
: >"$log"
if ((${#to_check[@]})); then
    printf '%s\n' "${to_check[@]}" | xargs -P 2 -n 1 sh -c \
        'out="$0/clang-tidy.$(echo "$1" | tr / _)"; clang-tidy -p "$0" --quiet "$1" >"$out.log" 2>&1; echo $? >"$out.rc"' \
        "$build" || status=1
fi
failed=0
for file in "${to_check[@]}"; do
    file_log=$build/clang-tidy.$(echo "$file" | tr / _).log
    file_rc=${file_log%.log}.rc
    if grep -qE '(warning|error):' "$file_log" || [[ $(cat "$file_rc" 2>/dev/null) != 0 ]]; then
        failed=1
        echo "$file: clang-tidy exited $(cat "$file_rc" 2>/dev/null || echo '(not run)')" >>"$log"
        cat "$file_log" >>"$log"
    elif [[ $use_cache == 1 && -n ${key_of[$file]:-} ]]; then
        : >"$cache_dir/$config_key-${key_of[$file]}"
    fi
    rm -f "$file_log" "$file_rc"
done
if ((failed)); then
    grep -E '(warning|error):|clang-tidy exited [^0]' "$log" | sort -u
    exit 1
fi
if ((status)); then
    echo "clang-tidy exited non-zero without a finding; see $log"
    exit 1
fi
echo "clang-tidy: ${#files[@]} files clean ($((${#files[@]} - ${#to_check[@]})) unchanged since a clean run)"
