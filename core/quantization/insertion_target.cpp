#include "core/quantization/insertion_target.h"

#include "core/graph/metatype.h"

#include <charconv>
#include <string>
#include <string_view>

namespace qs::quantization {

namespace {
constexpr std::string_view kModelInputPrefix = "nncf_model_input_";

Error notFound(const InsertionPoint& point, const std::string& what) {
    return Error(Errc::InvalidArgument, "quantization point " + point.toString() + ": " + what);
}

Result<InsertionTarget> resolveModelInput(const graph::Graph& model, const InsertionPoint& point) {
    const std::string_view digits =
        std::string_view(point.targetNodeName).substr(kModelInputPrefix.size());
    size_t index = 0;
    const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size() ||
        index >= inputs.size()) {
        return notFound(point, "the model has no runtime input " + std::string(digits));
    }
    return InsertionTarget{inputs[index], std::nullopt, std::nullopt};
}

Result<InsertionTarget> resolveWeight(const graph::Graph& model, graph::NodeId node,
                                      const InsertionPoint& point) {
    const std::vector<int> ports = graph::constantWeightPorts(model, node);
    if (ports.empty()) {
        return notFound(point, "node '" + point.targetNodeName + "' has no constant weight");
    }
    const int port = ports.front();
    const graph::ValueId value = model.node(node).inputs[static_cast<size_t>(port)];
    const std::optional<int64_t> axis = graph::weightOutputChannelAxis(model, node, port);
    std::optional<int64_t> weightAxis;
    if (axis) {
        const auto rank = static_cast<int64_t>(model.value(value).initializer->dims().size());
        weightAxis = *axis < 0 ? *axis + rank : *axis;
    }
    return InsertionTarget{value, graph::Use{node, static_cast<uint32_t>(port)}, weightAxis};
}
} // namespace

Result<InsertionTarget> resolveInsertionPoint(const graph::Graph& model,
                                              const InsertionPoint& point) {
    if (!point.isWeight && !point.inputPortId &&
        point.targetNodeName.starts_with(kModelInputPrefix) &&
        !model.findNode(point.targetNodeName)) {
        return resolveModelInput(model, point);
    }
    const std::optional<graph::NodeId> node = model.findNode(point.targetNodeName);
    if (!node) {
        return notFound(point, "no node named '" + point.targetNodeName + "'");
    }
    const graph::Node& n = model.node(*node);
    if (point.isWeight) {
        return resolveWeight(model, *node, point);
    }
    if (point.inputPortId) {
        const int port = *point.inputPortId;
        if (port < 0 || static_cast<size_t>(port) >= n.inputs.size() ||
            !n.inputs[static_cast<size_t>(port)].valid()) {
            return notFound(point, "node '" + n.name + "' has no input " + std::to_string(port));
        }
        return InsertionTarget{n.inputs[static_cast<size_t>(port)],
                               graph::Use{*node, static_cast<uint32_t>(port)}, std::nullopt};
    }
    if (n.outputs.empty() || !n.outputs[0].valid()) {
        return notFound(point, "node '" + n.name + "' has no output 0");
    }
    return InsertionTarget{n.outputs[0], std::nullopt, std::nullopt};
}

} // namespace qs::quantization
