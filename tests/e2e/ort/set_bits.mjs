// Rewrites the bit widths of a setup JSON (`quantize --setup-out`) for mixed-precision tests:
//   node set_bits.mjs IN.json OUT.json ACTIVATION_BITS WEIGHT_BITS
// Each list ("8,6,4,3") is cycled over the quantizers by id; members of a unified-scale group
// take the bits of their group's first member, so a group stays on one grid.
import { readFileSync, writeFileSync } from 'node:fs';

const [inPath, outPath, activationList, weightList] = process.argv.slice(2);
const setup = JSON.parse(readFileSync(inPath, 'utf8'));
const activationBits = activationList.split(',').map(Number);
const weightBits = weightList.split(',').map(Number);
const representative = {};
for (const members of Object.values(setup.unified_scale_groups ?? {})) {
    for (const member of members) representative[member] = members[0];
}
const counters = { activation: 0, weight: 0 };
const chosen = {};
for (const id of Object.keys(setup.quantization_points).sort((a, b) => Number(a) - Number(b))) {
    const point = setup.quantization_points[id];
    const isWeight = point.qip_class === 'WeightQuantizationInsertionPoint';
    const key = representative[id] ?? id;
    if (!(key in chosen)) {
        const list = isWeight ? weightBits : activationBits;
        const counter = isWeight ? 'weight' : 'activation';
        chosen[key] = list[counters[counter]++ % list.length];
    }
    point.qconfig.num_bits = chosen[key];
}
writeFileSync(outPath, JSON.stringify(setup, null, 2));
