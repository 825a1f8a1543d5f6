// ONNX Runtime's own per-node profile of REPEATS runs of MODEL on DIR/input.npy (what
// qs_runtime_bench wrote), THREADS intra-op threads; prints the profile file's path.
//
// usage: node ort_profile.js MODEL DIR REPEATS THREADS   (NODE_PATH must reach onnxruntime-node)
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim())
    .map((s) => parseInt(s, 10));
  const data = bytes.subarray(10 + headerLength);
  const buffer = data.buffer.slice(data.byteOffset, data.byteOffset + data.length);
  if (header.includes("'<f4'")) return { shape, type: 'float32', data: new Float32Array(buffer) };
  if (header.includes("'<i8'")) return { shape, type: 'int64', data: new BigInt64Array(buffer) };
  throw new Error(file + ': expected float32 or int64');
}

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
