// Ops NNCF leaves in float on its own, before any user scope:
// - squeeze-and-excitation blocks: x * Sigmoid(Linear(Act(Linear(ReduceMean(x))))); the two linear
//   ops, their bias adds and both activations are ignored, while the pooling and the final Mul
//   (which see the full tensor x) stay quantizable (NNCF's SE_BLOCK ignored pattern);
// - post-processing: every non-weighted op on a path from a TopK or NonMaxSuppression to a model
//   output, walking back from the outputs until a weighted op (§1.3).

#include "core/graph/metatype.h"
#include "core/quantization/graph_queries.h"
#include "core/quantization/insertion_point_graph.h"

#include <algorithm>

namespace qs::quantization {

namespace {
using graph::NodeId;
using namespace detail;

struct SeMatcher {
    const graph::Graph& model;
    const std::vector<bool>& live;

    std::optional<NodeId> producer(NodeId node, size_t port) const {
        return liveProducer(model, live, node, port);
    }

    const std::string& opType(NodeId node) const { return model.node(node).opType; }

    /// Walks up from `node` over an optional constant bias Add to a linear op.
    std::optional<NodeId> linearAbove(NodeId node, std::vector<NodeId>& members) const {
        if (opType(node) == "Add" && numLiveInputs(model, live, node) == 1) {
            for (size_t port = 0; port < model.node(node).inputs.size(); ++port) {
                if (auto up = producer(node, port)) {
                    members.push_back(node);
                    node = *up;
                    break;
                }
            }
        }
        if (!isLinearOp(model, node)) {
            return std::nullopt;
        }
        members.push_back(node);
        return node;
    }

    /// The first activation of the block: ReLU-like, or swish Mul(y, Sigmoid(y)).
    std::optional<NodeId> activationInput(NodeId node, std::vector<NodeId>& members) const {
        if (opType(node) == "Mul" && model.node(node).inputs.size() == 2) {
            for (size_t gatePort = 0; gatePort < 2; ++gatePort) {
                auto gate = producer(node, gatePort);
                auto other = producer(node, 1 - gatePort);
                if (gate && other &&
                    (opType(*gate) == "Sigmoid" || opType(*gate) == "HardSigmoid") &&
                    producer(*gate, 0) == other) {
                    members.push_back(node);
                    members.push_back(*gate);
                    return other;
                }
            }
            return std::nullopt;
        }
        static constexpr std::string_view kActs[] = {"Relu",    "PRelu",     "LeakyRelu",
                                                     "Sigmoid", "HardSwish", "Clip"};
        if (std::find(std::begin(kActs), std::end(kActs), opType(node)) == std::end(kActs)) {
            return std::nullopt;
        }
        members.push_back(node);
        return producer(node, 0);
    }

    /// Members to ignore when `mul` closes an SE block.
    std::vector<NodeId> match(NodeId mul) const {
        const graph::Node& n = model.node(mul);
        if (n.opType != "Mul" || n.inputs.size() != 2) {
            return {};
        }
        for (size_t gatePort = 0; gatePort < 2; ++gatePort) {
            std::vector<NodeId> members;
            auto gate = producer(mul, gatePort);
            if (!gate || (opType(*gate) != "Sigmoid" && opType(*gate) != "HardSigmoid")) {
                continue;
            }
            members.push_back(*gate);
            auto up = producer(*gate, 0);
            std::optional<NodeId> linear2 = up ? linearAbove(*up, members) : std::nullopt;
            auto actOut = linear2 ? producer(*linear2, 0) : std::nullopt;
            auto actIn = actOut ? activationInput(*actOut, members) : std::nullopt;
            std::optional<NodeId> linear1 = actIn ? linearAbove(*actIn, members) : std::nullopt;
            auto reduce = linear1 ? producer(*linear1, 0) : std::nullopt;
            if (!reduce ||
                (opType(*reduce) != "ReduceMean" && opType(*reduce) != "GlobalAveragePool")) {
                continue;
            }
            const graph::ValueId x = n.inputs[1 - gatePort];
            if (model.node(*reduce).inputs.empty() || model.node(*reduce).inputs[0] != x) {
                continue;
            }
            return members;
        }
        return {};
    }
};

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
    const SeMatcher se{model, live};
    for (const NodeId node : model.nodeIds()) {
        if (!live[node.index()]) {
            continue;
        }
        for (const NodeId member : se.match(node)) {
            ignored[member.index()] = true;
        }
    }
    markPostProcessing(model, live, ignored);
    return ignored;
}

} // namespace qs::quantization
