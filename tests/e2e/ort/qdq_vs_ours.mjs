// Runs one exported QDQ model in ONNX Runtime (npm onnxruntime-node) and in our executor
// (`quantscope-cli run`) on the same random inputs and compares the outputs:
//   node qdq_vs_ours.mjs --ort-dir DIR --cli QUANTSCOPE_CLI --info INFO.json --work DIR
//        [--samples N] [--tol T] [--optimization disabled|basic|extended|all] MODEL.qdq.onnx
// INFO.json is `quantscope-cli info --json MODEL.qdq.onnx`; dynamic dims are fed as 1 and the
// samples run one at a time. Per output it prints the max abs difference, the max |ours| and the
// relative difference (abs / max |ours|), which must stay within --tol ("none": only finite and
// the same size; for optimization levels where ORT rewrites the QDQ graph into integer kernels and
// int32 biases, which round differently). Exits 77 when onnxruntime-node cannot be loaded.
import { createRequire } from 'node:module';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const option = (name, fallback) => {
    const at = args.indexOf(name);
    if (at < 0) return fallback;
    return args.splice(at, 2)[1];
};
const ortDir = option('--ort-dir', '.');
const cli = option('--cli', 'quantscope-cli');
const infoPath = option('--info', null);
const workDir = option('--work', '.');
const samples = Number(option('--samples', '2'));
const tolOption = option('--tol', '1e-4');
const tol = tolOption === 'none' ? Infinity : Number(tolOption);
const optimization = option('--optimization', 'disabled');
const [modelPath] = args;

let ort;
try {
    ort = createRequire(path.join(path.resolve(ortDir), 'index.js'))('onnxruntime-node');
} catch (error) {
    console.log(`onnxruntime-node is not available in ${ortDir}: skipping (${error.message})`);
    process.exit(77);
}

// Deterministic pseudo-random numbers (mulberry32).
let seed = 2024;
function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// .npy version 1.0, little-endian float32, C order.
function writeNpy(file, dims, values) {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
    const total = 10 + header.length + 1;
    header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
    const prefix = Buffer.alloc(10);
    prefix.write('\x93NUMPY', 0, 'latin1');
    prefix[6] = 1;
    prefix[7] = 0;
    prefix.writeUInt16LE(header.length, 8);
    writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
        Buffer.from(values.buffer, values.byteOffset, values.byteLength)]));
}

function readNpyFloats(file) {
    const bytes = readFileSync(file);
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const start = (major === 1 ? 10 : 12) + headerLength;
    const header = bytes.subarray(major === 1 ? 10 : 12, start).toString('latin1');
    if (!header.includes("'<f4'")) throw new Error(`${file}: expected float32, header ${header}`);
    const body = bytes.subarray(start);
    return new Float32Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
}

const info = JSON.parse(readFileSync(infoPath, 'utf8'));
mkdirSync(workDir, { recursive: true });
const inputFiles = [];
const perSample = [];
for (const input of info.inputs) {
    if (input.dtype !== 'float') {
        console.error(`unsupported input type ${input.dtype}`);
        process.exit(1);
    }
    const dims = input.shape.split('x').map((d) => (/^\d+$/.test(d) ? Number(d) : 1));
    const count = dims.reduce((a, b) => a * b, 1);
    const values = Float32Array.from({ length: count * samples }, () => random() * 2 - 1);
    const file = path.join(workDir, `${input.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`);
    writeNpy(file, [samples * dims[0], ...dims.slice(1)], values);
    inputFiles.push(file);
    perSample.push({ name: input.name, dims, count, values });
}

const oursDir = path.join(workDir, 'ours');
try {
    execFileSync(cli, ['run', modelPath, '--input', ...inputFiles, '--batch', '1', '--out-dir', oursDir],
        { stdio: ['ignore', 'pipe', 'pipe'] });
} catch (error) {
    console.error(`quantscope-cli run failed: ${error.stderr}`);
    process.exit(1);
}

const session = await ort.InferenceSession.create(modelPath, { graphOptimizationLevel: optimization });
const ortOutputs = Object.fromEntries(session.outputNames.map((name) => [name, []]));
for (let s = 0; s < samples; ++s) {
    const feeds = {};
    for (const input of perSample) {
        feeds[input.name] = new ort.Tensor('float32',
            input.values.slice(s * input.count, (s + 1) * input.count), input.dims);
    }
    const result = await session.run(feeds);
    for (const name of session.outputNames) {
        for (const value of result[name].data) ortOutputs[name].push(Number(value));
    }
}

let failed = false;
for (const name of session.outputNames) {
    const ours = readNpyFloats(path.join(oursDir, `${name}.npy`));
    const theirs = ortOutputs[name];
    let maxAbs = 0;
    let maxRef = 0;
    let finite = true;
    for (let i = 0; i < ours.length; ++i) {
        finite &&= Number.isFinite(theirs[i]) && Number.isFinite(ours[i]);
        maxAbs = Math.max(maxAbs, Math.abs(ours[i] - theirs[i]));
        maxRef = Math.max(maxRef, Math.abs(ours[i]));
    }
    const relative = maxAbs / Math.max(maxRef, 1e-30);
    const ok = finite && ours.length === theirs.length && relative <= tol;
    failed ||= !ok;
    console.log(`output ${name} (${ours.length} values, ${samples} samples, ORT optimization ` +
        `${optimization}): max |ORT - ours| ${maxAbs.toExponential(3)}, max |ours| ` +
        `${maxRef.toExponential(3)}, relative ${relative.toExponential(3)} ${ok ? '<=' : '>'} ${tolOption}` +
        (finite ? '' : ' (non-finite values)'));
}
process.exit(failed ? 1 : 0);
