// readNpy for the ONNX Runtime side of the benchmarks: a float32 or int64 .npy (what
// qs_runtime_bench writes) as { shape, type, data }.
'use strict';
const fs = require('fs');

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

module.exports = { readNpy };
