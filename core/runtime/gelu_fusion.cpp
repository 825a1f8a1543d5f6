#include "core/runtime/gelu_fusion.h"

#include "core/runtime/fused_tail.h"

#include <algorithm>
#include <cmath>

namespace qs::runtime {

using graph::NodeId;
using graph::ValueId;

namespace {

constexpr float kSqrt2 = 1.41421356F;
constexpr float kTolerance = 1e-4F;

/// The other operand of binary `node` when it is a one-element float constant of rank at most
/// `rank` (so that it never broadcasts the chain's value to a larger shape), and `v` the first
/// (`vFirst`) or either operand.
std::optional<float> constantBeside(const graph::Graph& g, const graph::Node& node, ValueId v,
                                    bool vFirst, size_t rank) {
    if (!node.isDefaultDomain() || node.inputs.size() != 2 || node.outputs.size() != 1 ||
        node.inputs[0] == node.inputs[1]) {
        return std::nullopt;
    }
    const size_t port = node.inputs[0] == v ? 1 : 0;
    if (node.inputs[1 - port] != v || (vFirst && port != 1)) {
        return std::nullopt;
    }
    return scalarConstant(g, node, port, rank);
}

/// The op after `v` when `v` feeds only it and is no graph output.
const graph::Node* after(const graph::Graph& g, ValueId v, std::vector<NodeId>& nodes) {
    const graph::Node* node = soleConsumer(g, v);
    if (node != nullptr) {
        nodes.push_back(g.value(v).consumers[0].node);
    }
    return node;
}

/// x / sqrt 2 or x * (1 / sqrt 2).
bool scalesBySqrt2(const graph::Graph& g, const graph::Node& node, ValueId x, size_t rank) {
    if (node.opType == "Div") {
        const auto c = constantBeside(g, node, x, true, rank);
        return c && std::abs(*c - kSqrt2) <= kTolerance;
    }
    if (node.opType == "Mul") {
        const auto c = constantBeside(g, node, x, false, rank);
        return c && std::abs(*c - 1.0F / kSqrt2) <= kTolerance;
    }
    return false;
}

/// From the scaled x: Erf, then Add 1; the gate (1 + erf), or invalid.
ValueId gateAfter(const graph::Graph& g, ValueId scaled, size_t rank, std::vector<NodeId>& nodes) {
    const graph::Node* erf = after(g, scaled, nodes);
    if (erf == nullptr || !erf->isDefaultDomain() || erf->opType != "Erf" ||
        erf->outputs.size() != 1) {
        return ValueId();
    }
    const graph::Node* addOne = after(g, erf->outputs[0], nodes);
    if (addOne == nullptr || addOne->opType != "Add" ||
        constantBeside(g, *addOne, erf->outputs[0], false, rank) != 1.0F) {
        return ValueId();
    }
    return addOne->outputs[0];
}

} // namespace

std::optional<GeluMatch> matchDecomposedGelu(const graph::Graph& g, ValueId x) {
    const graph::Value& value = g.value(x);
    const auto& outputs = g.outputs();
    if (value.consumers.size() != 2 || value.consumers[0].node == value.consumers[1].node ||
        std::find(outputs.begin(), outputs.end(), x) != outputs.end()) {
        return std::nullopt;
    }
    GeluMatch m{x, ValueId(), {}};
    // Constants of x's rank at most; of rank 0 when it is unknown (PyTorch writes rank 0).
    const size_t rank = value.shape.rankKnown ? value.shape.rank() : 0;
    for (const size_t first : {0, 1}) {
        const NodeId scaleId = value.consumers[first].node;
        const NodeId otherId = value.consumers[1 - first].node;
        const graph::Node& scale = g.node(scaleId);
        const graph::Node& other = g.node(otherId);
        if (!scalesBySqrt2(g, scale, x, rank) || !other.isDefaultDomain() ||
            other.opType != "Mul" || other.inputs.size() != 2 || other.outputs.size() != 1) {
            continue;
        }
        m.nodes = {scaleId};
        const ValueId gate = gateAfter(g, scale.outputs[0], rank, m.nodes);
        if (!gate.valid()) {
            return std::nullopt;
        }
        m.nodes.push_back(otherId);
        // x * gate then * 0.5, or x * 0.5 then * gate: either way the last Mul joins the two.
        const bool halfFirst = constantBeside(g, other, x, false, rank) == 0.5F;
        const bool gateFirst = !halfFirst && soleConsumer(g, gate) == &other;
        if (!halfFirst && !gateFirst) {
            return std::nullopt;
        }
        const graph::Node* last = after(g, other.outputs[0], m.nodes);
        const bool closes =
            last != nullptr && last->opType == "Mul" && last->inputs.size() == 2 &&
            last->outputs.size() == 1 &&
            (halfFirst ? soleConsumer(g, gate) == last &&
                             (last->inputs[0] == gate || last->inputs[1] == gate)
                       : constantBeside(g, *last, other.outputs[0], false, rank) == 0.5F);
        if (!closes || !last->isDefaultDomain()) {
            return std::nullopt;
        }
        m.output = last->outputs[0];
        return m;
    }
    return std::nullopt;
}

} // namespace qs::runtime
