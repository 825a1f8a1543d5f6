// Where a quantizer of a setup acts in the model graph: the value it quantizes and, for a pre-hook,
// the one (node, input port) edge it sits on. Calibration observes these values; the fake-quant
// rewrite and the QDQ export insert quantizers there. Post-hooks act on output 0 of their node
// (NNCF's post-hook target point); "nncf_model_input_<i>" names the i-th runtime input.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <cstdint>
#include <optional>

namespace qs::quantization {

struct ResolvedInsertionPoint {
    graph::ValueId value;              ///< the tensor the quantizer sees
    std::optional<graph::NodeId> node; ///< pre-hook and weight: the node whose input is quantized
    uint32_t port = 0;                 ///< pre-hook and weight: that node's input port
    std::optional<int64_t> weightAxis; ///< weight: output-channel axis, normalised to >= 0
};

/// Resolves `point` in `model`; an unknown node, port or a weight-less node is an error naming it.
Result<ResolvedInsertionPoint> resolveInsertionPoint(const graph::Graph& model,
                                                     const InsertionPoint& point);

} // namespace qs::quantization
