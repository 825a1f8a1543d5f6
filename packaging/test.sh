#!/usr/bin/env bash
# The whole check, as CI runs it (.ci/run calls this and nothing else). From any folder:
#   packaging/test.sh
# Steps: Debian packages (with the zoo's PyTorch); shellcheck; ONNX Runtime for node (best effort);
# the zoo models (../shared/models/make_zoo.py into build/zoo, cached); release build and the full
# ctest suite, with the zoo required (QS_ZOO_DIR, QS_REQUIRE_ZOO=1); ASan+UBSan build and the core tests; the DEB package and its checks; the headless run.
# Exits non-zero on the first failure. Builds use Ninja, ccache and at most two jobs.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

jobs=2
ort_node_version=1.30.0 # npm onnxruntime-node, for the e2e checks against ONNX Runtime
export CMAKE_BUILD_PARALLEL_LEVEL=$jobs
export CCACHE_BASEDIR=$repo # relative paths in the cache key: a clone elsewhere still hits
export CCACHE_NOHASHDIR=true # -g builds would otherwise key on the build folder

started=$SECONDS
tests_passed=0
tests_failed=0

section() { printf '\n=== [%4ds] %s\n' $((SECONDS - started)) "$*"; }
fail() {
    echo "test.sh: FAIL: $*" >&2
    exit 1
}

# Runs ctest with the given arguments, echoes its output and adds its counts to the totals.
run_ctest() {
    local log
    log=$(mktemp)
    local status=0
    ctest --output-on-failure --no-tests=error -j "$jobs" "$@" 2>&1 | tee "$log" || status=$?
    local summary
    summary=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n1 || true)
    rm -f "$log"
    [[ -n $summary ]] || fail "ctest $* printed no summary line"
    local failed total
    failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$summary")
    total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$summary")
    tests_passed=$((tests_passed + total - failed))
    tests_failed=$((tests_failed + failed))
    ((status == 0)) || fail "ctest $* exited with $status"
}

section "Debian packages"
bash packaging/setup.sh --with-zoo

section "shell scripts (shellcheck)"
shellcheck packaging/*.sh .ci/run
echo "packaging scripts are clean"

section "ONNX Runtime for node (npm onnxruntime-node $ort_node_version)"
ort_dir=tests/e2e/node_modules/onnxruntime-node
if [[ -f $ort_dir/package.json ]] && grep -q "\"version\": \"$ort_node_version\"" "$ort_dir/package.json"; then
    echo "already installed in $ort_dir"
elif ! command -v npm >/dev/null; then
    echo "WARNING: npm not found; ONNX Runtime checks will be skipped"
elif timeout 300 npm install --prefix tests/e2e --ignore-scripts --no-audit --no-fund --no-save \
    --no-package-lock --fetch-retries=1 "onnxruntime-node@$ort_node_version"; then
    echo "installed in $ort_dir"
else
    echo "WARNING: npm install onnxruntime-node failed (offline?); ONNX Runtime checks will be skipped"
fi
if [[ -f $ort_dir/package.json ]] && ! node -e "require('./$ort_dir')" 2>/dev/null; then
    echo "WARNING: $ort_dir does not load in node; ONNX Runtime checks will fail or be skipped"
fi

section "zoo models (make_zoo.py into build/zoo)"
# The shared folder sits beside the repository. The export is deterministic, so it is redone only
# when a script changes or a model it wrote is missing. DenseNet-121 comes from our own script.
zoo_script=$repo/../shared/models/make_zoo.py
zoo_dir=$repo/build/zoo
[[ -f $zoo_script ]] || fail "$zoo_script not found: the shared folder must sit beside the repository"
densenet_script=$repo/tests/bench/export_densenet121.py # the layout worst case make_zoo.py lacks
zoo_hash=$(cat "$zoo_script" "$densenet_script" | sha256sum | cut -d' ' -f1)
zoo_cached=0
if [[ -f $zoo_dir/.make_zoo.sha256 && $(cat "$zoo_dir/.make_zoo.sha256") == "$zoo_hash" ]]; then
    zoo_cached=1
    while read -r model; do
        [[ -f $zoo_dir/$model ]] || zoo_cached=0
    done <"$zoo_dir/.models"
fi
# A fresh clone on a machine that exported the same scripts before copies the machine's copy
# (kept per script hash under the user's cache folder) instead of running PyTorch again.
zoo_store=${XDG_CACHE_HOME:-$HOME/.cache}/quantscope/zoo/$zoo_hash
if ((!zoo_cached)) && [[ -f $zoo_store/.models ]]; then
    rm -rf "$zoo_dir"
    mkdir -p "$zoo_dir"
    if cp -a "$zoo_store/." "$zoo_dir/"; then
        zoo_cached=1
        while read -r model; do
            [[ -f $zoo_dir/$model ]] || zoo_cached=0
        done <"$zoo_dir/.models"
    fi
fi
if ((zoo_cached)); then
    echo "cached in $zoo_dir: $(tr '\n' ' ' <"$zoo_dir/.models")"
else
    rm -rf "$zoo_dir"
    mkdir -p "$zoo_dir"
    zoo_started=$SECONDS
    /usr/bin/python3 "$zoo_script" "$zoo_dir"
    /usr/bin/python3 "$densenet_script" "$zoo_dir"
    (cd "$zoo_dir" && ls -- *.onnx) >"$zoo_dir/.models"
    echo "$zoo_hash" >"$zoo_dir/.make_zoo.sha256"
    echo "exported $(wc -l <"$zoo_dir/.models") models in $((SECONDS - zoo_started)) s"
    # Best effort: a full disk or a read-only home only costs the next clone the export.
    if mkdir -p "$zoo_store.tmp.$$" && cp -a "$zoo_dir/." "$zoo_store.tmp.$$/"; then
        rm -rf "$zoo_store"
        mv "$zoo_store.tmp.$$" "$zoo_store" || echo "WARNING: could not keep the zoo in $zoo_store"
    fi
    rm -rf "$zoo_store.tmp.$$"
fi
export QS_ZOO_DIR=$zoo_dir QS_REQUIRE_ZOO=1

section "release: configure and build"
cmake --preset release
cmake --build --preset release -j "$jobs"

section "release: ctest (all tests)"
run_ctest --test-dir build/release

section "asan: configure and build"
cmake --preset asan
cmake --build --preset asan -j "$jobs"

section "asan: ctest -L core"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest --test-dir build/asan -L core

section "DEB package"
package_dir=build/release/package
rm -rf "$package_dir"
cpack --config build/release/CPackConfig.cmake -B "$package_dir"
debs=("$package_dir"/quantscope_*.deb)
if ((${#debs[@]} != 1)) || [[ ! -f ${debs[0]} ]]; then
    fail "expected one quantscope_*.deb in $package_dir"
fi
deb=${debs[0]}
dpkg-deb --info "$deb"
contents=$(dpkg-deb --contents "$deb")
echo "$contents"

expected_files=(
    usr/bin/quantscope-cli
    usr/share/applications/io.quantscope.Quantscope.desktop
    usr/share/metainfo/io.quantscope.Quantscope.metainfo.xml
    usr/share/mime/packages/quantscope.xml
    usr/share/icons/hicolor/scalable/apps/quantscope.svg
    usr/share/icons/hicolor/256x256/apps/quantscope.png
    usr/share/doc/quantscope/copyright
)
[[ -x build/release/app/quantscope ]] && expected_files+=(usr/bin/quantscope)
[[ -f resources/models/demo_cnn.onnx ]] && expected_files+=(usr/share/quantscope/models/demo_cnn.onnx)
[[ -f resources/models/digits_cnn.onnx ]] && expected_files+=(usr/share/quantscope/models/digits_cnn.onnx)
for path in "${expected_files[@]}"; do
    grep -qE " \./$path\$" <<<"$contents" || fail "$deb lacks /$path"
done
echo "package holds all ${#expected_files[@]} expected files"

extract=$(mktemp -d)
trap 'rm -rf "$extract"' EXIT
dpkg-deb -x "$deb" "$extract"
desktop-file-validate "$extract/usr/share/applications/io.quantscope.Quantscope.desktop"
appstreamcli validate --no-net "$extract/usr/share/metainfo/io.quantscope.Quantscope.metainfo.xml"

# Depends: the package names, without versions or alternatives markers.
depends=$(dpkg-deb -f "$deb" Depends | tr ',|' '\n' | sed -E 's/\(.*\)//; s/:any//; s/[[:space:]]//g')

# The Debian package that ships a library file, trying the merged-/usr spellings of its path.
owner_of() {
    local path=$1 real candidate out
    real=$(realpath "$path")
    for candidate in "$path" "${path#/usr}" "/usr$path" "$real" "${real#/usr}" "/usr$real"; do
        if out=$(dpkg -S "$candidate" 2>/dev/null); then
            out=${out%%$'\n'*}
            echo "${out%%:*}"
            return 0
        fi
    done
    return 1
}

# Every binary runs from the extracted tree on system libraries alone, and the package depends on
# the package of each library it links directly.
for binary in "$extract"/usr/bin/*; do
    name=$(basename "$binary")
    libraries=$(env -u LD_LIBRARY_PATH ldd "$binary")
    if grep -q 'not found' <<<"$libraries"; then
        echo "$libraries"
        fail "$name: unresolved libraries"
    fi
    non_system=$(awk '$2 == "=>" && $3 !~ /^\/(usr\/)?lib(32|64)?\// { print $1 " => " $3 }' \
        <<<"$libraries")
    [[ -z $non_system ]] || fail "$name: libraries from outside the system folders: $non_system"
    for soname in $(readelf -d "$binary" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'); do
        [[ $soname == ld-linux* ]] && continue # the dynamic loader, part of libc6
        path=$(awk -v lib="$soname" '$1 == lib && $2 == "=>" { print $3 }' <<<"$libraries")
        owner=$(owner_of "$path") || fail "$name: no Debian package owns $path"
        grep -qx "$owner" <<<"$depends" || fail "$name: needs $soname from $owner, not in Depends"
    done
    echo "$name: $(grep -c '=>' <<<"$libraries") system libraries, each direct one covered by Depends"
done

version=$(env -u LD_LIBRARY_PATH "$extract/usr/bin/quantscope-cli" --version)
expected_version="quantscope-cli $(dpkg-deb -f "$deb" Version)"
[[ $version == "$expected_version" ]] || fail "extracted quantscope-cli --version said '$version'"
echo "extracted quantscope-cli --version: $version"

section "headless run (packaging/run.sh --headless)"
model=resources/models/digits_cnn.onnx
[[ -f $model ]] || model=/usr/share/libonnx-testdata/data/node/test_conv_with_strides_padding/model.onnx
QS_OUT="$extract/out" bash packaging/run.sh --headless "$model"
python3 -m json.tool "$extract/out/info.json" >/dev/null || fail "run.sh wrote no valid info.json"
[[ $model != *digits_cnn.onnx ]] || python3 -m json.tool "$extract/out/accuracy.json" >/dev/null ||
    fail "run.sh wrote no valid accuracy.json for the demo model"

section "done in $((SECONDS - started)) s"
echo "tests: $tests_passed passed, $tests_failed failed"
