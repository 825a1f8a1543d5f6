// ONNX Runtime side of the executor benchmark: THREADS intra-op threads (default 1), the same
// input.npy the C++ benchmark wrote (float32 or int64, its batch), median latency over REPEATS
// runs, the difference to our output.npy — max |ours - ort| / max |ort| (random-weight models can
// have tiny outputs, so an element-wise relative error would divide by near-zero values) — and
// the peak RSS of the process, with what node itself held before ONNX Runtime was loaded.
//
// usage: node ort_bench.js MODEL DIR [REPEATS] [THREADS]   (NODE_PATH must reach onnxruntime-node)
'use strict';
const path = require('path');

const baselineRssMib = process.memoryUsage().rss / (1024 * 1024);
const ort = require('onnxruntime-node');
const { readNpy } = require('./npy.js');

async function main() {
  const [model, dir, repeatsText, threadsText] = process.argv.slice(2);
  const repeats = parseInt(repeatsText || '10', 10);
  const threads = parseInt(threadsText || '1', 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const input = readNpy(path.join(dir, 'input.npy'));
  const ours = readNpy(path.join(dir, 'output.npy'));
  const feeds = { [session.inputNames[0]]: new ort.Tensor(input.type, input.data, input.shape) };
  let result = await session.run(feeds);
  // At least REPEATS runs and 250 ms of them (2000 runs at most), as qs_runtime_bench times ours.
  const times = [];
  let measuredMs = 0;
  for (let i = 0; i < repeats || (measuredMs < 250 && i < 2000); ++i) {
    const start = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    measuredMs += times[times.length - 1];
  }
  times.sort((a, b) => a - b);
  const theirs = result[session.outputNames[0]].data;
  let maxDiff = 0;
  let maxAbs = 0;
  for (let i = 0; i < theirs.length; ++i) {
    maxDiff = Math.max(maxDiff, Math.abs(ours.data[i] - theirs[i]));
    maxAbs = Math.max(maxAbs, Math.abs(theirs[i]));
  }
  const maxRel = maxAbs > 0 ? maxDiff / maxAbs : maxDiff;
  const peakRssMib = process.resourceUsage().maxRSS / 1024;
  console.log(JSON.stringify({
    ort_ms: times[Math.floor(times.length / 2)], max_rel_diff: maxRel,
    ort_peak_rss_mib: Math.round(peakRssMib), node_baseline_rss_mib: Math.round(baselineRssMib),
  }));
}

main().catch((e) => { console.error(e); process.exit(1); });
