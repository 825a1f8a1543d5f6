// HW fused patterns (reference/nncf-quantization.md §1.1), the table of NNCF's ONNX backend
// (onnx/hardware/fused_patterns.py at ef8e1dbd), built from the GraphPattern combinators and
// matched strictly (graph_pattern.h). A match collapses into one operator whose inputs are the
// pre-hooks of its first node and whose output is its last node's post-hook; the hooks in between
// disappear. Patterns are tried longest first; each model node joins at most one.

#include "core/quantization/graph_pattern.h"
#include "core/quantization/insertion_point_graph.h"

#include <algorithm>
#include <functional>

namespace qs::quantization {

namespace {
using graph::NodeId;
using Types = std::vector<std::string_view>;

// NNCF's metatype groups (onnx/graph/metatypes/groups.py).
const Types kLinear = {"ONNXConvolutionMetatype",
                       "ONNXDepthwiseConvolutionMetatype",
                       "ONNXConvolutionTransposeMetatype",
                       "ONNXDeformableConvolutionMetatype",
                       "ONNXGemmMetatype",
                       "ONNXMatMulMetatype"};
const Types kAtomicActivations = {
    "ONNXReluMetatype",        "ONNXLeakyReluMetatype", "ONNXThresholdedReluMetatype",
    "ONNXEluMetatype",         "ONNXPReluMetatype",     "ONNXSigmoidMetatype",
    "ONNXHardSigmoidMetatype", "ONNXHardSwishMetatype", "ONNXSeluMetatype"};
const Types kArithmetic = {"ONNXAddLayerMetatype", "ONNXSubMetatype", "ONNXMulLayerMetatype",
                           "ONNXDivLayerMetatype"};
const Types kBatchNorm = {"ONNXBatchNormMetatype"};
constexpr std::string_view kAdd = "ONNXAddLayerMetatype";
constexpr std::string_view kSub = "ONNXSubMetatype";
constexpr std::string_view kMul = "ONNXMulLayerMetatype";
constexpr std::string_view kDiv = "ONNXDivLayerMetatype";

GraphPattern op(Types types) {
    return GraphPattern::node(std::move(types));
}

GraphPattern joined(GraphPattern first, const GraphPattern& second) {
    first.join(second);
    return first;
}

/// x → ReduceMean → Sub(x, ·) → Pow → ReduceMean → Add → Sqrt → Div(Sub, ·): a decomposed
/// LayerNorm without its affine part.
GraphPattern mvn() {
    GraphPattern p;
    const int in = p.addNode({PatternNodeKind::NonPattern, {}, false});
    const int mean = p.addNode({PatternNodeKind::Op, {"ONNXReduceMeanMetatype"}, false});
    const int sub = p.addNode({PatternNodeKind::Op, {kSub}, false});
    const int pow = p.addNode({PatternNodeKind::Op, {"ONNXPowMetatype"}, false});
    const int var = p.addNode({PatternNodeKind::Op, {"ONNXReduceMeanMetatype"}, false});
    const int add = p.addNode({PatternNodeKind::Op, {kAdd}, false});
    const int sqrt = p.addNode({PatternNodeKind::Op, {"ONNXSqrtMetatype"}, false});
    const int div = p.addNode({PatternNodeKind::Op, {kDiv}, false});
    for (const auto& [from, to] : {std::pair{in, mean},
                                   {mean, sub},
                                   {in, sub},
                                   {sub, pow},
                                   {pow, var},
                                   {var, add},
                                   {add, sqrt},
                                   {sqrt, div},
                                   {sub, div}}) {
        p.addEdge(from, to);
    }
    return p;
}

/// x → Div|Mul → Erf → Add|Sub → Mul|Div(x, ·): GELU spelled out.
GraphPattern gelu() {
    GraphPattern p;
    const int in = p.addNode({PatternNodeKind::NonPattern, {}, false});
    const int div = p.addNode({PatternNodeKind::Op, {kDiv, kMul}, false});
    const int erf = p.addNode({PatternNodeKind::Op, {"ONNXErfMetatype"}, false});
    const int add = p.addNode({PatternNodeKind::Op, {kAdd, kSub}, false});
    const int mul = p.addNode({PatternNodeKind::Op, {kMul, kDiv}, false});
    for (const auto& [from, to] :
         {std::pair{in, div}, {div, erf}, {erf, add}, {add, mul}, {in, mul}}) {
        p.addEdge(from, to);
    }
    return p;
}

/// x → Mul → Add|Sub.
GraphPattern scaleShift() {
    GraphPattern p;
    const int in = p.addNode({PatternNodeKind::NonPattern, {}, false});
    const int mul = p.addNode({PatternNodeKind::Op, {kMul}, false});
    const int add = p.addNode({PatternNodeKind::Op, {kAdd, kSub}, false});
    p.addEdge(in, mul);
    p.addEdge(mul, add);
    return p;
}

/// Add|Sub → Mul|Div.
GraphPattern shiftScale() {
    return joined(op({kAdd, kSub}), op({kMul, kDiv}));
}

/// x → Sigmoid|HardSigmoid → Mul(x, ·).
GraphPattern swish(std::string_view gate) {
    GraphPattern p;
    const int in = p.addNode({PatternNodeKind::NonPattern, {}, false});
    const int sigmoid = p.addNode({PatternNodeKind::Op, {gate}, false});
    const int mul = p.addNode({PatternNodeKind::Op, {kMul}, false});
    p.addEdge(in, sigmoid);
    p.addEdge(sigmoid, mul);
    p.addEdge(in, mul);
    return p;
}

/// any → Add → Relu(Clip) → Mul(any, ·): hard-swish without the division by 6.
GraphPattern hswishWithoutDenominator() {
    GraphPattern p;
    const int any = p.addNode({PatternNodeKind::Any, {}, false});
    const int add = p.addNode({PatternNodeKind::Op, {kAdd}, false});
    const int relu = p.addNode({PatternNodeKind::Op, {"ONNXReluMetatype"}, false});
    const int mul = p.addNode({PatternNodeKind::Op, {kMul}, false});
    p.addEdge(any, add);
    p.addEdge(add, relu);
    p.addEdge(relu, mul);
    p.addEdge(any, mul);
    return p;
}

GraphPattern hswish() {
    return joined(hswishWithoutDenominator(), op({kDiv}));
}

GraphPattern modelInput() {
    return op({"InputNoopMetatype"});
}

/// An atomic activation or one of the spelled-out ones.
GraphPattern activations() {
    GraphPattern p = op(kAtomicActivations);
    p.addAlternative(swish("ONNXSigmoidMetatype"));
    p.addAlternative(swish("ONNXHardSigmoidMetatype"));
    p.addAlternative(hswish());
    p.addAlternative(hswishWithoutDenominator());
    p.addAlternative(gelu());
    return p;
}

GraphPattern chain(std::initializer_list<GraphPattern> parts) {
    auto it = parts.begin();
    GraphPattern p = *it;
    for (++it; it != parts.end(); ++it) {
        p.join(*it);
    }
    return p;
}

GraphPattern linearArithmetic() {
    GraphPattern p;
    for (const int degree : {1, 2}) {
        GraphPattern linear = op(kLinear);
        linear.joinParallel(op(kArithmetic), degree);
        p.addAlternative(linear);
    }
    return p;
}

struct FusedPattern {
    std::string_view name;
    std::function<GraphPattern()> create;
    bool allDevices = true; ///< false: CPU/GPU/ANY only
};

/// NNCF's registry, in registration order (it decides ties between patterns of equal length).
const std::vector<FusedPattern>& fusedPatternTable() {
    static const std::vector<FusedPattern> kTable = {
        {"mvn", mvn},
        {"mvn_scale_shift", [] { return joined(mvn(), scaleShift()); }},
        {"gelu", gelu},
        {"scale_shift", scaleShift},
        {"shift_scale", shiftScale},
        {"swish_with_sigmoid", [] { return swish("ONNXSigmoidMetatype"); }},
        {"swish_with_hard_sigmoid", [] { return swish("ONNXHardSigmoidMetatype"); }},
        {"hswish_activation_without_denominator", hswishWithoutDenominator},
        {"hswish_activation", hswish},
        {"input_scale_shift", [] { return joined(modelInput(), scaleShift()); }},
        {"input_shift_scale", [] { return joined(modelInput(), shiftScale()); }},
        {"input_processing",
         [] {
             return joined(modelInput(), op({kAdd, kMul}));
         }},
        {"activations_batch_norm", [] { return joined(activations(), op(kBatchNorm)); }},
        {"activations_scale_shift", [] { return joined(activations(), scaleShift()); }},
        {"arithmetic_batch_norm", [] { return joined(op(kArithmetic), op(kBatchNorm)); }},
        {"arithmetic_activations", [] { return joined(op(kArithmetic), activations()); }},
        {"arithmetic_scale_shift", [] { return joined(op(kArithmetic), scaleShift()); }},
        {"arithmetic_batch_norm_activations",
         [] {
             return chain({op(kArithmetic), op(kBatchNorm), activations()});
         }},
        {"arithmetic_scale_shift_activations",
         [] {
             return chain({op(kArithmetic), scaleShift(), activations()});
         }},
        {"arithmetic_activations_batch_norm",
         [] {
             return chain({op(kArithmetic), activations(), op(kBatchNorm)});
         }},
        {"arithmetic_activations_scale_shift",
         [] {
             return chain({op(kArithmetic), activations(), scaleShift()});
         }},
        {"batch_norm_activations", [] { return joined(op(kBatchNorm), activations()); }},
        {"scale_shift_activations", [] { return joined(scaleShift(), activations()); }},
        {"linear_arithmetic", linearArithmetic},
        {"linear_batch_norm", [] { return joined(op(kLinear), op(kBatchNorm)); }},
        {"linear_activations", [] { return joined(op(kLinear), activations()); }},
        {"linear_batch_norm_activations",
         [] {
             return chain({op(kLinear), op(kBatchNorm), activations()});
         }},
        {"linear_scale_shift_activations",
         [] {
             return chain({op(kLinear), scaleShift(), activations()});
         }},
        {"linear_activations_batch_norm",
         [] {
             return chain({op(kLinear), activations(), op(kBatchNorm)});
         }},
        {"linear_activations_scale_shift",
         [] {
             return chain({op(kLinear), activations(), scaleShift()});
         }},
        {"linear_batch_norm_scale_shift_activations",
         [] {
             return chain({op(kLinear), op(kBatchNorm), scaleShift(), activations()});
         }},
        {"linear_squeeze_activations",
         [] {
             return chain({op(kLinear), op({"ONNXSqueezeMetatype"}), activations()});
         }},
        {"linear_squeeze_arithmetic_activations",
         [] {
             return chain({op(kLinear), op({"ONNXSqueezeMetatype"}),
                           joined(op(kArithmetic), activations())});
         }},
        {"batch_norm_scale_shift_activations",
         [] {
             return chain({op(kBatchNorm), scaleShift(), activations()});
         }},
        {"linear_arithmetic_activations",
         [] {
             return chain({op(kLinear), op(kArithmetic), activations()});
         }},
        {"linear_shift_scale", [] { return joined(op(kLinear), shiftScale()); }},
        {"linear_arithmetic_activations_arithmetic",
         [] {
             return chain({op(kLinear), op(kArithmetic), activations(), op(kArithmetic)});
         }},
        {"linear_scale_shift", [] { return joined(op(kLinear), scaleShift()); }, false},
    };
    return kTable;
}
} // namespace

GraphPattern hwActivationPatterns() {
    return activations();
}

GraphPattern hwFusedPatterns(std::string_view targetDevice) {
    const bool cpuLike = targetDevice != "NPU";
    GraphPattern full;
    for (const FusedPattern& entry : fusedPatternTable()) {
        if (entry.allDevices || cpuLike) {
            full.addAlternative(entry.create());
        }
    }
    return full;
}

std::vector<std::vector<NodeId>> findFusedPatterns(const graph::Graph& model,
                                                   const std::vector<bool>& live,
                                                   std::string_view targetDevice) {
    std::vector<std::vector<NodeId>> groups;
    const auto order = model.topologicalOrder();
    if (!order.ok()) {
        return groups;
    }
    static const GraphPattern kCpu = hwFusedPatterns("CPU");
    static const GraphPattern kNpu = hwFusedPatterns("NPU");
    const PatternGraph graph = PatternGraph::build(model, live);
    std::vector<int> groupOf(model.numNodeSlots(), -1);
    std::vector<std::vector<NodeId>> matches;
    for (const auto& match :
         findSubgraphsMatchingPattern(graph, targetDevice == "NPU" ? kNpu : kCpu, true)) {
        std::vector<NodeId> members;
        members.reserve(match.size());
        for (const int m : match) {
            members.push_back(graph.nodes[static_cast<size_t>(m)].node);
        }
        // Patterns through a model input (input_scale_shift, ...) are not fused here: the
        // input pseudo-node is not an ONNX node (a known gap, core/quantization/README.md).
        if (members.size() < 2 ||
            std::any_of(members.begin(), members.end(), [](NodeId n) { return !n.valid(); })) {
            continue;
        }
        for (const NodeId m : members) {
            groupOf[m.index()] = static_cast<int>(matches.size());
        }
        matches.push_back(std::move(members));
    }
    std::vector<bool> emitted(matches.size(), false);
    for (const NodeId node : *order) {
        if (!live[node.index()]) {
            continue;
        }
        const int g = groupOf[node.index()];
        if (g < 0) {
            groups.push_back({node});
        } else if (!emitted[static_cast<size_t>(g)]) {
            emitted[static_cast<size_t>(g)] = true;
            groups.push_back(matches[static_cast<size_t>(g)]);
        }
    }
    return groups;
}

} // namespace qs::quantization
