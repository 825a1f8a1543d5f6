#include "core/quantization/branch_choice.h"

namespace qs::quantization {

bool ruleMergesBranches(QuantizerPropagationRule rule) {
    return rule == QuantizerPropagationRule::MergeAllInOne ||
           rule == QuantizerPropagationRule::MergeIfAllBranchesSame;
}

std::vector<int> mergedBranchChoices(const QuantizationState& state,
                                     const QuantizerConfigChoice& changes) {
    std::vector<int> ids;
    if (!ruleMergesBranches(state.settings.rule)) {
        return ids;
    }
    for (const auto& [id, config] : changes) {
        const auto point = state.proposal.setup.quantizationPoints.find(id);
        if (point == state.proposal.setup.quantizationPoints.end() ||
            point->second.insertionPoint.isWeight ||
            point->second.directlyQuantizedOperatorNodeNames.size() < 2 ||
            point->second.possibleConfigs.empty()) {
            continue;
        }
        if (!(config == point->second.possibleConfigs.front())) {
            ids.push_back(id);
        }
    }
    return ids;
}

} // namespace qs::quantization
