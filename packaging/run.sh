#!/usr/bin/env bash
# Installs what is missing, builds the release preset and opens a model: in the GUI when a display is
# there, otherwise (or with --headless) through quantscope-cli, writing its outputs to a folder.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: packaging/run.sh [--headless] [MODEL.onnx]
  MODEL.onnx   model to open (default: resources/models/digits_cnn.onnx, the trained demo model)
  --headless   run the CLI flow even when a display is available
Without $DISPLAY and $WAYLAND_DISPLAY the CLI flow runs. Its outputs go to $QS_OUT (default: out/).
USAGE
}

headless=0
model=
for arg in "$@"; do
    case $arg in
        --headless) headless=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "run.sh: unknown option '$arg'" >&2; usage >&2; exit 2 ;;
        *)
            [[ -z $model ]] || { echo "run.sh: one model at a time" >&2; exit 2; }
            model=$arg
            ;;
    esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Paths given on the command line are relative to the caller's folder, not to the repository.
[[ -z $model ]] || model=$(realpath -m -- "$model")
out_dir=$(realpath -m -- "${QS_OUT:-$repo/out}")
cd "$repo"
demo=$repo/resources/models/digits_cnn.onnx
model=${model:-$demo}
if [[ ! -f $model ]]; then
    echo "run.sh: no model at $model; pass one, e.g. packaging/run.sh MODEL.onnx" >&2
    exit 1
fi

if [[ -z ${DISPLAY:-} && -z ${WAYLAND_DISPLAY:-} && $headless == 0 ]]; then
    echo "run.sh: no display (\$DISPLAY and \$WAYLAND_DISPLAY are empty): running headless"
    headless=1
fi

bash packaging/setup.sh
export CCACHE_BASEDIR=$repo
cmake --preset release >/dev/null
build=build/release
targets=(quantscope-cli)
gui_built=0
if ninja -C "$build" -t query quantscope >/dev/null 2>&1; then
    targets+=(quantscope)
    gui_built=1
fi
cmake --build "$build" -j 2 --target "${targets[@]}"
cli=$build/app/quantscope-cli

if ((headless == 0 && gui_built == 1)); then
    exec "$build/app/quantscope" "$model"
fi
((headless == 1)) || echo "run.sh: the GUI is not built in this tree: running headless"

# One CLI step per line: the file it writes under the output folder ('-' prints to the terminal),
# then the quantscope-cli arguments. Commands that write files themselves take "$out_dir/NAME".
mkdir -p "$out_dir"
step() {
    local output=$1
    shift
    echo "--- quantscope-cli $*"
    if [[ $output == - ]]; then
        "$cli" "$@"
        return
    fi
    "$cli" "$@" >"$out_dir/$output.tmp"
    mv -f "$out_dir/$output.tmp" "$out_dir/$output"
    echo "wrote $out_dir/$output"
}

# The demo model comes with labelled data: calibrate on its calibration set (drawn from the training
# split) and report the accuracy of every compressed model on its held-out split. Other models
# calibrate on random samples.
calibration=(--calib-random 32)
labelled=0
if [[ $model -ef $demo ]]; then
    calibration=(--calib-npy "$repo/resources/models/digits_calib_inputs.npy")
    labelled=1
fi

step - info "$model"
step info.json info --json "$model"
step - quantize "$model" --hw cpu --preset performance --setup-out "$out_dir/setup.json" \
    --proposal-out "$out_dir/proposal.json" --dot-out "$out_dir/setup.dot" \
    "${calibration[@]}" --report "$out_dir/quantize_report.json" \
    --encodings-out "$out_dir/encodings.json" --out "$out_dir/model.qdq.onnx"
step - compress-weights "$model" --mode int8_asym --out "$out_dir/model.int8.onnx"
step - convert-fp16 "$model" --out "$out_dir/model.fp16.onnx"
if ((labelled == 1)); then
    # HAWQ mixed precision (exported through quantize --setup-in) and SIMD pruning (label-free
    # Hessian importance) of the demo model, for the comparison below.
    step - hawq "$model" --hw npu --compression-ratio 1.4 "${calibration[@]}" --samples 8 \
        --iterations 50 --setup-out "$out_dir/hawq_setup.json" --report "$out_dir/hawq.json"
    step - quantize "$model" --hw npu --setup-in "$out_dir/hawq_setup.json" "${calibration[@]}" \
        --out "$out_dir/model.mixed.qdq.onnx"
    step - prune "$model" --target-memory 85% --simd 1 "${calibration[@]}" --samples 8 \
        --iterations 50 --report "$out_dir/pruning.json" --out "$out_dir/model.pruned.onnx"
    # Float, 8-bit QDQ, HAWQ mixed precision, int8 weights and pruned side by side: top-1, top-5,
    # agreement with float. (The executor does not run convert-fp16's float16 graphs, so the FP16
    # model is not among them.)
    compared=("$model" "$out_dir/model.qdq.onnx" "$out_dir/model.mixed.qdq.onnx"
        "$out_dir/model.int8.onnx" "$out_dir/model.pruned.onnx")
    test_set=(--calib-npy "$repo/resources/models/digits_test_inputs.npy"
        --labels-npy "$repo/resources/models/digits_test_labels.npy")
    step - evaluate "${compared[@]}" "${test_set[@]}"
    step accuracy.json evaluate "${compared[@]}" "${test_set[@]}" --json
fi
if "$cli" render --help >/dev/null 2>&1; then
    step - render "$model" --setup "$out_dir/setup.json" --out "$out_dir/graph.svg"
fi

echo "run.sh: outputs are in $out_dir"
