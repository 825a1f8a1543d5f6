// Ops NNCF leaves in float on its own, before any user scope:
// - squeeze-and-excitation blocks: x * Sigmoid(Conv(Act(Conv(ReduceMean(x))))); the two convs,
//   the activation and the gate are ignored, while the pooling and the final Mul (which see the
//   full tensor x) stay quantizable (NNCF's SE_BLOCK ignored pattern, the only one that applies
//   without model_type=TRANSFORMER);
// - post-processing: every non-weighted op on a path from a TopK or NonMaxSuppression to a model
//   output, walking back from the outputs until a weighted op (§1.3).

#include "core/graph/metatype.h"
#include "core/quantization/graph_pattern.h"
#include "core/quantization/graph_queries.h"
#include "core/quantization/insertion_point_graph.h"

#include <algorithm>

namespace qs::quantization {

namespace {
using graph::NodeId;
using namespace detail;

/// NNCF's SE_BLOCK ignored pattern (onnx/quantization/ignored_patterns.py): x → ReduceMean|
/// GlobalAveragePool (excluded) → Conv → activation → Conv → Sigmoid|HardSigmoid → Mul(x, ·)
/// (excluded). Only Conv counts as the linear op and no bias Add may sit in between.
GraphPattern seBlock() {
    GraphPattern head;
    const int x = head.addNode({PatternNodeKind::NonPattern, {}, false});
    const int reduce = head.addNode(
        {PatternNodeKind::Op, {"ONNXReduceMeanMetatype", "ONNXGlobalAveragePoolMetatype"}, true});
    const int conv = head.addNode({PatternNodeKind::Op, {"ONNXConvolutionMetatype"}, false});
    head.addEdge(x, reduce);
    head.addEdge(reduce, conv);
    head.join(hwActivationPatterns());
    GraphPattern rest;
    const int conv2 = rest.addNode({PatternNodeKind::Op, {"ONNXConvolutionMetatype"}, false});
    const int gate = rest.addNode(
        {PatternNodeKind::Op, {"ONNXSigmoidMetatype", "ONNXHardSigmoidMetatype"}, false});
    const int mul = rest.addNode({PatternNodeKind::Op, {"ONNXMulLayerMetatype"}, true});
    rest.addEdge(conv2, gate);
    rest.addEdge(gate, mul);
    head.join(rest);
    // Each alternative: its x also feeds the final Mul.
    GraphPattern out;
    for (GraphPattern alternative : head.components()) {
        int input = -1;
        int last = -1;
        for (size_t i = 0; i < alternative.nodes().size(); ++i) {
            const PatternNode& n = alternative.nodes()[i];
            if (n.kind == PatternNodeKind::NonPattern) {
                input = static_cast<int>(i);
            }
            if (n.excluded &&
                n.metatypes == std::vector<std::string_view>{"ONNXMulLayerMetatype"}) {
                last = static_cast<int>(i);
            }
        }
        alternative.addEdge(input, last);
        out.addAlternative(alternative);
    }
    return out;
}

/// Nodes between the model outputs and the last weighted ops above them.
std::vector<bool> postProcessingTail(const graph::Graph& model, const std::vector<bool>& live) {
    std::vector<bool> tail(model.numNodeSlots(), false);
    std::vector<NodeId> stack;
    for (const graph::ValueId output : model.outputs()) {
        const graph::NodeId producer = model.value(output).producer;
        if (producer.valid() && live[producer.index()]) {
            stack.push_back(producer);
        }
    }
    while (!stack.empty()) {
        const NodeId node = stack.back();
        stack.pop_back();
        if (tail[node.index()] || graph::metatypeOf(model, node).hasWeights) {
            continue;
        }
        tail[node.index()] = true;
        for (size_t port = 0; port < model.node(node).inputs.size(); ++port) {
            if (auto up = liveProducer(model, live, node, port)) {
                stack.push_back(*up);
            }
        }
    }
    return tail;
}

/// Marks every tail node reachable from `start` in one direction (up: producers, down: consumers).
void markWithinTail(const graph::Graph& model, const std::vector<bool>& live,
                    const std::vector<bool>& tail, NodeId start, bool up,
                    std::vector<bool>& ignored) {
    std::vector<NodeId> stack = {start};
    while (!stack.empty()) {
        const NodeId current = stack.back();
        stack.pop_back();
        if (!tail[current.index()] || (ignored[current.index()] && current != start)) {
            continue;
        }
        ignored[current.index()] = true;
        if (!up) {
            const auto next = liveConsumers(model, live, current);
            stack.insert(stack.end(), next.begin(), next.end());
            continue;
        }
        for (size_t port = 0; port < model.node(current).inputs.size(); ++port) {
            if (auto producer = liveProducer(model, live, current, port)) {
                stack.push_back(*producer);
            }
        }
    }
}

void markPostProcessing(const graph::Graph& model, const std::vector<bool>& live,
                        std::vector<bool>& ignored) {
    const std::vector<bool> tail = postProcessingTail(model, live);
    // Ancestors (within the tail) and descendants of each TopK/NMS lie on a marker path.
    for (const NodeId node : model.nodeIds()) {
        const std::string& type = model.node(node).opType;
        if (tail[node.index()] && (type == "TopK" || type == "NonMaxSuppression")) {
            markWithinTail(model, live, tail, node, true, ignored);
            markWithinTail(model, live, tail, node, false, ignored);
        }
    }
}
} // namespace

std::vector<bool> autoIgnoredNodes(const graph::Graph& model, const std::vector<bool>& live) {
    std::vector<bool> ignored(model.numNodeSlots(), false);
    // Ignored patterns match loosely (strict = false): outside edges are allowed.
    static const GraphPattern kIgnored = seBlock();
    const PatternGraph graph = PatternGraph::build(model, live);
    for (const auto& match : findSubgraphsMatchingPattern(graph, kIgnored, false)) {
        for (const int m : match) {
            if (graph.nodes[static_cast<size_t>(m)].node.valid()) {
                ignored[graph.nodes[static_cast<size_t>(m)].node.index()] = true;
            }
        }
    }
    markPostProcessing(model, live, ignored);
    return ignored;
}

} // namespace qs::quantization
