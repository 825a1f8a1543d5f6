// Setup helpers: insertion point names, first-config selection, and the JSON form of the final
// setup (NNCF's SingleConfigQuantizerSetup state plus requantization and merge links).

#include "core/quantization/quantizer_setup.h"

namespace qs::quantization {

std::string_view InsertionPoint::qipClass() const {
    return isWeight ? "WeightQuantizationInsertionPoint" : "ActivationQuantizationInsertionPoint";
}

std::string InsertionPoint::toString() const {
    if (isWeight) {
        return targetNodeName + "[W]";
    }
    return inputPortId ? targetNodeName + ":" + std::to_string(*inputPortId) : targetNodeName;
}

QuantizerConfigChoice selectFirstConfigs(const MultiConfigQuantizerSetup& setup) {
    QuantizerConfigChoice choice;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (!point.possibleConfigs.empty()) {
            choice[id] = point.possibleConfigs.front();
        }
    }
    return choice;
}

std::string_view ruleName(QuantizerPropagationRule rule) {
    switch (rule) {
    case QuantizerPropagationRule::DoNotMergeBranches:
        return "DO_NOT_MERGE_BRANCHES";
    case QuantizerPropagationRule::MergeIfAllBranchesSame:
        return "MERGE_IF_ALL_BRANCHES_SAME";
    case QuantizerPropagationRule::MergeWithPotentialRequantization:
        return "MERGE_WITH_POTENTIAL_REQUANTIZATION";
    case QuantizerPropagationRule::MergeAllInOne:
        return "MERGE_ALL_IN_ONE";
    }
    return "?";
}

nlohmann::json SingleConfigQuantizerSetup::toJson() const {
    nlohmann::json points = nlohmann::json::object();
    for (const auto& [id, point] : quantizationPoints) {
        nlohmann::json qip;
        qip["target_node_name"] = point.insertionPoint.targetNodeName;
        if (!point.insertionPoint.isWeight) {
            qip["input_port_id"] = point.insertionPoint.inputPortId
                                       ? nlohmann::json(*point.insertionPoint.inputPortId)
                                       : nlohmann::json();
        }
        nlohmann::json entry;
        entry["qip"] = qip;
        entry["qip_class"] = point.insertionPoint.qipClass();
        entry["qconfig"] = quantization::toJson(point.qconfig);
        entry["directly_quantized_operator_node_names"] = point.directlyQuantizedOperatorNodeNames;
        points[std::to_string(id)] = entry;
    }
    auto groups = [](const std::map<int, std::vector<int>>& in) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [gid, ids] : in) {
            out[std::to_string(gid)] = ids;
        }
        return out;
    };
    nlohmann::json requant = nlohmann::json::array();
    for (const auto& [child, parent] : requantizationParents) {
        requant.push_back({{"requantizer", child}, {"upstream", parent}});
    }
    nlohmann::json merged = nlohmann::json::array();
    for (const auto& [removed, into] : mergedInto) {
        merged.push_back({{"removed", removed}, {"merged_into", into}});
    }
    return {{"quantization_points", points},
            {"unified_scale_groups", groups(unifiedScaleGroups)},
            {"shared_input_operation_set_groups", groups(sharedInputOperationSetGroups)},
            {"requantization", requant},
            {"merged", merged}};
}

} // namespace qs::quantization
