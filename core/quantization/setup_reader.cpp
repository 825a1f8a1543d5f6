// The strict setup JSON reader: structure and types first (setupFromJson), then the points
// against the model (checkSetupForModel), every error one line with its JSON path.

#include "core/quantization/setup_reader.h"

#include "core/graph/metatype.h"
#include "core/quantization/insertion_point_values.h"
#include "core/support/atomic_file.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace qs::quantization {

namespace {
using Json = nlohmann::json;

constexpr std::string_view kModelInputPrefix = "nncf_model_input_";
constexpr int kMaxId = std::numeric_limits<int32_t>::max();
constexpr std::string_view kPoints = "quantization_points";

std::string pointPath(int id) {
    return strict::element(kPoints, static_cast<size_t>(id));
}

Result<InsertionPoint> insertionPointFromJson(const Json& entry, const std::string& path) {
    InsertionPoint point;
    QS_ASSIGN_OR_RETURN(const Json* qipClass, strict::require(entry, path, "qip_class"));
    QS_ASSIGN_OR_RETURN(const std::string className,
                        strict::string(*qipClass, strict::member(path, "qip_class")));
    point.isWeight = className == "WeightQuantizationInsertionPoint";
    if (!point.isWeight && className != "ActivationQuantizationInsertionPoint") {
        return strict::fieldError(strict::member(path, "qip_class"),
                                  "unknown insertion point class '" + className +
                                      "' (expected ActivationQuantizationInsertionPoint or "
                                      "WeightQuantizationInsertionPoint)");
    }
    const std::string qipPath = strict::member(path, "qip");
    QS_ASSIGN_OR_RETURN(const Json* qip, strict::require(entry, path, "qip"));
    QS_TRY(strict::onlyKeys(*qip, qipPath, {"target_node_name", "input_port_id"}));
    QS_ASSIGN_OR_RETURN(const Json* name, strict::require(*qip, qipPath, "target_node_name"));
    QS_ASSIGN_OR_RETURN(point.targetNodeName,
                        strict::string(*name, strict::member(qipPath, "target_node_name")));
    if (point.targetNodeName.empty()) {
        return strict::fieldError(strict::member(qipPath, "target_node_name"), "empty node name");
    }
    const auto port = qip->find("input_port_id");
    if (port != qip->end() && !port->is_null()) {
        const std::string portPath = strict::member(qipPath, "input_port_id");
        if (point.isWeight) {
            return strict::fieldError(portPath,
                                      "a weight point has no input port (null or absent)");
        }
        QS_ASSIGN_OR_RETURN(point.inputPortId, strict::smallInteger(*port, portPath, 0, kMaxId));
    }
    return point;
}

Result<SingleConfigQuantizationPoint> pointFromJson(const Json& entry, const std::string& path) {
    QS_TRY(strict::onlyKeys(
        entry, path, {"qip", "qip_class", "qconfig", "directly_quantized_operator_node_names"}));
    SingleConfigQuantizationPoint point;
    QS_ASSIGN_OR_RETURN(point.insertionPoint, insertionPointFromJson(entry, path));
    QS_ASSIGN_OR_RETURN(const Json* qconfig, strict::require(entry, path, "qconfig"));
    QS_ASSIGN_OR_RETURN(point.qconfig,
                        quantizerConfigFromJson(*qconfig, strict::member(path, "qconfig")));
    const auto names = entry.find("directly_quantized_operator_node_names");
    if (names != entry.end()) {
        const std::string namesPath =
            strict::member(path, "directly_quantized_operator_node_names");
        QS_TRY(strict::expectArray(*names, namesPath));
        for (size_t i = 0; i < names->size(); ++i) {
            QS_ASSIGN_OR_RETURN(std::string name,
                                strict::string((*names)[i], strict::element(namesPath, i)));
            point.directlyQuantizedOperatorNodeNames.push_back(std::move(name));
        }
    }
    return point;
}

/// `{"<gid>": [qp ids]}`: every member an existing point, none listed twice in a group.
Result<std::map<int, std::vector<int>>> groupsFromJson(const Json& root, std::string_view key,
                                                       const SingleConfigQuantizerSetup& setup) {
    std::map<int, std::vector<int>> groups;
    const auto it = root.find(key);
    if (it == root.end()) {
        return groups;
    }
    const std::string path(key);
    QS_TRY(strict::expectObject(*it, path));
    for (const auto& [gidText, members] : it->items()) {
        QS_ASSIGN_OR_RETURN(const int gid, strict::idKey(gidText, path));
        const std::string groupPath = strict::member(path, gidText);
        QS_TRY(strict::expectArray(members, groupPath));
        std::vector<int>& ids = groups[gid];
        for (size_t i = 0; i < members.size(); ++i) {
            const std::string memberPath = strict::element(groupPath, i);
            QS_ASSIGN_OR_RETURN(const int id,
                                strict::smallInteger(members[i], memberPath, 0, kMaxId));
            if (!setup.quantizationPoints.contains(id)) {
                return strict::fieldError(memberPath,
                                          "no quantization point " + std::to_string(id));
            }
            if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
                return strict::fieldError(memberPath, "quantization point " + std::to_string(id) +
                                                          " is listed twice in the group");
            }
            ids.push_back(id);
        }
    }
    return groups;
}

/// Unified scales are shared between activation quantizers only. A group unifies the collected
/// range (as NNCF merges the members' statistics; each member then computes its scale from its
/// own config, so HAWQ may give members different bit widths), which needs one granularity: a
/// per-channel member cannot share a per-tensor range (finalization splits such members out).
Result<void> checkUnifiedScaleMembers(const SingleConfigQuantizerSetup& setup) {
    for (const auto& [gid, members] : setup.unifiedScaleGroups) {
        const std::string groupPath = strict::member("unified_scale_groups", std::to_string(gid));
        for (size_t i = 0; i < members.size(); ++i) {
            const SingleConfigQuantizationPoint& point = setup.quantizationPoints.at(members[i]);
            if (point.insertionPoint.isWeight) {
                return strict::fieldError(
                    strict::element(groupPath, i),
                    "quantization point " + std::to_string(members[i]) +
                        " is a weight point; scales are unified between activations");
            }
            const QuantizerConfig& first = setup.quantizationPoints.at(members.front()).qconfig;
            if (point.qconfig.perChannel != first.perChannel) {
                return strict::fieldError(
                    strict::element(groupPath, i),
                    "quantization point " + std::to_string(members[i]) + " (" +
                        point.qconfig.toString() + ") cannot share a scale with point " +
                        std::to_string(members.front()) + " (" + first.toString() +
                        "): members of a unified-scale group share one per-tensor range");
            }
        }
    }
    return {};
}

/// One link object {"<from>": id, "<to>": id} of the "requantization" or "merged" list.
Result<std::pair<int, int>> linkFromJson(const Json& link, const std::string& path,
                                         std::string_view from, std::string_view to) {
    QS_TRY(strict::onlyKeys(link, path, {from, to}));
    QS_ASSIGN_OR_RETURN(const Json* fromJson, strict::require(link, path, from));
    QS_ASSIGN_OR_RETURN(const int fromId,
                        strict::smallInteger(*fromJson, strict::member(path, from), 0, kMaxId));
    QS_ASSIGN_OR_RETURN(const Json* toJson, strict::require(link, path, to));
    QS_ASSIGN_OR_RETURN(const int toId,
                        strict::smallInteger(*toJson, strict::member(path, to), 0, kMaxId));
    return std::pair{fromId, toId};
}

/// "requantization": [{"requantizer", "upstream"}], both existing points, one upstream each.
Result<void> requantizationFromJson(const Json& root, SingleConfigQuantizerSetup& setup) {
    const auto it = root.find("requantization");
    if (it == root.end()) {
        return {};
    }
    QS_TRY(strict::expectArray(*it, "requantization"));
    for (size_t i = 0; i < it->size(); ++i) {
        const std::string path = strict::element("requantization", i);
        QS_ASSIGN_OR_RETURN(const auto link,
                            linkFromJson((*it)[i], path, "requantizer", "upstream"));
        for (const auto& [field, id] :
             {std::pair{"requantizer", link.first}, std::pair{"upstream", link.second}}) {
            if (!setup.quantizationPoints.contains(id)) {
                return strict::fieldError(strict::member(path, field),
                                          "no quantization point " + std::to_string(id));
            }
        }
        if (!setup.requantizationParents.emplace(link.first, link.second).second) {
            return strict::fieldError(strict::member(path, "requantizer"),
                                      "quantization point " + std::to_string(link.first) +
                                          " has a second upstream");
        }
    }
    return {};
}

/// "merged": [{"removed", "merged_into"}]: a removed point is gone, the absorbing one exists.
Result<void> mergedFromJson(const Json& root, SingleConfigQuantizerSetup& setup) {
    const auto it = root.find("merged");
    if (it == root.end()) {
        return {};
    }
    QS_TRY(strict::expectArray(*it, "merged"));
    for (size_t i = 0; i < it->size(); ++i) {
        const std::string path = strict::element("merged", i);
        QS_ASSIGN_OR_RETURN(const auto link,
                            linkFromJson((*it)[i], path, "removed", "merged_into"));
        if (setup.quantizationPoints.contains(link.first)) {
            return strict::fieldError(strict::member(path, "removed"),
                                      "quantization point " + std::to_string(link.first) +
                                          " is still in quantization_points");
        }
        if (!setup.quantizationPoints.contains(link.second)) {
            return strict::fieldError(strict::member(path, "merged_into"),
                                      "no quantization point " + std::to_string(link.second));
        }
        if (!setup.mergedInto.emplace(link.first, link.second).second) {
            return strict::fieldError(strict::member(path, "removed"),
                                      "quantization point " + std::to_string(link.first) +
                                          " is merged twice");
        }
    }
    return {};
}

/// The target node (or model input) and port of one point, with the path of the wrong field.
Result<void> checkPointForModel(int id, const SingleConfigQuantizationPoint& point,
                                const graph::Graph& model) {
    const std::string qipPath = strict::member(pointPath(id), "qip");
    const std::string namePath = strict::member(qipPath, "target_node_name");
    const std::string portPath = strict::member(qipPath, "input_port_id");
    const InsertionPoint& ip = point.insertionPoint;
    const std::optional<graph::NodeId> node = model.findNode(ip.targetNodeName);
    if (!node) {
        if (ip.isWeight || !ip.targetNodeName.starts_with(kModelInputPrefix)) {
            return strict::fieldError(namePath, "no node '" + ip.targetNodeName + "' in the model");
        }
        if (ip.inputPortId) {
            return strict::fieldError(portPath, "a model input point has no input port (null)");
        }
    } else if (ip.isWeight) {
        if (graph::constantWeightPorts(model, *node).empty()) {
            return strict::fieldError(namePath, "node '" + ip.targetNodeName +
                                                    "' has no constant weight to quantize");
        }
    } else if (ip.inputPortId) {
        const graph::Node& n = model.node(*node);
        const auto port = static_cast<size_t>(*ip.inputPortId);
        if (port >= n.inputs.size() || !n.inputs[port].valid()) {
            return strict::fieldError(portPath, "node '" + ip.targetNodeName + "' has " +
                                                    std::to_string(n.inputs.size()) +
                                                    " inputs, no input " +
                                                    std::to_string(*ip.inputPortId));
        }
    } else {
        const graph::Node& n = model.node(*node);
        if (n.outputs.empty() || !n.outputs[0].valid()) {
            return strict::fieldError(portPath,
                                      "null (a post-hook point on the output), but node '" +
                                          ip.targetNodeName + "' has no output");
        }
    }
    // Whatever else export would trip on (a model input index out of range, a weight axis).
    if (auto resolved = resolveInsertionPoint(model, ip); !resolved.ok()) {
        return strict::fieldError(qipPath, resolved.error().message());
    }
    const std::string namesPath =
        strict::member(pointPath(id), "directly_quantized_operator_node_names");
    for (size_t i = 0; i < point.directlyQuantizedOperatorNodeNames.size(); ++i) {
        const std::string& name = point.directlyQuantizedOperatorNodeNames[i];
        if (!model.findNode(name)) {
            return strict::fieldError(strict::element(namesPath, i),
                                      "no node '" + name + "' in the model");
        }
    }
    return {};
}
} // namespace

Result<SingleConfigQuantizerSetup> setupFromJson(const Json& root) {
    QS_TRY(strict::onlyKeys(root, "",
                            {"quantization_points", "unified_scale_groups",
                             "shared_input_operation_set_groups", "requantization", "merged"}));
    SingleConfigQuantizerSetup setup;
    QS_ASSIGN_OR_RETURN(const Json* points, strict::require(root, "", kPoints));
    QS_TRY(strict::expectObject(*points, kPoints));
    std::map<std::tuple<bool, std::string, int>, int> byPlace; // point -> id; port -1: output
    for (const auto& [key, entry] : points->items()) {
        QS_ASSIGN_OR_RETURN(const int id, strict::idKey(key, kPoints));
        QS_ASSIGN_OR_RETURN(SingleConfigQuantizationPoint point,
                            pointFromJson(entry, pointPath(id)));
        const InsertionPoint& ip = point.insertionPoint;
        if (const auto [other, fresh] = byPlace.emplace(
                std::tuple{ip.isWeight, ip.targetNodeName, ip.inputPortId.value_or(-1)}, id);
            !fresh) {
            return strict::fieldError(strict::member(pointPath(id), "qip"),
                                      "the same insertion point " +
                                          point.insertionPoint.toString() + " as " +
                                          pointPath(other->second));
        }
        setup.quantizationPoints.emplace(id, std::move(point));
    }
    QS_ASSIGN_OR_RETURN(setup.unifiedScaleGroups,
                        groupsFromJson(root, "unified_scale_groups", setup));
    QS_TRY(checkUnifiedScaleMembers(setup));
    QS_ASSIGN_OR_RETURN(setup.sharedInputOperationSetGroups,
                        groupsFromJson(root, "shared_input_operation_set_groups", setup));
    QS_TRY(requantizationFromJson(root, setup));
    QS_TRY(mergedFromJson(root, setup));
    return setup;
}

Result<void> checkSetupForModel(const SingleConfigQuantizerSetup& setup,
                                const graph::Graph& model) {
    for (const auto& [id, point] : setup.quantizationPoints) {
        QS_TRY(checkPointForModel(id, point, model));
    }
    return {};
}

Result<SingleConfigQuantizerSetup> parseSetup(std::string_view text, const graph::Graph& model) {
    QS_ASSIGN_OR_RETURN(const Json root, strict::parseStrict(text));
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup, setupFromJson(root));
    QS_TRY(checkSetupForModel(setup, model));
    return setup;
}

Result<SingleConfigQuantizerSetup> readSetupFile(const std::filesystem::path& path,
                                                 const graph::Graph& model) {
    QS_ASSIGN_OR_RETURN(const std::string text, readFile(path)); // names the file itself
    return parseSetup(text, model).context("setup '" + path.string() + "'");
}

} // namespace qs::quantization
