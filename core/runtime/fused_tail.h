// Element-wise tails the executor folds into a Conv: the chains of cheap per-element ops that
// exporters put after a convolution, such as SiLU as Sigmoid + Mul (EfficientNet), decomposed
// HardSwish as Add 3, Clip [0, 6], Mul, Div 6, and scalar affine blocks as Mul and Add by one
// learned number (PaddlePaddle's PP-LCNet). Unfused, each op is one more pass over the
// activation and one more live buffer of its size; fused, the Conv applies the whole chain to
// its output in one cache-sized pass, each step with the arithmetic of the op it replaces.
//
// A tail is a small program over one register v (the value flowing down the chain) and one saved
// copy s, for the self-gated activations y = v * g(v): `save` copies v to s, the gate's own ops
// run on v, and `mulSaved` forms s * v. Gates do not nest.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace qs::runtime {

/// The attribute of the executor's private Conv node that carries its tail (encodeTail).
inline constexpr std::string_view kFusedTailAttr = "qs_fused_tail";

enum class TailOp : int {
    mulConst,     ///< v = v * a (Mul by a one-element constant)
    addConst,     ///< v = v + a
    subConst,     ///< v = v - a
    subFromConst, ///< v = a - v
    divConst,     ///< v = v / a
    clamp,        ///< v = min(max(v, a), b) (Relu, Clip with constant bounds)
    hardSigmoid,  ///< v = max(0, min(1, a v + b)) (HardSigmoid's alpha and beta)
    sigmoid,      ///< v = 1 / (1 + exp(-v))
    save,         ///< s = v
    mulSaved,     ///< v = s * v (the Mul closing a self-gated activation)
};

struct TailStep {
    TailOp op = TailOp::mulConst;
    float a = 0.0F;
    float b = 0.0F;

    bool operator==(const TailStep&) const = default;
};

using FusedTail = std::vector<TailStep>;

/// A tail as the floats of a node attribute: three per step (op, a, b).
std::vector<float> encodeTail(const FusedTail& tail);

/// The tail of a node attribute; an error for a malformed one (wrong length, unknown op, a
/// mulSaved without a save before it).
Result<FusedTail> decodeTail(std::span<const float> encoded);

/// The only consumer of `id`, when it has exactly one and `id` is no graph output: a value that
/// fusion may leave unmaterialised (the executor's Conv epilogue uses it too).
const graph::Node* soleConsumer(const graph::Graph& g, graph::ValueId id);

/// The number held by input `port` of `node` when it is a one-element float initializer that
/// broadcasts against a value of rank `rank` without changing its shape.
std::optional<float> scalarConstant(const graph::Graph& g, const graph::Node& node, size_t port,
                                    size_t rank);

/// The bounds a Relu, or a Clip whose bounds are attributes (before opset 11) or one-element
/// float constants of rank <= `rank`, clamps to; nullopt for any other node.
std::optional<std::pair<float, float>> clampBounds(const graph::Graph& g, const graph::Node& node,
                                                   size_t rank);

/// What matchFusedTail found after a value: the steps, the nodes they replace (in graph order)
/// and the value the last of them produces.
struct TailMatch {
    FusedTail steps;
    std::vector<graph::NodeId> absorbed;
    graph::ValueId last;
};

/// The longest tail that starts at `from`, a float value of rank `rank`: every value inside it
/// feeds only the next op of the chain (a gate's input feeds exactly the gate and its closing
/// Mul) and none is a graph output, so nothing else needs the values that fusion never
/// materialises. Constants are one-element float initializers of rank <= `rank`, so they never
/// change the value's shape. Empty steps when nothing follows that can be fused.
TailMatch matchFusedTail(const graph::Graph& g, graph::ValueId from, size_t rank);

/// Applies `tail` in place to `count` floats, in blocks that stay in L1, on every thread.
void applyFusedTail(const FusedTail& tail, float* y, int64_t count);

/// Applies `tail` in place to `count` floats, in L1-sized blocks, on the calling thread only (for
/// kernels that run it on each piece of their output while that piece is in cache).
void applyFusedTailHere(const FusedTail& tail, float* y, int64_t count);

/// The reference: one element at a time, the sigmoid in double.
void applyFusedTailReference(const FusedTail& tail, float* y, int64_t count);

} // namespace qs::runtime
