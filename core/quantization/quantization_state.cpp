// Proposal + choice + finalized setup of one model and the per-quantizer marks drawn from them.

#include "core/quantization/quantization_state.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>
#include <utility>

namespace qs::quantization {

namespace {
constexpr std::array<std::pair<std::string_view, QuantizerPropagationRule>, 4> kRules = {{
    {"do_not_merge_branches", QuantizerPropagationRule::DoNotMergeBranches},
    {"merge_if_all_branches_same", QuantizerPropagationRule::MergeIfAllBranchesSame},
    {"merge_with_potential_requantization",
     QuantizerPropagationRule::MergeWithPotentialRequantization},
    {"merge_all_in_one", QuantizerPropagationRule::MergeAllInOne},
}};

/// Member id -> group id, built once: looking each mark up in every group is quadratic on big
/// graphs. The first (lowest-id) group of a member wins, as a scan over the groups would give.
std::unordered_map<int, int> groupOfMember(const std::map<int, std::vector<int>>& groups) {
    std::unordered_map<int, int> out;
    for (const auto& [group, members] : groups) {
        for (const int id : members) {
            out.try_emplace(id, group);
        }
    }
    return out;
}

} // namespace

Result<QuantizationState> computeQuantization(const graph::Graph& model,
                                              const QuantizationSettings& settings) {
    QS_ASSIGN_OR_RETURN(HWConfig hw, HWConfig::fromArgument(settings.hw));
    PropagationOptions options = presetOptions(settings.preset, model.opsetVersion());
    options.rule = settings.rule;
    QuantizationState state;
    state.settings = settings;
    QS_ASSIGN_OR_RETURN(state.proposal, proposeQuantizerSetup(model, hw, options));
    state.choice = selectFirstConfigs(state.proposal.setup);
    QS_ASSIGN_OR_RETURN(state.setup, finalizeSetup(state.proposal, state.choice));
    return state;
}

Result<void> chooseConfig(QuantizationState& state, int pointId, const QuantizerConfig& config) {
    return chooseConfigs(state, {{pointId, config}});
}

QuantizerConfigChoice configsWithBitwidth(const QuantizationState& state,
                                          const std::vector<int>& pointIds, int bits) {
    QuantizerConfigChoice out;
    for (int id : pointIds) {
        auto point = state.proposal.setup.quantizationPoints.find(id);
        if (point == state.proposal.setup.quantizationPoints.end()) {
            continue;
        }
        for (const QuantizerConfig& config : point->second.possibleConfigs) {
            if (config.numBits == bits) {
                out[id] = config;
                break;
            }
        }
    }
    return out;
}

Result<void> chooseConfigs(QuantizationState& state, const QuantizerConfigChoice& changes) {
    QuantizerConfigChoice choice = state.choice;
    for (const auto& [id, config] : changes) {
        choice[id] = config;
    }
    QS_ASSIGN_OR_RETURN(SingleConfigQuantizerSetup setup, finalizeSetup(state.proposal, choice));
    state.choice = std::move(choice);
    state.setup = std::move(setup);
    return {};
}

std::string_view statusName(QuantizerStatus status) {
    switch (status) {
    case QuantizerStatus::Active:
        return "active";
    case QuantizerStatus::Merged:
        return "merged";
    case QuantizerStatus::Requantizer:
        return "requant";
    }
    return "?";
}

std::vector<QuantizerMark> quantizerMarks(const SingleConfigQuantizerSetup& setup,
                                          const MultiConfigQuantizerSetup* proposal) {
    std::map<int, QuantizerMark> marks;
    const std::unordered_map<int, int> groupOf = groupOfMember(setup.unifiedScaleGroups);
    for (const auto& [id, point] : setup.quantizationPoints) {
        QuantizerMark mark;
        mark.id = id;
        mark.point = point.insertionPoint;
        mark.config = point.qconfig;
        mark.directlyQuantized = point.directlyQuantizedOperatorNodeNames;
        if (auto parent = setup.requantizationParents.find(id);
            parent != setup.requantizationParents.end()) {
            mark.status = QuantizerStatus::Requantizer;
            mark.linkedTo = parent->second;
        }
        if (auto group = groupOf.find(id); group != groupOf.end()) {
            mark.unifiedGroup = group->second;
        }
        marks.emplace_hint(marks.end(), id, std::move(mark));
    }
    for (const auto& [id, into] : proposal ? setup.mergedInto : std::map<int, int>{}) {
        auto source = proposal->quantizationPoints.find(id);
        auto absorbing = setup.quantizationPoints.find(into);
        if (source == proposal->quantizationPoints.end()) {
            continue;
        }
        QuantizerMark mark;
        mark.id = id;
        mark.point = source->second.insertionPoint;
        if (absorbing != setup.quantizationPoints.end()) {
            mark.config = absorbing->second.qconfig;
        }
        mark.status = QuantizerStatus::Merged;
        mark.linkedTo = into;
        mark.directlyQuantized = source->second.directlyQuantizedOperatorNodeNames;
        marks[id] = std::move(mark);
    }
    for (auto& [id, mark] : marks) {
        if (proposal == nullptr) {
            break;
        }
        if (auto point = proposal->quantizationPoints.find(id);
            point != proposal->quantizationPoints.end()) {
            mark.candidateCount = static_cast<int>(point->second.possibleConfigs.size());
        }
    }
    std::vector<QuantizerMark> out;
    out.reserve(marks.size());
    for (auto& [id, mark] : marks) {
        out.push_back(std::move(mark));
    }
    return out;
}

BitwidthDistribution bitwidthDistribution(const SingleConfigQuantizerSetup& setup,
                                          const graph::Graph& model) {
    BitwidthDistribution out;
    // Graph::findNode scans every node; the charts redraw on every edit of big graphs.
    std::unordered_map<std::string_view, graph::NodeId> nodeByName;
    for (const graph::NodeId node : model.nodeIds()) {
        nodeByName.try_emplace(model.node(node).name, node);
    }
    for (const auto& [id, point] : setup.quantizationPoints) {
        const int bits = point.qconfig.numBits;
        if (!point.insertionPoint.isWeight) {
            ++out.activationQuantizers[bits];
            continue;
        }
        ++out.weightQuantizers[bits];
        const auto node = nodeByName.find(point.insertionPoint.targetNodeName);
        if (node == nodeByName.end()) {
            continue;
        }
        for (graph::ValueId input : model.node(node->second).inputs) {
            if (!input.valid() || !model.value(input).isInitializer()) {
                continue;
            }
            const auto& tensor = *model.value(input).initializer;
            if (tensor.dims().size() >= 2) {
                out.weightParameters[bits] += tensor.numElements();
            }
        }
    }
    return out;
}

std::string_view ruleArgument(QuantizerPropagationRule rule) {
    for (const auto& [name, value] : kRules) {
        if (value == rule) {
            return name;
        }
    }
    return "merge_all_in_one";
}

std::optional<QuantizerPropagationRule> ruleFromArgument(std::string_view text) {
    for (const auto& [name, value] : kRules) {
        if (name == text) {
            return value;
        }
    }
    return std::nullopt;
}

} // namespace qs::quantization
