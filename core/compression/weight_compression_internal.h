// Small helpers the plan and apply steps of weight compression share (not part of the API).
#pragma once

#include "core/compression/integer_quantizer.h"
#include "core/compression/weight_compression.h"

#include <span>
#include <string>

namespace qs::compression::internal {

/// "node 'fc' (MatMul), weight 'fc.weight'" for errors.
inline std::string layerName(const WeightDecision& decision) {
    return "node '" + decision.nodeName + "' (" + decision.opType + "), weight '" +
           decision.valueName + "'";
}

inline Result<WeightLayout> layoutOf(const WeightDecision& decision) {
    return makeWeightLayout(decision.dims, decision.channelAxis);
}

inline std::span<const float> floatsOf(const graph::Graph& graph, graph::ValueId value) {
    return graph.value(value).initializer->as<float>();
}

} // namespace qs::compression::internal
