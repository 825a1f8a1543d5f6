// Read-only graph queries for the pattern matchers.

#include "core/quantization/graph_queries.h"

#include "core/graph/metatype.h"

#include <algorithm>

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

bool isLinearOp(const graph::Graph& model, graph::NodeId node) {
    const std::string_view name = graph::metatypeOf(model, node).name;
    return name == "ONNXConvolutionMetatype" || name == "ONNXDepthwiseConvolutionMetatype" ||
           name == "ONNXConvolutionTransposeMetatype" ||
           name == "ONNXDeformableConvolutionMetatype" || name == "ONNXGemmMetatype" ||
           name == "ONNXMatMulMetatype";
}

bool isArithmeticOp(std::string_view opType) {
    return opType == "Add" || opType == "Sub" || opType == "Mul" || opType == "Div";
}

bool isAtomicActivation(std::string_view opType) {
    static constexpr std::string_view kActivations[] = {
        "Relu", "Clip",    "LeakyRelu",   "ThresholdedRelu", "Elu",  "PRelu",
        "Selu", "Sigmoid", "HardSigmoid", "HardSwish",       "Tanh", "Softplus",
        "Gelu", "Mish"};
    return std::find(std::begin(kActivations), std::end(kActivations), opType) !=
           std::end(kActivations);
}

} // namespace qs::quantization::detail
