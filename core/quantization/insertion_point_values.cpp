// Insertion points of a setup resolved to graph values and edges.

#include "core/quantization/insertion_point_values.h"

#include "core/graph/metatype.h"

#include <string>
#include <string_view>

namespace qs::quantization {
namespace {

constexpr std::string_view kModelInputPrefix = "nncf_model_input_";

Result<ResolvedInsertionPoint> resolveModelInput(const graph::Graph& model,
                                                 const std::string& name) {
    const std::string index = name.substr(kModelInputPrefix.size());
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    size_t parsed = 0;
    int position = -1;
    try {
        position = std::stoi(index, &parsed);
    } catch (const std::exception&) {
        parsed = 0;
    }
    if (parsed != index.size() || position < 0 || static_cast<size_t>(position) >= inputs.size()) {
        return Error(Errc::InvalidArgument, "no model input '" + name + "'");
    }
    return ResolvedInsertionPoint{.value = inputs[static_cast<size_t>(position)]};
}

Result<ResolvedInsertionPoint> resolveWeight(const graph::Graph& model, graph::NodeId node) {
    const std::vector<int> ports = graph::constantWeightPorts(model, node);
    const graph::Node& n = model.node(node);
    if (ports.empty()) {
        return Error(Errc::InvalidArgument, "node '" + n.name + "' has no constant weight");
    }
    const auto port = static_cast<uint32_t>(ports.front());
    const graph::ValueId weight = n.inputs[port];
    const std::optional<int64_t> axis = graph::weightOutputChannelAxis(model, node, ports.front());
    std::optional<int64_t> normalized;
    if (axis) {
        const auto rank = static_cast<int64_t>(model.value(weight).initializer->dims().size());
        normalized = *axis < 0 ? *axis + rank : *axis;
        if (*normalized < 0 || *normalized >= rank) {
            return Error(Errc::InvalidModel,
                         "weight of '" + n.name + "' has no axis " + std::to_string(*axis));
        }
    }
    return ResolvedInsertionPoint{
        .value = weight, .node = node, .port = port, .weightAxis = normalized};
}

} // namespace

Result<ResolvedInsertionPoint> resolveInsertionPoint(const graph::Graph& model,
                                                     const InsertionPoint& point) {
    if (!point.isWeight && point.targetNodeName.starts_with(kModelInputPrefix) &&
        !model.findNode(point.targetNodeName)) {
        return resolveModelInput(model, point.targetNodeName);
    }
    const std::optional<graph::NodeId> node = model.findNode(point.targetNodeName);
    if (!node) {
        return Error(Errc::InvalidArgument, "quantizer '" + point.toString() + "': no node '" +
                                                point.targetNodeName + "'");
    }
    if (point.isWeight) {
        return resolveWeight(model, *node);
    }
    const graph::Node& n = model.node(*node);
    if (!point.inputPortId) {
        if (n.outputs.empty() || !n.outputs[0].valid()) {
            return Error(Errc::InvalidArgument,
                         "quantizer '" + point.toString() + "': node has no output 0");
        }
        return ResolvedInsertionPoint{.value = n.outputs[0]};
    }
    const int port = *point.inputPortId;
    if (port < 0 || static_cast<size_t>(port) >= n.inputs.size() ||
        !n.inputs[static_cast<size_t>(port)].valid()) {
        return Error(Errc::InvalidArgument, "quantizer '" + point.toString() +
                                                "': node has no input " + std::to_string(port));
    }
    return ResolvedInsertionPoint{.value = n.inputs[static_cast<size_t>(port)],
                                  .node = *node,
                                  .port = static_cast<uint32_t>(port)};
}

} // namespace qs::quantization
