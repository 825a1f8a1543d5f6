// Runs two ONNX models in ONNX Runtime (npm onnxruntime-node) on the same random inputs and
// compares their outputs: max |test - ref| / max |ref| per output must stay within --tol.
//   node run_compare.mjs --ort-dir DIR --info INFO.json REF.onnx TEST.onnx [--tol T] [--int-max N]
// INFO.json is `quantscope-cli info --json REF.onnx`; dynamic dims are fed as 1. Float16 inputs
// and outputs (convert-fp16 without --keep-io-types) are converted on the way. Exits 77 when
// onnxruntime-node cannot be loaded.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
    const at = args.indexOf(name);
    if (at < 0) return fallback;
    return args.splice(at, 2)[1];
};
const ortDir = option('--ort-dir', '.');
const infoPath = option('--info', null);
const tol = Number(option('--tol', '1e-5'));
const intMax = Number(option('--int-max', '10'));
const optimization = option('--optimization', 'all');
const accuracyLevel = option('--matmulnbits-accuracy', '0');
const [refPath, testPath] = args;

let ort;
try {
    ort = createRequire(path.join(path.resolve(ortDir), 'index.js'))('onnxruntime-node');
} catch (error) {
    console.log(`onnxruntime-node is not available in ${ortDir}: skipping (${error.message})`);
    process.exit(77);
}

function halfToFloat(bits) {
    const sign = bits & 0x8000 ? -1 : 1;
    const exponent = (bits >> 10) & 0x1f;
    const fraction = bits & 0x3ff;
    if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
    if (exponent === 31) return fraction ? NaN : sign * Infinity;
    return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function floatToHalf(value) {
    const buffer = new DataView(new ArrayBuffer(4));
    buffer.setFloat32(0, value);
    const bits = buffer.getUint32(0);
    const sign = (bits >>> 16) & 0x8000;
    const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
    const mantissa = bits & 0x7fffff;
    if (exponent <= 0) return sign; // inputs here are in [-1, 1): no subnormals needed
    if (exponent >= 31) return sign | 0x7c00;
    const rounded = (exponent << 10) + (mantissa >> 13) + ((mantissa >> 12) & 1);
    return sign | rounded;
}

function toFloats(tensor) {
    if (tensor.type === 'float16') {
        const data = tensor.data;
        if (data instanceof Uint16Array) return Float64Array.from(data, halfToFloat);
        return Float64Array.from(data);
    }
    return Float64Array.from(tensor.data, Number);
}

// Deterministic pseudo-random numbers (mulberry32).
let seed = 12345;
function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const info = JSON.parse(readFileSync(infoPath, 'utf8'));
const inputs = {};
for (const input of info.inputs) {
    const dims = input.shape.split('x').map((d) => (/^\d+$/.test(d) ? Number(d) : 1));
    const count = dims.reduce((a, b) => a * b, 1);
    if (input.dtype === 'int64') {
        inputs[input.name] = new ort.Tensor('int64',
            BigInt64Array.from({ length: count }, () => BigInt(Math.floor(random() * intMax))), dims);
    } else if (input.dtype === 'float') {
        inputs[input.name] = { dims, values: Float32Array.from({ length: count }, () => random() * 2 - 1) };
    } else {
        console.error(`unsupported input type ${input.dtype}`);
        process.exit(1);
    }
}

function feedsFor(session) {
    const feeds = {};
    const metadata = session.inputMetadata ?? [];
    for (const [name, value] of Object.entries(inputs)) {
        if (value instanceof ort.Tensor) {
            feeds[name] = value;
            continue;
        }
        const meta = metadata.find?.((m) => m.name === name);
        if (meta && meta.type === 'float16') {
            feeds[name] = new ort.Tensor('float16', Uint16Array.from(value.values, floatToHalf), value.dims);
        } else {
            feeds[name] = new ort.Tensor('float32', value.values, value.dims);
        }
    }
    return feeds;
}

// ORT fuses DequantizeLinear(int4) + MatMul into MatMulNBits at the 'extended' level; its default
// accuracy level 4 quantizes activations to int8. Level 0 keeps float activations.
const sessionOptions = {
    graphOptimizationLevel: optimization,
    extra: { session: { qdq_matmulnbits_accuracy_level: accuracyLevel } },
};
const ref = await ort.InferenceSession.create(refPath, sessionOptions);
const test = await ort.InferenceSession.create(testPath, sessionOptions);
const refOut = await ref.run(feedsFor(ref));
const testOut = await test.run(feedsFor(test));
let failed = false;
for (const name of ref.outputNames) {
    if (!(name in testOut)) {
        console.log(`output ${name}: missing from ${testPath}`);
        failed = true;
        continue;
    }
    const a = toFloats(refOut[name]);
    const b = toFloats(testOut[name]);
    let maxAbs = 0;
    let maxRef = 0;
    for (let i = 0; i < a.length; ++i) {
        maxAbs = Math.max(maxAbs, Math.abs(a[i] - b[i]));
        maxRef = Math.max(maxRef, Math.abs(a[i]));
    }
    const relative = maxAbs / Math.max(maxRef, 1e-30);
    const ok = a.length === b.length && relative <= tol;
    failed ||= !ok;
    console.log(`output ${name} (${testOut[name].type}, ${a.length} values): max abs error ` +
        `${maxAbs.toExponential(3)}, relative ${relative.toExponential(3)} ${ok ? '<=' : '>'} ${tol}`);
}
process.exit(failed ? 1 : 0);
