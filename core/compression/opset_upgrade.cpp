#include "core/compression/opset_upgrade.h"

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

namespace qs::compression {

using graph::Graph;
using graph::Node;
using graph::NodeId;
using graph::ValueId;

namespace {
/// Reductions whose `axes` attribute became an input at opset 18 (ReduceSum already at 13).
constexpr std::array<std::string_view, 9> kReductionsAt18 = {
    "ReduceMean", "ReduceMax",    "ReduceMin",       "ReduceProd",     "ReduceL1",
    "ReduceL2",   "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};

bool crosses(int64_t from, int64_t to, int64_t version) {
    return from < version && to >= version;
}

/// The opset at which `node`'s `attrName` attribute became input `port`, or 0.
int64_t attributeToInputVersion(const Node& node, std::string_view& attrName) {
    if (std::find(kReductionsAt18.begin(), kReductionsAt18.end(), node.opType) !=
        kReductionsAt18.end()) {
        attrName = "axes";
        return 18;
    }
    if (node.opType == "ReduceSum" || node.opType == "Squeeze" || node.opType == "Unsqueeze") {
        attrName = "axes";
        return 13;
    }
    if (node.opType == "Split") {
        attrName = "split";
        return 13;
    }
    return 0;
}

Result<void> checkMigratable(const Graph& graph, NodeId id, int64_t from, int64_t to) {
    const Node& node = graph.node(id);
    if (!node.isDefaultDomain()) {
        return success();
    }
    auto refuse = [&](const std::string& why) {
        return Error(Errc::Unsupported, "cannot raise the opset from " + std::to_string(from) +
                                            " to " + std::to_string(to) + ": node '" + node.name +
                                            "' (" + node.opType + ") " + why);
    };
    const bool softmaxLike =
        node.opType == "Softmax" || node.opType == "LogSoftmax" || node.opType == "Hardmax";
    if (softmaxLike && crosses(from, to, 13)) {
        // Before 13 the input is coerced to 2-D at `axis` (default 1); from 13 on `axis`
        // (default -1) is a single axis. They agree only when the axis is the last one.
        const graph::TensorShape& shape = graph.value(node.inputs[0]).shape;
        const int64_t axis = node.intAttr("axis", 1);
        const auto rank = static_cast<int64_t>(shape.rank());
        if (!(axis == -1 || (shape.rankKnown && axis == rank - 1))) {
            return refuse("changes meaning: its axis is not the last one");
        }
    }
    if (node.opType == "GroupNormalization" && crosses(from, to, 21)) {
        return refuse("changes meaning: scale and bias became per channel");
    }
    if (node.hasSubgraph()) {
        return refuse("has a subgraph whose nodes would need migrating too");
    }
    return success();
}

void moveAttributeToInput(Graph& graph, NodeId id, std::string_view attrName, size_t port) {
    Node& node = graph.node(id);
    const auto found = std::find_if(node.attributes.begin(), node.attributes.end(),
                                    [&](const auto& a) { return a.name == attrName; });
    if (found == node.attributes.end()) {
        return;
    }
    const std::vector<int64_t> values = node.intsAttr(attrName);
    const std::string name = uniqueValueName(graph, (node.name.empty() ? node.opType : node.name) +
                                                        "_" + std::string(attrName));
    node.attributes.erase(found);
    const ValueId input = graph.addInitializer(
        name, graph::TensorData::fromValues<int64_t>(graph::DataType::Int64,
                                                     {static_cast<int64_t>(values.size())},
                                                     std::span<const int64_t>(values)));
    Node& current = graph.node(id);
    while (current.inputs.size() < port) {
        current.inputs.push_back(ValueId());
    }
    if (current.inputs.size() == port) {
        current.inputs.push_back(ValueId());
    }
    graph.setNodeInput(id, static_cast<uint32_t>(port), input);
}

/// Split needs `num_outputs` from 18 on when no split sizes are given.
void migrateSplit(graph::Node& node) {
    const bool hasSplitInput = node.inputs.size() > 1 && node.inputs[1].valid();
    if (!hasSplitInput && node.attribute("num_outputs") == nullptr) {
        node.attributes.push_back({"num_outputs", static_cast<int64_t>(node.outputs.size()), {}});
    }
}

/// GridSample's modes were renamed at 20: bilinear -> linear, bicubic -> cubic.
void migrateGridSample(graph::Node& node) {
    for (graph::Attribute& attribute : node.attributes) {
        auto* mode = std::get_if<std::string>(&attribute.value);
        if (attribute.name == "mode" && mode != nullptr) {
            *mode = *mode == "bilinear" ? "linear" : (*mode == "bicubic" ? "cubic" : *mode);
        }
    }
    if (node.attribute("mode") == nullptr) {
        node.attributes.push_back({"mode", std::string("linear"), {}});
    }
}

void migrateNode(Graph& graph, NodeId id, int64_t from, int64_t to) {
    if (!graph.node(id).isDefaultDomain()) {
        return;
    }
    std::string_view attrName;
    const int64_t version = attributeToInputVersion(graph.node(id), attrName);
    if (version > 0 && crosses(from, to, version)) {
        moveAttributeToInput(graph, id, attrName, 1);
    }
    Node& migrated = graph.node(id);
    if (migrated.opType == "Split" && crosses(from, to, 18)) {
        migrateSplit(migrated);
    }
    if (migrated.opType == "GridSample" && crosses(from, to, 20)) {
        migrateGridSample(migrated);
    }
}
} // namespace

std::string uniqueValueName(const Graph& graph, const std::string& base) {
    if (!graph.findValue(base)) {
        return base;
    }
    for (int suffix = 1;; ++suffix) {
        std::string candidate = base + "_" + std::to_string(suffix);
        if (!graph.findValue(candidate)) {
            return candidate;
        }
    }
}

Result<void> raiseDefaultOpset(Graph& graph, int64_t target) {
    const int64_t from = graph.opsetVersion();
    if (from >= target) {
        return success();
    }
    if (from < kMinUpgradableOpset) {
        return Error(Errc::Unsupported, "the model imports opset " + std::to_string(from) +
                                            "; raising it to " + std::to_string(target) +
                                            " is supported from opset " +
                                            std::to_string(kMinUpgradableOpset) + " on");
    }
    const std::vector<NodeId> nodes = graph.nodeIds();
    for (const NodeId id : nodes) {
        QS_TRY(checkMigratable(graph, id, from, target));
    }
    for (const NodeId id : nodes) {
        migrateNode(graph, id, from, target);
    }
    for (graph::OpsetImport& opset : graph.metadata().opsetImports) {
        if (opset.domain.empty() || opset.domain == "ai.onnx") {
            opset.version = target;
        }
    }
    return success();
}

Result<void> raiseOpsetAndIrVersion(Graph& graph, int64_t target) {
    QS_TRY(raiseDefaultOpset(graph, target));
    // IR 7 brought opset 13, IR 10 opset 21 (and the int4/uint4 types).
    constexpr int64_t kIrOfPerAxisOpset = 7;
    constexpr int64_t kIrOfInt4Opset = 10;
    int64_t& irVersion = graph.metadata().irVersion;
    if (target >= kInt4QdqOpset) {
        irVersion = std::max(irVersion, kIrOfInt4Opset);
    } else if (target >= kPerAxisQdqOpset) {
        irVersion = std::max(irVersion, kIrOfPerAxisOpset);
    }
    return success();
}

} // namespace qs::compression
