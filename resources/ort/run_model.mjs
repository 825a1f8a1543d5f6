// Runs an ONNX model in ONNX Runtime (npm onnxruntime-node) over .npy inputs in mini-batches and
// writes one output as .npy: the ONNX Runtime half of `quantscope-cli evaluate --ort`, which computes
// the metrics itself from the file written here.
//   node run_model.mjs --ort-dir DIR --out Y.npy [--output-index I] [--batch B]
//        [--optimization disabled|basic|extended|all] MODEL.onnx X.npy...
// One float32 X.npy per model input (in the model's input order, samples on axis 0), cast to
// float16 for float16 inputs; Y.npy is float32. Exits 77 when onnxruntime-node cannot be loaded from DIR.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
    const at = args.indexOf(name);
    if (at < 0) return fallback;
    return args.splice(at, 2)[1];
};
const ortDir = option('--ort-dir', '.');
const outPath = option('--out', null);
const outputIndex = Number(option('--output-index', '0'));
const batch = Number(option('--batch', '64'));
const optimization = option('--optimization', 'all'); // ORT's graphOptimizationLevel
const [modelPath, ...inputPaths] = args;

let ort;
try {
    ort = createRequire(path.join(path.resolve(ortDir), 'index.js'))('onnxruntime-node');
} catch (error) {
    console.error(`onnxruntime-node cannot be loaded from ${ortDir}: ${error.message}`);
    process.exit(77);
}

function readNpy(file) {
    const bytes = readFileSync(file);
    if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const headerStart = major === 1 ? 10 : 12;
    const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
    const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
    if (descr !== '<f4') throw new Error(`${file}: float32 expected, got ${descr}`);
    if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((d) => d.trim()).map(Number);
    const offset = headerStart + headerLength;
    const copy = bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + bytes.length);
    return { shape, data: new Float32Array(copy) };
}

function writeNpy(file, shape, data) {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
    const total = 10 + header.length + 1;
    header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
    const prefix = Buffer.alloc(10);
    prefix.write('\x93NUMPY', 0, 'latin1');
    prefix[6] = 1;
    prefix[7] = 0;
    prefix.writeUInt16LE(header.length, 8);
    writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function halfToFloat(bits) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/// Round-to-nearest-even float32 -> float16 bits.
function floatToHalf(value) {
    const view = new DataView(new ArrayBuffer(4));
    view.setFloat32(0, value);
    const bits = view.getUint32(0);
    const sign = (bits >>> 16) & 0x8000;
    const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
    let mantissa = bits & 0x7fffff;
    if (exponent >= 31) return sign | 0x7c00;
    if (exponent <= 0) {
        if (exponent < -10) return sign;
        mantissa |= 0x800000;
        const shift = 14 - exponent;
        const half = mantissa >> shift;
        const rest = mantissa & ((1 << shift) - 1);
        const midpoint = 1 << (shift - 1);
        return sign | (half + (rest > midpoint || (rest === midpoint && (half & 1)) ? 1 : 0));
    }
    const half = (exponent << 10) | (mantissa >> 13);
    const rest = mantissa & 0x1fff;
    return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1)) ? 1 : 0));
}

const inputs = inputPaths.map(readNpy);
const session = await ort.InferenceSession.create(modelPath, { graphOptimizationLevel: optimization });
if (inputs.length !== session.inputNames.length) {
    throw new Error(`${modelPath} has ${session.inputNames.length} input(s), got ${inputs.length} file(s)`);
}
const halfInputs = session.inputNames.map((name) =>
    (session.inputMetadata ?? []).find?.((m) => m.name === name)?.type === 'float16');
const samples = inputs[0].shape[0];
const outputName = session.outputNames[outputIndex];
const parts = [];
let rowShape = null;
for (let begin = 0; begin < samples; begin += batch) {
    const end = Math.min(samples, begin + batch);
    const feeds = {};
    session.inputNames.forEach((name, i) => {
        const per = inputs[i].data.length / samples;
        const rows = inputs[i].data.subarray(begin * per, end * per);
        const dims = [end - begin, ...inputs[i].shape.slice(1)];
        feeds[name] = halfInputs[i] ? new ort.Tensor('float16', Uint16Array.from(rows, floatToHalf), dims)
            : new ort.Tensor('float32', rows, dims);
    });
    const out = (await session.run(feeds))[outputName];
    rowShape = out.dims.slice(1);
    const half = out.type === 'float16' && out.data instanceof Uint16Array;
    parts.push(Float32Array.from(out.data, half ? halfToFloat : Number));
}
const joined = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
let at = 0;
for (const part of parts) {
    joined.set(part, at);
    at += part.length;
}
writeNpy(outPath, [samples, ...rowShape], joined);
