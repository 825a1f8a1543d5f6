#include "core/pruning/simd_size.h"

#include "core/graph/metatype.h"

#include <algorithm>

namespace qs::pruning {

int64_t simdSizeOf(const quantization::QuantizerConfig& config) {
    if (config.simdSize > 0) {
        return config.simdSize;
    }
    if (config.numBits <= 2) {
        return 128;
    }
    if (config.numBits <= 4) {
        return 64;
    }
    return 32;
}

int64_t nodeSimdSize(const quantization::HWConfig& hw, const graph::Graph& graph,
                     graph::NodeId node) {
    const graph::Metatype& metatype = graph::metatypeOf(graph, node);
    const quantization::HWConfigOp* op =
        metatype.hwName.empty() ? nullptr : hw.effectiveOp(metatype.hwName);
    if (op == nullptr || !op->hasWeights || op->weights.empty()) {
        return kDefaultSimdSize;
    }
    int64_t simd = simdSizeOf(op->weights.front());
    for (const quantization::QuantizerConfig& config : op->weights) {
        simd = std::min(simd, simdSizeOf(config));
    }
    return simd;
}

std::vector<int64_t> simdSizesByNode(const quantization::HWConfig& hw, const graph::Graph& graph,
                                     int64_t override) {
    std::vector<int64_t> sizes(graph.numNodeSlots(), 1);
    for (const graph::NodeId id : graph.nodeIds()) {
        sizes[id.index()] = override > 0 ? override : nodeSimdSize(hw, graph, id);
    }
    return sizes;
}

} // namespace qs::pruning
