// Where a quantization point of a setup sits in the model graph: the tensor it quantizes and, for
// a pre-hook or a weight, the one edge (consumer node, input port) it applies to. A post-hook
// quantizes a value for all its consumers. Shared by the fake-quant simulation and the QDQ export
// so both put a quantizer in the same place.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <optional>

namespace qs::quantization {

struct InsertionTarget {
    graph::ValueId value;              ///< the activation or weight tensor
    std::optional<graph::Use> edge;    ///< pre-hooks and weights: the one consumer port affected
    std::optional<int64_t> weightAxis; ///< weights: the output-channel axis (non-negative)
};

/// Resolves `point` in `model`: a pre-hook is input `inputPortId` of `targetNodeName`; a post-hook
/// is output 0 of `targetNodeName` (NNCF's post-layer target), or runtime input i for
/// "nncf_model_input_<i>"; a weight is the first constant weight port of `targetNodeName`.
/// InvalidArgument naming the point when the node, port or weight is not in the model.
Result<InsertionTarget> resolveInsertionPoint(const graph::Graph& model,
                                              const InsertionPoint& point);

} // namespace qs::quantization
