#!/bin/sh
# Executor vs ONNX Runtime on models from make_zoo.py (and any ONNX file), for several thread
# counts and batch sizes.
# usage: compare_ort.sh BUILD_DIR ZOO_DIR ORT_NODE_MODULES [REPEATS] [MODEL ...]
#   MODEL: a name in ZOO_DIR, or PATH.onnx[:DIMS] where DIMS are the first input's dims after the
#   batch for a model whose other dims are dynamic (ppocr_det.onnx:3,640,640).
#   ORT_NODE_MODULES: a node_modules folder holding onnxruntime-node
#   (npm install --ignore-scripts onnxruntime-node).
# SETTINGS (environment, default "1x1"): THREADSxBATCH settings, e.g. "1x1 2x1 2x8".
# ROUNDS (environment, default 5): each round times our executor and then ONNX Runtime, REPEATS
# runs each and at least 250 ms of runs (a sub-millisecond model runs hundreds); the table shows the medians over rounds (the ratio is the median of the per-round
# ratios), so a burst of load on a shared machine hits both sides of a round alike.
# RUN_FIGURE (environment, default 1): each round also times whole `quantscope-cli run`
# processes on the benchmark's input of 1 and of K batches (K - 1 batches take about two seconds
# of forward); (tK - t1) / ((K - 1) x BATCH) is the process's time per sample, shown against the
# in-process forward's (run/fwd, against the median of single forwards) and against the
# benchmark's own loop over the same K batches, timed whole like the process (run/loop: what the
# process adds to the executor's work, with the machine's hiccups on both sides).
# Peak RSS: ours is the benchmark process's after its forward runs (before the VJP keeps every
# activation); ONNX Runtime's is the node process's minus what node held before loading it.
set -eu
build=$1; zoo=$2; modules=$3; repeats=${4:-10}
shift 4 2>/dev/null || shift $#
models=${*:-"mobilenet_v2 resnet18 resnet50"}
rounds=${ROUNDS:-5}
settings=${SETTINGS:-1x1}
runFigure=${RUN_FIGURE:-1}
here=$(cd "$(dirname "$0")" && pwd)
cli="$build/app/quantscope-cli"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seconds() { # COMMAND... -> wall seconds
  s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); echo "$e - $s" | bc
}
printf '%-20s %3s %3s %10s %10s %7s %12s %6s %8s %8s %10s %8s %10s %9s\n' model thr bat ours_ms \
  ort_ms ratio max_rel_diff vjp rss_mib ort_rss run_ms/smp run/fwd loop_ms/smp run/loop
for spec in $models; do
  case $spec in
    *.onnx*) file=${spec%%:*}; dims=; [ "$file" = "$spec" ] || dims=${spec#*:} ;;
    *) file=$zoo/$spec.onnx; dims= ;;
  esac
  name=$(basename "$file" .onnx)
  for setting in $settings; do
    threads=${setting%x*}; batch=${setting#*x}
    rows="$work/$name.$setting.rounds"
    : >"$rows"
    r=0
    while [ "$r" -lt "$rounds" ]; do
      ours=$("$build/tests/bench/qs_runtime_bench" "$file" "$work/$name" "$repeats" "$threads" \
        "$batch" $dims)
      theirs=$(NODE_PATH="$modules" node "$here/ort_bench.js" "$file" "$work/$name" "$repeats" \
        "$threads")
      run='{}'
      if [ "$runFigure" = 1 ]; then
        one=$(seconds "$cli" run "$file" --input "$work/$name/run_1.npy" --batch "$batch" \
          --threads "$threads")
        k=$(echo "$ours" | sed 's/.*"run_batches": \([0-9]*\).*/\1/')
        many=$(seconds "$cli" run "$file" --input "$work/$name/run_k.npy" --batch "$batch" \
          --threads "$threads")
        perSample=$(printf '%.4f' "$(echo "($many - $one) * 1000 / (($k - 1) * $batch)" | bc -l)")
        run="{\"run_ms_per_sample\": $perSample}"
      fi
      printf '%s\t%s\t%s\n' "$ours" "$theirs" "$run" >>"$rows"
      r=$((r + 1))
    done
    node -e '
      const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")
        .map((line) => line.split("\t").map((s) => JSON.parse(s)));
      const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
      const f = (x, w, n) => (x === undefined ? "-" : x.toFixed(n)).padStart(w);
      // Milliseconds: three decimals below 1 ms (tiny_bert), one above.
      const ms = (x, w) => f(x, w, x !== undefined && x < 1 ? 3 : 1);
      const [a0] = rows[0];
      const ours = median(rows.map(([a]) => a.forward_ms));
      const ort = median(rows.map(([, b]) => b.ort_ms));
      const ratio = median(rows.map(([a, b]) => a.forward_ms / b.ort_ms));
      const diff = Math.max(...rows.map(([, b]) => b.max_rel_diff));
      const vjp = median(rows.map(([a]) => a.vjp_ratio));
      const rss = Math.max(...rows.map(([a]) => a.peak_rss_mib));
      const ortRss = Math.max(...rows.map(([, b]) => b.ort_peak_rss_mib - b.node_baseline_rss_mib));
      const hasRun = rows[0][2].run_ms_per_sample !== undefined;
      const run = hasRun ? median(rows.map(([, , c]) => c.run_ms_per_sample)) : undefined;
      const runRatio = hasRun
        ? median(rows.map(([a, , c]) => c.run_ms_per_sample / (a.forward_ms / a.batch))) : undefined;
      const loop = median(rows.map(([a]) => a.loop_ms_per_sample));
      const runLoop = hasRun
        ? median(rows.map(([a, , c]) => c.run_ms_per_sample / a.loop_ms_per_sample)) : undefined;
      console.log(a0.model.padEnd(20), String(a0.threads).padStart(3), String(a0.batch).padStart(3),
                  ms(ours, 10), ms(ort, 10), f(ratio, 7, 2), diff.toExponential(2).padStart(12),
                  f(vjp, 6, 2), String(rss).padStart(8), String(ortRss).padStart(8),
                  ms(run, 10), f(runRatio, 8, 2), ms(loop, 10), f(runLoop, 9, 2));
    ' "$rows"
  done
done
