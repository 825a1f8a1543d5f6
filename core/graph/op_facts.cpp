#include "core/graph/op_facts.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace qs::graph {
namespace {

using enum OpFamily;

OpFacts compute(std::string_view type, MacRule macs, PruningRole role) {
    return {.opType = type, .family = Compute, .macs = macs, .pruningRole = role};
}

OpFacts activation(std::string_view type, bool atomic, PruningRole role) {
    return {.opType = type, .family = Activation, .atomicActivation = atomic, .pruningRole = role};
}

OpFacts member(std::string_view type, OpFamily family, PruningRole role = PruningRole::Blocks) {
    return {.opType = type, .family = family, .pruningRole = role};
}

OpFacts arithmetic(std::string_view type, PruningRole role) {
    return {.opType = type, .family = Elementwise, .arithmetic = true, .pruningRole = role};
}

std::vector<OpFacts> buildTable() {
    using enum PruningRole;
    return {
        compute("Conv", MacRule::Conv, Mixes),
        compute("ConvTranspose", MacRule::ConvTranspose, Mixes),
        compute("Gemm", MacRule::MatMul, Mixes),
        compute("MatMul", MacRule::MatMul, Mixes),
        compute("Gather", MacRule::None, Blocks),
        compute("Einsum", MacRule::None, Blocks),
        activation("Relu", true, PerChannel),
        activation("Clip", true, PerChannel),
        activation("LeakyRelu", true, PerChannel),
        activation("ThresholdedRelu", true, Blocks),
        activation("Elu", true, Blocks),
        activation("PRelu", true, PerChannel),
        activation("Selu", true, Blocks),
        activation("Sigmoid", true, PerChannel),
        activation("HardSigmoid", true, PerChannel),
        activation("HardSwish", true, PerChannel),
        activation("Tanh", true, Blocks),
        activation("Softplus", true, Blocks),
        activation("Gelu", true, Blocks),
        activation("Mish", true, Blocks),
        activation("Softmax", false, Blocks),
        activation("Silu", false, Blocks),
        activation("Erf", false, Blocks),
        member("BatchNormalization", Normalization, PerChannel),
        member("LayerNormalization", Normalization),
        member("InstanceNormalization", Normalization),
        member("GroupNormalization", Normalization),
        member("LRN", Normalization),
        member("MaxPool", Pooling, PerChannel),
        member("AveragePool", Pooling, PerChannel),
        member("GlobalAveragePool", Pooling, PerChannel),
        member("GlobalMaxPool", Pooling, PerChannel),
        member("ReduceMean", Pooling),
        member("Resize", Pooling),
        member("Upsample", Pooling),
        arithmetic("Add", PerChannel),
        arithmetic("Sub", Blocks),
        arithmetic("Mul", PerChannel),
        arithmetic("Div", Blocks),
        member("Pow", Elementwise),
        member("Sqrt", Elementwise),
        member("Concat", Elementwise),
        member("Where", Elementwise),
        member("Max", Elementwise),
        member("Min", Elementwise),
        member("Reshape", Shape),
        member("Flatten", Shape),
        member("Transpose", Shape),
        member("Squeeze", Shape),
        member("Unsqueeze", Shape),
        member("Shape", Shape),
        member("Slice", Shape),
        member("Split", Shape),
        member("Expand", Shape),
        member("Cast", Shape),
        member("Identity", Shape, PerChannel),
        member("Constant", Shape),
        member("Dropout", Other, PerChannel),
    };
}

} // namespace

const std::vector<OpFacts>& opFactsTable() {
    static const std::vector<OpFacts> table = buildTable();
    return table;
}

const OpFacts& opFacts(std::string_view opType) {
    static const std::unordered_map<std::string, const OpFacts*> index = [] {
        std::unordered_map<std::string, const OpFacts*> out;
        for (const OpFacts& facts : opFactsTable()) {
            out.emplace(std::string(facts.opType), &facts);
        }
        return out;
    }();
    static const OpFacts unknown{};
    const auto it = index.find(std::string(opType));
    return it == index.end() ? unknown : *it->second;
}

} // namespace qs::graph
