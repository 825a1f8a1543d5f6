#include "core/runtime/matmul_bias_fusion.h"

#include "core/runtime/fused_tail.h"

namespace qs::runtime {

namespace {

/// `id`, or the initializer an Identity node copies into it (PyTorch's exports read shared
/// parameters through Identity nodes).
graph::ValueId throughIdentity(const graph::Graph& g, graph::ValueId id) {
    const graph::Value& value = g.value(id);
    if (!value.producer.valid()) {
        return id;
    }
    const graph::Node& producer = g.node(value.producer);
    const bool copy = producer.isDefaultDomain() && producer.opType == "Identity" &&
                      producer.inputs.size() == 1 && producer.inputs[0].valid() &&
                      g.value(producer.inputs[0]).isInitializer();
    return copy ? producer.inputs[0] : id;
}

/// The dims of `id` when it is a float initializer, else nullopt.
std::optional<std::vector<int64_t>> floatInitializerDims(const graph::Graph& g, graph::ValueId id) {
    if (!id.valid()) {
        return std::nullopt;
    }
    const graph::Value& value = g.value(id);
    if (!value.isInitializer() || value.initializer->dtype() != graph::DataType::Float) {
        return std::nullopt;
    }
    return value.initializer->dims();
}

} // namespace

std::optional<MatMulBiasMatch> matchMatMulBias(const graph::Graph& g, graph::NodeId matMul) {
    const graph::Node& node = g.node(matMul);
    if (!node.isDefaultDomain() || node.opType != "MatMul" || node.inputs.size() != 2 ||
        node.outputs.size() != 1 || !node.outputs[0].valid()) {
        return std::nullopt;
    }
    const auto weight = floatInitializerDims(g, node.inputs[1]);
    if (!weight || weight->size() != 2) {
        return std::nullopt;
    }
    const graph::Node* add = soleConsumer(g, node.outputs[0]);
    if (add == nullptr || !add->isDefaultDomain() || add->opType != "Add" ||
        add->inputs.size() != 2 || add->outputs.size() != 1 || !add->outputs[0].valid() ||
        add->inputs[0] == add->inputs[1]) {
        return std::nullopt;
    }
    const graph::ValueId bias =
        throughIdentity(g, add->inputs[0] == node.outputs[0] ? add->inputs[1] : add->inputs[0]);
    const auto biasDims = floatInitializerDims(g, bias);
    if (!biasDims || biasDims->size() != 1 || (*biasDims)[0] != (*weight)[1]) {
        return std::nullopt;
    }
    return MatMulBiasMatch{bias, add->outputs[0], g.value(node.outputs[0]).consumers[0].node};
}

} // namespace qs::runtime
