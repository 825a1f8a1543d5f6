#include "core/pruning/pruning_section.h"

#include "core/graph/op_facts.h"

#include <algorithm>
#include <array>
#include <optional>

namespace qs::pruning {

namespace {

using graph::Graph;
using graph::Node;
using graph::NodeId;
using graph::Value;
using graph::ValueId;

bool isFloatInitializer(const Graph& graph, ValueId id) {
    if (!id.valid()) {
        return false;
    }
    const Value& value = graph.value(id);
    return value.isInitializer() && value.initializer->dtype() == graph::DataType::Float;
}

/// The initializer is read by this one node only and is no graph output, so slicing it changes
/// nobody else.
bool exclusiveTo(const Graph& graph, ValueId id) {
    const Value& value = graph.value(id);
    if (value.consumers.size() != 1) {
        return false;
    }
    return !graph.isOutput(id);
}

std::string quoted(const Node& node) {
    return node.opType + " '" + node.name + "'";
}

/// Outputs past the first must be unused (Dropout's mask, MaxPool's indices, BN's training
/// statistics).
bool extraOutputsUnused(const Graph& graph, const Node& node) {
    for (size_t i = 1; i < node.outputs.size(); ++i) {
        const ValueId out = node.outputs[i];
        if (out.valid() && (!graph.value(out).consumers.empty() || graph.isOutput(out))) {
            return false;
        }
    }
    return true;
}

/// A bias that can be sliced with the output channels: a float initializer of `channels`
/// elements in one dim ([C] or [1, C]); `ok` is false for any other bias (scalar biases are
/// left alone and fine).
ValueId perChannelBias(const Graph& graph, const Node& node, size_t port, int64_t channels,
                       bool& ok) {
    ok = true;
    if (node.inputs.size() <= port || !node.inputs[port].valid()) {
        return {};
    }
    const ValueId id = node.inputs[port];
    if (!isFloatInitializer(graph, id)) {
        ok = false;
        return {};
    }
    const int64_t numel = graph.value(id).initializer->numElements();
    if (numel == 1 && channels != 1) {
        return {};
    }
    ok = numel == channels;
    return ok ? id : ValueId{};
}

bool convKernel(const Graph& graph, const Node& node, bool transpose, KernelInfo& kernel,
                std::string& reason) {
    if (node.inputs.size() < 2 || !isFloatInitializer(graph, node.inputs[1])) {
        reason = node.opType + " without a float weight initializer";
        return false;
    }
    const std::vector<int64_t>& dims = graph.value(node.inputs[1]).initializer->dims();
    const int64_t group = node.intAttr("group", 1);
    if (group != 1) {
        const bool depthwise = !transpose && dims.size() >= 2 && dims[1] == 1;
        reason = std::string(depthwise ? "depthwise" : "grouped") + " convolution (group " +
                 std::to_string(group) + "): never an entry or an exit";
        return false;
    }
    if (dims.size() < 3) {
        reason = node.opType + " weight of rank " + std::to_string(dims.size());
        return false;
    }
    kernel.weight = node.inputs[1];
    kernel.outAxis = transpose ? 1 : 0;
    kernel.inAxis = transpose ? 0 : 1;
    kernel.outChannels = dims[static_cast<size_t>(kernel.outAxis)];
    kernel.inChannels = dims[static_cast<size_t>(kernel.inAxis)];
    kernel.flowAxis = 1;
    bool ok = true;
    kernel.bias = perChannelBias(graph, node, 2, kernel.outChannels, ok);
    if (!ok) {
        reason = node.opType + " bias is not a float initializer of one value per channel";
        return false;
    }
    return true;
}

bool gemmKernel(const Graph& graph, const Node& node, KernelInfo& kernel, std::string& reason) {
    if (node.intAttr("transA", 0) != 0) {
        reason = "Gemm with transA: its input channels are not on the last axis";
        return false;
    }
    if (node.inputs.size() < 2 || !isFloatInitializer(graph, node.inputs[1]) ||
        (node.inputs[0].valid() && graph.value(node.inputs[0]).isInitializer())) {
        reason = "Gemm without a float weight initializer B";
        return false;
    }
    const std::vector<int64_t>& dims = graph.value(node.inputs[1]).initializer->dims();
    if (dims.size() != 2) {
        reason = "Gemm weight of rank " + std::to_string(dims.size());
        return false;
    }
    const bool transB = node.intAttr("transB", 0) != 0;
    kernel.weight = node.inputs[1];
    kernel.outAxis = transB ? 0 : 1;
    kernel.inAxis = transB ? 1 : 0;
    kernel.outChannels = dims[static_cast<size_t>(kernel.outAxis)];
    kernel.inChannels = dims[static_cast<size_t>(kernel.inAxis)];
    kernel.flowAxis = -1;
    bool ok = true;
    kernel.bias = perChannelBias(graph, node, 2, kernel.outChannels, ok);
    if (!ok) {
        reason = "Gemm bias C is not a float initializer of one value per output";
        return false;
    }
    return true;
}

bool matMulKernel(const Graph& graph, const Node& node, KernelInfo& kernel, std::string& reason) {
    if (node.inputs.size() != 2 || !isFloatInitializer(graph, node.inputs[1]) ||
        graph.value(node.inputs[1]).initializer->dims().size() != 2 ||
        graph.value(node.inputs[0]).isInitializer()) {
        reason = "MatMul without a 2-D float weight initializer as its second input";
        return false;
    }
    const std::vector<int64_t>& dims = graph.value(node.inputs[1]).initializer->dims();
    kernel.weight = node.inputs[1];
    kernel.outAxis = 1;
    kernel.inAxis = 0;
    kernel.outChannels = dims[1];
    kernel.inChannels = dims[0];
    kernel.flowAxis = -1;
    kernel.bias = {};
    return true;
}

/// The rank of a value, or nullopt.
std::optional<int64_t> rankOf(const Graph& graph, ValueId id) {
    const graph::TensorShape& shape = graph.value(id).shape;
    if (!shape.rankKnown) {
        return std::nullopt;
    }
    return static_cast<int64_t>(shape.rank());
}

/// `axis` counted from the front for a value of `rank`.
std::optional<int64_t> normalizedAxis(int64_t axis, std::optional<int64_t> rank) {
    if (axis >= 0) {
        return axis;
    }
    if (!rank) {
        return std::nullopt;
    }
    return *rank + axis;
}

bool sameAxis(int64_t a, int64_t b, std::optional<int64_t> rank) {
    if (a == b) {
        return true;
    }
    const std::optional<int64_t> na = normalizedAxis(a, rank);
    const std::optional<int64_t> nb = normalizedAxis(b, rank);
    return na && nb && *na == *nb;
}

/// How a constant broadcast against the flow relates to its channels.
enum class ConstantKind { Scalar, PerChannel, Other };

/// Right-aligns the constant's dims with the flow (of `rank`, channels on `flowAxis`); `axis` is
/// the constant's own channel axis when per channel.
ConstantKind classifyConstant(const graph::TensorData& data, int64_t channels, int64_t flowAxis,
                              std::optional<int64_t> rank, int64_t& axis) {
    const std::vector<int64_t>& dims = data.dims();
    if (data.numElements() == 1) {
        return ConstantKind::Scalar;
    }
    const auto k = static_cast<int64_t>(dims.size());
    std::optional<int64_t> flowNorm = normalizedAxis(flowAxis, rank);
    if (!flowNorm && flowAxis < 0) {
        // Channels last: a constant's last axis lines up with them whatever the rank.
        flowNorm = k - 1;
        rank = k;
    }
    if (!flowNorm || !rank || k > *rank) {
        return ConstantKind::Other;
    }
    const int64_t own = *flowNorm - (*rank - k);
    if (own < 0 || own >= k || dims[static_cast<size_t>(own)] != channels) {
        return ConstantKind::Other;
    }
    for (int64_t i = 0; i < k; ++i) {
        if (i != own && dims[static_cast<size_t>(i)] != 1) {
            return ConstantKind::Other;
        }
    }
    axis = own;
    return ConstantKind::PerChannel;
}

/// An op that acts per channel or element-wise (graph/op_facts.cpp's pruning role).
bool isPerChannelOp(std::string_view opType) {
    return graph::opFacts(opType).pruningRole == graph::PruningRole::PerChannel;
}

/// The state of one forward walk from an entry.
struct Walk {
    int64_t channels = 0;
    int64_t flowAxis = 1;
    std::optional<int64_t> rank;
    std::vector<ChannelParameter> parameters;
};

/// Flatten(axis 1) of a known [N, C, 1, ..., 1] with the channels on axis 1.
bool flattenKeepsChannels(const Graph& graph, const Node& node, const Walk& walk) {
    if (node.intAttr("axis", 1) != 1 || !sameAxis(walk.flowAxis, 1, walk.rank) ||
        node.inputs.empty()) {
        return false;
    }
    const graph::TensorShape& shape = graph.value(node.inputs[0]).shape;
    if (!shape.rankKnown || shape.rank() < 2) {
        return false;
    }
    for (size_t i = 2; i < shape.rank(); ++i) {
        if (shape.dims[i].size != 1) {
            return false;
        }
    }
    return true;
}

/// Why `node` is not an op kind the walk may pass, or "" when it is.
std::string opKindReason(const Graph& graph, const Node& node, const Walk& walk) {
    if (!node.isDefaultDomain()) {
        return "reaches " + quoted(node) + " of domain '" + node.domain + "'";
    }
    const std::string& op = node.opType;
    // Global pooling keeps one value per channel, and a Flatten of [N, C, 1, ..., 1] keeps the
    // channels on axis 1: Conv -> GlobalAveragePool -> Flatten -> Gemm is a section (a Flatten
    // of real spatial dims is not: the Gemm then takes C*H*W inputs).
    const bool known =
        isPerChannelOp(op) || (op == "Flatten" && flattenKeepsChannels(graph, node, walk));
    if (known) {
        return {};
    }
    if (op == "Concat") {
        return "reaches Concat '" + node.name + "', which joins channels of several inputs";
    }
    return "reaches " + quoted(node) + ", which mixes or reshapes channels";
}

/// Why the inputs and outputs of `node` (reached on `port`) do not fit, or "".
std::string portsReason(const Graph& graph, const Node& node, uint32_t port, const Walk& walk) {
    const bool arith = node.opType == "Mul" || node.opType == "Add";
    // Every input but the flow must be a constant (or absent).
    for (uint32_t i = 0; i < node.inputs.size(); ++i) {
        const ValueId in = node.inputs[i];
        if (i != port && in.valid() && !graph.value(in).isInitializer()) {
            return node.opType == "Add"
                       ? "reaches residual Add '" + node.name + "', which joins two branches"
                       : "reaches " + quoted(node) + " with a second non-constant input";
        }
    }
    if ((!arith && port != 0) || node.outputs.empty() || !node.outputs[0].valid()) {
        return "reaches " + quoted(node) + " on an unexpected input";
    }
    if (!extraOutputsUnused(graph, node)) {
        return "reaches " + quoted(node) + ", whose second output is used";
    }
    const bool channelsFirst = node.opType == "MaxPool" || node.opType == "AveragePool" ||
                               node.opType == "BatchNormalization" ||
                               node.opType == "GlobalAveragePool" || node.opType == "GlobalMaxPool";
    if (channelsFirst && !sameAxis(walk.flowAxis, 1, walk.rank)) {
        return "reaches " + quoted(node) + ", which needs channels on axis 1";
    }
    return {};
}

/// BatchNormalization's scale, bias, mean and variance: C float values of its own.
bool addBatchNormParameters(const Graph& graph, NodeId id, Walk& walk, std::string& reason) {
    const Node& node = graph.node(id);
    for (uint32_t i = 1; i < 5 && i < node.inputs.size(); ++i) {
        const ValueId p = node.inputs[i];
        if (!isFloatInitializer(graph, p) || !exclusiveTo(graph, p) ||
            graph.value(p).initializer->numElements() != walk.channels) {
            reason = "reaches " + quoted(node) + " whose parameters are not " +
                     std::to_string(walk.channels) + " float values of its own";
            return false;
        }
        walk.parameters.push_back({id, p, 0, ChannelRole::Output});
    }
    return true;
}

/// The constant of PRelu / Mul / Add: scalar (left alone) or per channel (sliced).
bool addConstantParameter(const Graph& graph, NodeId id, uint32_t port, Walk& walk,
                          std::string& reason) {
    const Node& node = graph.node(id);
    const ValueId constant = node.inputs[node.opType == "PRelu" ? 1 : 1 - port];
    if (!isFloatInitializer(graph, constant)) {
        reason = "reaches " + quoted(node) + " whose constant is not float";
        return false;
    }
    int64_t axis = 0;
    const ConstantKind kind = classifyConstant(*graph.value(constant).initializer, walk.channels,
                                               walk.flowAxis, walk.rank, axis);
    if (kind == ConstantKind::Other) {
        reason = "reaches " + quoted(node) + " whose constant is neither per channel nor scalar";
        return false;
    }
    if (kind == ConstantKind::PerChannel) {
        if (!exclusiveTo(graph, constant)) {
            reason = "reaches " + quoted(node) + " whose constant is shared with other nodes";
            return false;
        }
        walk.parameters.push_back({id, constant, axis, ChannelRole::Output});
    }
    return true;
}

/// Checks that `node` (reached on input `port`) can be an intermediate; on success appends its
/// per-channel parameters to the walk. Otherwise `reason` names the problem.
bool checkIntermediate(const Graph& graph, NodeId id, uint32_t port, Walk& walk,
                       std::string& reason) {
    const Node& node = graph.node(id);
    reason = opKindReason(graph, node, walk);
    if (reason.empty()) {
        reason = portsReason(graph, node, port, walk);
    }
    if (!reason.empty()) {
        return false;
    }
    const std::string& op = node.opType;
    if (op == "Flatten") {
        walk.rank = 2;
        return true;
    }
    if (op == "BatchNormalization") {
        return addBatchNormParameters(graph, id, walk, reason);
    }
    if (op == "PRelu" || op == "Mul" || op == "Add") {
        return addConstantParameter(graph, id, port, walk, reason);
    }
    return true;
}

/// Checks the edge node `use.node` as the exit of the walk; on success completes `section`.
bool checkExit(const Graph& graph, const Node& entryNode, const graph::Use& use, Walk& walk,
               PruningSection& section, std::string& reason) {
    const Node& next = graph.node(use.node);
    KernelInfo exitKernel;
    std::string exitReason;
    if (!edgeKernel(graph, use.node, exitKernel, exitReason)) {
        reason = "reaches " + quoted(next) + ": " + exitReason;
        return false;
    }
    if (use.port != 0) {
        reason = "reaches " + quoted(next) + " on its weight input";
        return false;
    }
    if (exitKernel.inChannels != walk.channels ||
        !sameAxis(exitKernel.flowAxis, walk.flowAxis, walk.rank)) {
        reason = "channel mismatch: " + quoted(next) + " takes " +
                 std::to_string(exitKernel.inChannels) + " input channels, '" + entryNode.name +
                 "' gives " + std::to_string(walk.channels);
        return false;
    }
    if (!exclusiveTo(graph, exitKernel.weight)) {
        reason = "the weights of " + quoted(next) + " are shared with other nodes";
        return false;
    }
    walk.parameters.push_back({use.node, exitKernel.weight, exitKernel.inAxis, ChannelRole::Input});
    section.exit = use.node;
    section.parameters = std::move(walk.parameters);
    return true;
}

/// Why the walk cannot go on from `flow` (a graph output, not one consumer), or "".
std::string flowReason(const Graph& graph, ValueId flow) {
    const Value& value = graph.value(flow);
    if (graph.isOutput(flow)) {
        return "'" + value.name + "' is a graph output";
    }
    if (value.consumers.empty()) {
        return "'" + value.name + "' is not used";
    }
    if (value.consumers.size() != 1) {
        return "'" + value.name + "' fans out to " + std::to_string(value.consumers.size()) +
               " consumers";
    }
    return {};
}

/// Walks forward from `entry`; a section on success, else `reason`.
bool walkFrom(const Graph& graph, NodeId entry, const KernelInfo& kernel, PruningSection& section,
              std::string& reason) {
    const Node& entryNode = graph.node(entry);
    if (!exclusiveTo(graph, kernel.weight) ||
        (kernel.bias.valid() && !exclusiveTo(graph, kernel.bias))) {
        reason = "its weights are shared with other nodes";
        return false;
    }
    Walk walk;
    walk.channels = kernel.outChannels;
    walk.flowAxis = kernel.flowAxis;
    ValueId flow = entryNode.outputs.empty() ? ValueId{} : entryNode.outputs[0];
    if (!flow.valid() || !extraOutputsUnused(graph, entryNode)) {
        reason = "no single output";
        return false;
    }
    walk.rank = rankOf(graph, flow);
    walk.parameters.push_back({entry, kernel.weight, kernel.outAxis, ChannelRole::Output});
    if (kernel.bias.valid()) {
        walk.parameters.push_back({entry, kernel.bias, 0, ChannelRole::Output});
    }
    section.entry = entry;
    section.channels = kernel.outChannels;
    section.flowAxis = kernel.flowAxis;
    section.flowValues.clear();
    section.intermediates.clear();
    for (;;) {
        const Value& value = graph.value(flow);
        section.flowValues.push_back(flow);
        reason = flowReason(graph, flow);
        if (!reason.empty()) {
            return false;
        }
        const graph::Use use = value.consumers[0];
        const Node& next = graph.node(use.node);
        if (isEdgeOpType(next.opType) && next.isDefaultDomain()) {
            return checkExit(graph, entryNode, use, walk, section, reason);
        }
        if (!checkIntermediate(graph, use.node, use.port, walk, reason)) {
            return false;
        }
        section.intermediates.push_back(use.node);
        flow = next.outputs[0];
    }
}

/// Why a node that is in no section is not prunable.
std::string outsideReason(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    if (node.opType == "Concat") {
        return "Concat joins channels of several inputs";
    }
    if (node.opType == "Add" || node.opType == "Sum" || node.opType == "Mul" ||
        node.opType == "Sub") {
        int dynamic = 0;
        for (const ValueId in : node.inputs) {
            dynamic += in.valid() && !graph.value(in).isInitializer() ? 1 : 0;
        }
        if (dynamic > 1) {
            return node.opType == "Add" || node.opType == "Sum"
                       ? "residual " + node.opType + ": joins two branches"
                       : node.opType + " of two branches";
        }
    }
    if (isEdgeOpType(node.opType)) {
        KernelInfo kernel;
        std::string reason;
        if (!edgeKernel(graph, id, kernel, reason)) {
            return reason;
        }
    }
    if (isPerChannelOp(node.opType)) {
        return "per-channel op outside any entry-to-exit path";
    }
    return node.opType + " is not a per-channel op (it may mix or reshape channels)";
}

} // namespace

bool isEdgeOpType(std::string_view opType) {
    return opType == "Conv" || opType == "ConvTranspose" || opType == "Gemm" || opType == "MatMul";
}

bool edgeKernel(const Graph& graph, NodeId id, KernelInfo& kernel, std::string& reason) {
    const Node& node = graph.node(id);
    if (!node.isDefaultDomain()) {
        reason = "op of domain '" + node.domain + "'";
        return false;
    }
    if (node.opType == "Conv") {
        return convKernel(graph, node, false, kernel, reason);
    }
    if (node.opType == "ConvTranspose") {
        return convKernel(graph, node, true, kernel, reason);
    }
    if (node.opType == "Gemm") {
        return gemmKernel(graph, node, kernel, reason);
    }
    if (node.opType == "MatMul") {
        return matMulKernel(graph, node, kernel, reason);
    }
    reason = node.opType + " is not a Conv, ConvTranspose, Gemm or MatMul";
    return false;
}

int SectionDetection::sectionOfEntry(NodeId node) const {
    for (size_t i = 0; i < sections.size(); ++i) {
        if (sections[i].entry == node) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

int SectionDetection::sectionOfExit(NodeId node) const {
    for (size_t i = 0; i < sections.size(); ++i) {
        if (sections[i].exit == node) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

Result<SectionDetection> detectPruningSections(const Graph& graph) {
    QS_ASSIGN_OR_RETURN(const std::vector<NodeId> order, graph.topologicalOrder());
    SectionDetection detection;
    detection.notPrunableReason.assign(graph.numNodeSlots(), std::string());
    std::vector<std::string> entryReason(graph.numNodeSlots());
    std::vector<bool> member(graph.numNodeSlots(), false);
    for (const NodeId id : order) {
        KernelInfo kernel;
        std::string reason;
        if (!edgeKernel(graph, id, kernel, reason)) {
            continue;
        }
        PruningSection section;
        if (!walkFrom(graph, id, kernel, section, reason)) {
            entryReason[id.index()] = "not an entry: " + reason;
            continue;
        }
        member[section.entry.index()] = true;
        member[section.exit.index()] = true;
        for (const NodeId n : section.intermediates) {
            member[n.index()] = true;
        }
        detection.sections.push_back(std::move(section));
    }
    for (const NodeId id : order) {
        if (member[id.index()]) {
            continue;
        }
        const std::string& reason = entryReason[id.index()];
        detection.notPrunableReason[id.index()] =
            reason.empty() ? outsideReason(graph, id) : reason;
    }
    return detection;
}

} // namespace qs::pruning
