// HW fused patterns (reference/nncf-quantization.md §1.1): a linear op (Conv, ConvTranspose, Gemm,
// MatMul) followed by a constant bias/scale arithmetic op, BatchNormalization and an activation;
// an arithmetic op followed by an activation (the residual Add+ReLU); BatchNormalization followed
// by an activation; Mul(const)+Add(const) scale-shift. An activation is an atomic one (ReLU, Clip,
// Sigmoid, HardSigmoid, HardSwish, ...) or swish, Mul(x, Sigmoid(x)) / Mul(x, HardSigmoid(x)).
// Inner nodes must feed only the next node of the pattern, so no branch is hidden by fusing.

#include "core/quantization/graph_queries.h"
#include "core/quantization/insertion_point_graph.h"

#include <algorithm>

namespace qs::quantization {

namespace {
using graph::NodeId;
using namespace detail;

class Matcher {
public:
    Matcher(const graph::Graph& model, const std::vector<bool>& live,
            const std::vector<bool>& taken)
        : m_model(model)
        , m_live(live)
        , m_taken(taken) {}

    /// The only consumer of `node`, if it is live, free and `node` is not a graph output.
    std::optional<NodeId> soleConsumer(NodeId node) const {
        const auto consumers = liveConsumers(m_model, m_live, node);
        if (consumers.size() != 1 || feedsGraphOutput(m_model, node) ||
            m_taken[consumers[0].index()]) {
            return std::nullopt;
        }
        return consumers[0];
    }

    const std::string& opType(NodeId node) const { return m_model.node(node).opType; }

    bool isConstArithmetic(NodeId node) const {
        return isArithmeticOp(opType(node)) && numLiveInputs(m_model, m_live, node) == 1;
    }

    /// Swish after `node`: its output feeds exactly a Sigmoid/HardSigmoid S and a Mul M(x, S(x)).
    std::vector<NodeId> swishAfter(NodeId node) const {
        const auto consumers = liveConsumers(m_model, m_live, node);
        if (consumers.size() != 2 || feedsGraphOutput(m_model, node)) {
            return {};
        }
        for (int first = 0; first < 2; ++first) {
            const NodeId gate = consumers[static_cast<size_t>(first)];
            const NodeId mul = consumers[static_cast<size_t>(1 - first)];
            if ((opType(gate) != "Sigmoid" && opType(gate) != "HardSigmoid") ||
                opType(mul) != "Mul" || m_taken[gate.index()] || m_taken[mul.index()]) {
                continue;
            }
            const auto gateConsumer = soleConsumer(gate);
            if (!gateConsumer || *gateConsumer != mul || m_model.node(mul).inputs.size() != 2) {
                continue;
            }
            return {gate, mul};
        }
        return {};
    }

    /// Activation nodes right after `node` (swish preferred over a lone Sigmoid).
    std::vector<NodeId> activationAfter(NodeId node) const {
        auto swish = swishAfter(node);
        if (!swish.empty()) {
            return swish;
        }
        const auto next = soleConsumer(node);
        if (next && isAtomicActivation(opType(*next))) {
            return {*next};
        }
        return {};
    }

    std::vector<NodeId> match(NodeId start) const {
        const std::string& type = opType(start);
        std::vector<NodeId> chain = {start};
        auto extendWith = [&](const std::vector<NodeId>& nodes) {
            chain.insert(chain.end(), nodes.begin(), nodes.end());
            return !nodes.empty();
        };
        auto nextIf = [&](auto predicate) -> std::vector<NodeId> {
            const auto next = soleConsumer(chain.back());
            if (next && predicate(*next)) {
                return {*next};
            }
            return {};
        };
        auto isBatchNorm = [&](NodeId n) { return opType(n) == "BatchNormalization"; };
        if (isLinearOp(m_model, start)) {
            extendWith(nextIf([&](NodeId n) { return isConstArithmetic(n); }));
            extendWith(nextIf(isBatchNorm));
            if (extendWith(activationAfter(chain.back()))) {
                extendWith(nextIf(isBatchNorm));
            }
            return chain;
        }
        if (type == "BatchNormalization") {
            extendWith(activationAfter(start));
            return chain;
        }
        if (isArithmeticOp(type)) {
            if (isConstArithmetic(start) && type == "Mul") {
                extendWith(
                    nextIf([&](NodeId n) { return opType(n) == "Add" && isConstArithmetic(n); }));
            }
            extendWith(activationAfter(chain.back()));
            return chain;
        }
        return chain;
    }

private:
    const graph::Graph& m_model;
    const std::vector<bool>& m_live;
    const std::vector<bool>& m_taken;
};
} // namespace

std::vector<std::vector<NodeId>> findFusedPatterns(const graph::Graph& model,
                                                   const std::vector<bool>& live) {
    std::vector<std::vector<NodeId>> groups;
    std::vector<bool> taken(model.numNodeSlots(), false);
    const auto order = model.topologicalOrder();
    if (!order.ok()) {
        return groups;
    }
    const Matcher matcher(model, live, taken);
    for (const NodeId node : *order) {
        if (!live[node.index()] || taken[node.index()]) {
            continue;
        }
        std::vector<NodeId> chain = matcher.match(node);
        for (const NodeId member : chain) {
            taken[member.index()] = true;
        }
        groups.push_back(std::move(chain));
    }
    return groups;
}

} // namespace qs::quantization
