// Quantizer setups (reference/nncf-quantization.md §1.8): the proposal the propagation solver
// produces (MultiConfigQuantizerSetup: each point with its ordered candidate configs, unified-scale
// groups, shared-input groups) and the final setup after one config per point has been chosen and
// redundant quantizers were merged (SingleConfigQuantizerSetup, serialised as NNCF's setup state
// plus our requantization links).
#pragma once

#include "core/quantization/quantizer_config.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace qs::quantization {

/// NNCF's QuantizerPropagationRule with its values.
enum class QuantizerPropagationRule {
    DoNotMergeBranches = 0,
    MergeIfAllBranchesSame = 1,
    MergeWithPotentialRequantization = 2,
    MergeAllInOne = 3,
};

enum class UnifiedScaleType { UnifyOnlyPerTensor = 0, UnifyAlways = 1 };

/// Where a quantizer goes: an activation point (input port of an op, or its output when
/// `inputPortId` is empty) or the weight of an op.
struct InsertionPoint {
    bool isWeight = false;
    std::string targetNodeName;
    std::optional<int> inputPortId;

    bool operator==(const InsertionPoint&) const = default;
    auto operator<=>(const InsertionPoint&) const = default;

    /// "ActivationQuantizationInsertionPoint" or "WeightQuantizationInsertionPoint".
    std::string_view qipClass() const;
    /// Human-readable: "conv_1:0", "relu_3" (output), "conv_1[W]".
    std::string toString() const;
};

struct MultiConfigQuantizationPoint {
    InsertionPoint insertionPoint;
    QuantizerConfigList possibleConfigs; ///< ordered, first = default
    std::vector<std::string> directlyQuantizedOperatorNodeNames;
    int ipNode = -1; ///< InsertionPointGraph node of an activation point
};

struct MultiConfigQuantizerSetup {
    std::map<int, MultiConfigQuantizationPoint> quantizationPoints;
    std::map<int, std::vector<int>> unifiedScaleGroups;
    std::map<int, UnifiedScaleType> unifiedScaleTypes; ///< by group id
    std::map<int, std::vector<int>> sharedInputOperationSetGroups;
    std::map<int, int> requantizationParents; ///< child qp id -> parent qp id from propagation
};

struct SingleConfigQuantizationPoint {
    InsertionPoint insertionPoint;
    QuantizerConfig qconfig;
    std::vector<std::string> directlyQuantizedOperatorNodeNames;
    int ipNode = -1;
};

struct SingleConfigQuantizerSetup {
    std::map<int, SingleConfigQuantizationPoint> quantizationPoints;
    std::map<int, std::vector<int>> unifiedScaleGroups;
    std::map<int, std::vector<int>> sharedInputOperationSetGroups;
    std::map<int, int> requantizationParents; ///< requantizer qp id -> upstream qp id
    std::map<int, int> mergedInto;            ///< removed redundant qp id -> qp that absorbed it

    /// NNCF's setup state plus "requantization" and "merged" links (DESIGN.md, Formats).
    nlohmann::json toJson() const;
};

/// A choice of one config per point (qp id -> config).
using QuantizerConfigChoice = std::map<int, QuantizerConfig>;

/// NNCF's select_first_qconfig_for_each_point.
QuantizerConfigChoice selectFirstConfigs(const MultiConfigQuantizerSetup& setup);

std::string_view ruleName(QuantizerPropagationRule rule);

} // namespace qs::quantization
