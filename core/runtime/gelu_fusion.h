// GELU as exporters write it before opset 20 (PyTorch's nn.GELU and F.gelu, BERT's
// intermediate layers): x * (1 + erf(x / sqrt 2)) * 0.5 in five ops, Div (or Mul by 1 / sqrt 2),
// Erf, Add 1, Mul by x and Mul by 0.5 (or x * 0.5 first, then the Mul). The executor runs the
// chain as one Gelu: one pass instead of five and no intermediate buffers; ONNX Runtime fuses the
// same pattern.
#pragma once

#include "core/graph/graph.h"

#include <optional>
#include <vector>

namespace qs::runtime {

/// A decomposed GELU found by matchDecomposedGelu.
struct GeluMatch {
    graph::ValueId input;
    graph::ValueId output;
    std::vector<graph::NodeId> nodes; ///< the chain's five ops
};

/// The GELU chain over `x`: x feeds exactly the scaling op and one Mul (by the gate, or by 0.5),
/// every other value inside feeds only the next op and none is a graph output, the constants are
/// one-element float initializers (sqrt 2 or 1 / sqrt 2 within 1e-4, 1 and 0.5 exactly) of rank at
/// most x's (0 when x's rank is unknown), which never broadcast x to a larger shape. nullopt
/// otherwise.
std::optional<GeluMatch> matchDecomposedGelu(const graph::Graph& g, graph::ValueId x);

} // namespace qs::runtime
