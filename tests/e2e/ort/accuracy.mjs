// Top-1 accuracy of classifier models in ONNX Runtime (npm onnxruntime-node) on a labelled .npy
// dataset, to check `quantscope-cli evaluate` against an independent runtime:
//   node accuracy.mjs --ort-dir DIR --inputs X.npy --labels Y.npy [--batch B]
//        [--optimization disabled|basic|extended|all] MODEL.onnx...
// X.npy: float32, samples on axis 0, fed to the model's only input; Y.npy: int64 class ids.
// Prints one line per model, "MODEL: top-1 C/N", with argmax ties going to the lower class id as in
// core/report/accuracy.h. Exits 77 when onnxruntime-node cannot be loaded.
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
const inputsPath = option('--inputs', null);
const labelsPath = option('--labels', null);
const batch = Number(option('--batch', '64'));
const optimization = option('--optimization', 'all');
const models = args;

let ort;
try {
    ort = createRequire(path.join(path.resolve(ortDir), 'index.js'))('onnxruntime-node');
} catch (error) {
    console.log(`onnxruntime-node is not available in ${ortDir}: skipping (${error.message})`);
    process.exit(77);
}

/// A C-order .npy (format 1.0-3.0) as { descr, shape, data: ArrayBuffer slice }.
function readNpy(file) {
    const bytes = readFileSync(file);
    if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const headerStart = major === 1 ? 10 : 12;
    const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
    const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
    if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order`);
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').filter((d) => d.trim()).map(Number);
    const offset = headerStart + headerLength;
    const data = bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + bytes.length);
    return { descr, shape, data };
}

const x = readNpy(inputsPath);
const y = readNpy(labelsPath);
if (x.descr !== '<f4') throw new Error(`${inputsPath}: float32 expected, got ${x.descr}`);
if (y.descr !== '<i8') throw new Error(`${labelsPath}: int64 expected, got ${y.descr}`);
const inputs = new Float32Array(x.data);
const labels = new BigInt64Array(y.data);
const samples = x.shape[0];
const perSample = inputs.length / samples;
if (labels.length !== samples) throw new Error(`${labels.length} labels for ${samples} samples`);

for (const model of models) {
    const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: optimization });
    let correct = 0;
    for (let begin = 0; begin < samples; begin += batch) {
        const end = Math.min(samples, begin + batch);
        const feed = new ort.Tensor('float32', inputs.subarray(begin * perSample, end * perSample),
            [end - begin, ...x.shape.slice(1)]);
        const out = await session.run({ [session.inputNames[0]]: feed });
        const scores = out[session.outputNames[0]].data;
        const classes = scores.length / (end - begin);
        for (let n = 0; n < end - begin; ++n) {
            let best = 0;
            for (let c = 1; c < classes; ++c) {
                if (scores[n * classes + c] > scores[n * classes + best]) best = c;
            }
            correct += BigInt(best) === labels[begin + n] ? 1 : 0;
        }
    }
    console.log(`${model}: top-1 ${correct}/${samples}`);
}
