// MatMul by a weight followed by the Add of a bias, as exporters write a linear layer whose
// weight they keep as MatMul's B (PyTorch's nn.Linear on a 3-D input, the projections of every
// transformer): the executor adds the bias to MatMul's output in place, while it is in cache,
// instead of running an Add that reads it back and writes a second buffer.
#pragma once

#include "core/graph/graph.h"

#include <optional>

namespace qs::runtime {

/// The MatMul input of the executor's private node that carries the bias.
inline constexpr size_t kMatMulBiasInput = 2;

/// What matchMatMulBias found after a MatMul.
struct MatMulBiasMatch {
    graph::ValueId bias;   ///< a float initializer of shape [N]
    graph::ValueId output; ///< the Add's output
    graph::NodeId add;
};

/// MatMul node `matMul` with a 2-D float initializer B [K, N] whose output feeds only an Add of
/// a float initializer of shape [N] (either operand order; or an Identity's copy of one, whose
/// initializer the match returns) and is no graph output: adding [N] to [..., N] never changes
/// the shape. nullopt otherwise.
std::optional<MatMulBiasMatch> matchMatMulBias(const graph::Graph& g, graph::NodeId matMul);

} // namespace qs::runtime
