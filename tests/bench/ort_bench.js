// ONNX Runtime side of the executor benchmark: one intra-op thread, the same input.npy the
// C++ benchmark wrote, median latency over REPEATS runs, and the difference to our output.npy:
// max |ours - ort| / max |ort| (random-weight models can have tiny outputs, so an element-wise
// relative error would divide by near-zero values).
//
// usage: node ort_bench.js MODEL DIR [REPEATS]   (NODE_PATH must reach onnxruntime-node)
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  const headerLength = bytes.readUInt16LE(8);
  const header = bytes.subarray(10, 10 + headerLength).toString('latin1');
  if (!header.includes("'<f4'")) throw new Error(file + ': expected float32');
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').filter((s) => s.trim())
    .map((s) => parseInt(s, 10));
  const data = bytes.subarray(10 + headerLength);
  const floats = new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
  return { shape, floats };
}

async function main() {
  const [model, dir, repeatsText] = process.argv.slice(2);
  const repeats = parseInt(repeatsText || '10', 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
  });
  const input = readNpy(path.join(dir, 'input.npy'));
  const ours = readNpy(path.join(dir, 'output.npy'));
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input.floats, input.shape) };
  let result = await session.run(feeds);
  const times = [];
  for (let i = 0; i < repeats; ++i) {
    const start = process.hrtime.bigint();
    result = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  const theirs = result[session.outputNames[0]].data;
  let maxDiff = 0;
  let maxAbs = 0;
  for (let i = 0; i < theirs.length; ++i) {
    maxDiff = Math.max(maxDiff, Math.abs(ours.floats[i] - theirs[i]));
    maxAbs = Math.max(maxAbs, Math.abs(theirs[i]));
  }
  const maxRel = maxAbs > 0 ? maxDiff / maxAbs : maxDiff;
  console.log(JSON.stringify({ ort_ms: times[Math.floor(times.length / 2)], max_rel_diff: maxRel }));
}

main().catch((e) => { console.error(e); process.exit(1); });
