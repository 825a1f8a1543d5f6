// ONNX Runtime side of the GEMM benchmark: for each JSON line of qs_gemm_bench (OURS), the model
// DIR/gemm_INDEX.onnx (C = MatMul(A, B), A [m x k] an initializer, B [k x n] the input, as
// gemm_bench.sh writes it), THREADS intra-op threads, B rotating over the line's `images` inputs
// as ours does; prints the line with ONNX Runtime's median milliseconds (MLAS's SGEMM).
//
// usage: node gemm_ort.js OURS DIR THREADS   (NODE_PATH must reach onnxruntime-node)
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const [oursPath, dir, threadsText] = process.argv.slice(2);
  const threads = parseInt(threadsText || '1', 10);
  const lines = fs.readFileSync(oursPath, 'utf8').split('\n').filter((l) => l.trim());
  for (let index = 0; index < lines.length; ++index) {
    const shape = JSON.parse(lines[index]);
    const session = await ort.InferenceSession.create(path.join(dir, `gemm_${index}.onnx`), {
      intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    });
    const feeds = [];
    for (let i = 0; i < shape.images; ++i) {
      const data = new Float32Array(shape.k * shape.n);
      for (let j = 0; j < data.length; ++j) {
        data[j] = Math.random() * 2 - 1;
      }
      feeds.push({ [session.inputNames[0]]: new ort.Tensor('float32', data, [shape.k, shape.n]) });
    }
    for (const feed of feeds) {
      await session.run(feed);
    }
    const flop = 2 * shape.m * shape.k * shape.n;
    const rounds = Math.max(1, Math.floor(4e9 / flop / shape.images / 20));
    const times = [];
    for (let t = 0; t < 7; ++t) {
      const start = process.hrtime.bigint();
      for (let r = 0; r < rounds; ++r) {
        for (const feed of feeds) {
          await session.run(feed);
        }
      }
      times.push(Number(process.hrtime.bigint() - start) / 1e6 / (rounds * shape.images));
    }
    times.sort((a, b) => a - b);
    const ms = times[3];
    console.log(JSON.stringify({ ...shape, ms, gflops: flop / ms / 1e6 }));
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
