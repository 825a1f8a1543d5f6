// ONNX Runtime's own per-node profile of REPEATS runs of MODEL on DIR/input.npy (what
// qs_runtime_bench wrote), THREADS intra-op threads; prints the profile file's path.
//
// usage: node ort_profile.js MODEL DIR REPEATS THREADS   (NODE_PATH must reach onnxruntime-node)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./npy.js');

async function main() {
  const [model, dir, repeatsText, threadsText] = process.argv.slice(2);
  const repeats = parseInt(repeatsText || '50', 10);
  const threads = parseInt(threadsText || '1', 10);
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-')), 'profile');
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    enableProfiling: true, profileFilePrefix: prefix,
  });
  const input = readNpy(path.join(dir, 'input.npy'));
  const feeds = { [session.inputNames[0]]: new ort.Tensor(input.type, input.data, input.shape) };
  for (let i = 0; i < repeats; ++i) {
    await session.run(feeds);
  }
  session.endProfiling();
  const files = fs.readdirSync(path.dirname(prefix)).map((f) => path.join(path.dirname(prefix), f));
  console.log(files[0]);
}

main().catch((e) => { console.error(e); process.exit(1); });
