// Read-only graph queries for the pattern matchers.

#include "core/quantization/graph_queries.h"

#include "core/graph/metatype.h"
#include "core/graph/op_facts.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace qs::quantization::detail {

std::vector<graph::NodeId> liveConsumers(const graph::Graph& model, const std::vector<bool>& live,
                                         graph::NodeId node) {
    std::vector<graph::NodeId> out;
    for (const graph::ValueId output : model.node(node).outputs) {
        if (!output.valid()) {
            continue;
        }
        for (const graph::Use& use : model.value(output).consumers) {
            if (live[use.node.index()] &&
                std::find(out.begin(), out.end(), use.node) == out.end()) {
                out.push_back(use.node);
            }
        }
    }
    return out;
}

std::optional<graph::NodeId> liveProducer(const graph::Graph& model, const std::vector<bool>& live,
                                          graph::NodeId node, size_t port) {
    const graph::Node& n = model.node(node);
    if (port >= n.inputs.size() || !n.inputs[port].valid()) {
        return std::nullopt;
    }
    const graph::Value& value = model.value(n.inputs[port]);
    if (!value.producer.valid() || !live[value.producer.index()]) {
        return std::nullopt;
    }
    return value.producer;
}

size_t numLiveInputs(const graph::Graph& model, const std::vector<bool>& live, graph::NodeId node) {
    size_t count = 0;
    const auto runtimeInputs = model.runtimeInputs();
    for (const graph::ValueId input : model.node(node).inputs) {
        if (!input.valid()) {
            continue;
        }
        const graph::Value& value = model.value(input);
        const bool fromInput =
            std::find(runtimeInputs.begin(), runtimeInputs.end(), input) != runtimeInputs.end();
        if (fromInput || (value.producer.valid() && live[value.producer.index()])) {
            ++count;
        }
    }
    return count;
}

bool feedsGraphOutput(const graph::Graph& model, graph::NodeId node) {
    for (const graph::ValueId output : model.node(node).outputs) {
        if (std::find(model.outputs().begin(), model.outputs().end(), output) !=
            model.outputs().end()) {
            return true;
        }
    }
    return false;
}

NncfNodeIds nncfNodeIds(const graph::Graph& model) {
    // The importer creates every node's output values in file order, a folded Constant's
    // initializer among them, so sorting the producers by their first value restores the file
    // order with the Constants in place.
    NncfNodeIds ids;
    ids.byNode.assign(model.numNodeSlots(), 0);
    const std::vector<graph::NodeId> all = model.nodeIds();
    std::vector<std::pair<size_t, int64_t>> producers; // (first value index, node index or -1)
    bool ordered = true;
    for (const graph::NodeId n : all) {
        size_t first = SIZE_MAX;
        for (const graph::ValueId out : model.node(n).outputs) {
            if (out.valid()) {
                first = std::min(first, static_cast<size_t>(out.index()));
            }
        }
        ordered = ordered && first != SIZE_MAX;
        producers.emplace_back(first, static_cast<int64_t>(n.index()));
    }
    for (const graph::ValueId v : model.valueIds()) {
        if (!model.value(v).constantNodeName.empty()) {
            producers.emplace_back(static_cast<size_t>(v.index()), -1);
        }
    }
    if (!ordered) {
        for (size_t i = 0; i < all.size(); ++i) {
            ids.byNode[all[i].index()] = i;
        }
        ids.modelNodeCount = all.size();
        return ids;
    }
    std::sort(producers.begin(), producers.end());
    for (size_t i = 0; i < producers.size(); ++i) {
        if (producers[i].second >= 0) {
            ids.byNode[static_cast<size_t>(producers[i].second)] = i;
        }
    }
    ids.modelNodeCount = producers.size();
    return ids;
}

bool isNoOpCast(const graph::Graph& model, graph::NodeId node) {
    const graph::Node& n = model.node(node);
    return n.opType == "Cast" && n.inputs.size() == 1 && n.outputs.size() == 1 &&
           n.inputs[0].valid() && n.outputs[0].valid() &&
           model.value(n.inputs[0]).dtype != graph::DataType::Undefined &&
           model.value(n.inputs[0]).dtype == model.value(n.outputs[0]).dtype;
}

bool isLinearOp(const graph::Graph& model, graph::NodeId node) {
    const std::string_view name = graph::metatypeOf(model, node).name;
    return name == "ONNXConvolutionMetatype" || name == "ONNXDepthwiseConvolutionMetatype" ||
           name == "ONNXConvolutionTransposeMetatype" ||
           name == "ONNXDeformableConvolutionMetatype" || name == "ONNXGemmMetatype" ||
           name == "ONNXMatMulMetatype";
}

bool isArithmeticOp(std::string_view opType) {
    return graph::opFacts(opType).arithmetic;
}

bool isAtomicActivation(std::string_view opType) {
    return graph::opFacts(opType).atomicActivation;
}

} // namespace qs::quantization::detail
