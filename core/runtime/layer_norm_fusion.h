// LayerNormalization as exporters write it before opset 17 (PyTorch's nn.LayerNorm, BERT's
// encoders): ReduceMean -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div -> Mul scale
// [-> Add bias], nine ops over the last axis. The executor runs such a chain as one
// LayerNormalization (one pass for the statistics, one for y) instead of nine passes and eight
// intermediate buffers; ONNX Runtime fuses the same pattern.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/tensor.h"

#include <optional>
#include <vector>

namespace qs::runtime {

/// A decomposed LayerNormalization found by matchDecomposedLayerNorm.
struct LayerNormMatch {
    graph::ValueId input;  ///< x, normalised over its last axis
    graph::ValueId scale;  ///< one element or [..., C] with leading 1s (C: x's last dim)
    graph::ValueId bias;   ///< like scale, or invalid when the chain ends at the Mul
    graph::ValueId output; ///< the value the last op of the chain produces
    float epsilon = 0.0F;
    std::vector<graph::NodeId> absorbed; ///< the chain's ops after the first ReduceMean
};

/// The chain that starts at ReduceMean node `head`, when every value inside it feeds only the
/// next op (the centred x feeds exactly its Pow and its Div) and none is a graph output, both
/// ReduceMeans keep the dims and reduce the last axis alone, the exponent and epsilon are
/// one-element float constants, and scale and bias have known shapes that broadcast without
/// changing the chain's shape when x's last dim equals their size (or they hold one element);
/// nullopt otherwise. x's shape and dtype may be unknown: layerNormChainRuns checks them.
std::optional<LayerNormMatch> matchDecomposedLayerNorm(const graph::Graph& g, graph::NodeId head);

/// True when the fused LayerNormalization of a match computes what the chain would for these
/// runtime inputs: float x of rank >= 1, float scale of one element or of x's last dim, bias (when
/// given) of the scale's size.
bool layerNormChainRuns(const Tensor& x, const Tensor& scale, const Tensor* bias);

} // namespace qs::runtime
