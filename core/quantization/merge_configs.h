// Merging the candidate config lists of the quantizers waiting below a branching node, by
// QuantizerPropagationRule (reference/nncf-quantization.md §1.5).
#pragma once

#include "core/quantization/quantizer_config.h"
#include "core/quantization/quantizer_setup.h"

#include <optional>
#include <vector>

namespace qs::quantization {

struct MergedConfigs {
    QuantizerConfigList mergedList; ///< empty: no merge
    /// Per branch: nullopt when the branch folds into the merged quantizer, else the list its own
    /// quantizer keeps (a requantizer below the merged one).
    std::vector<std::optional<QuantizerConfigList>> branchLists;
};

MergedConfigs mergeConfigsForBranches(const std::vector<QuantizerConfigList>& branches,
                                      QuantizerPropagationRule rule);

/// Orders `candidates` by the sum of their indices in the branch lists (missing = longest + 1),
/// ties broken by tieBreakLess.
QuantizerConfigList orderByBranchPriority(QuantizerConfigList candidates,
                                          const std::vector<QuantizerConfigList>& branches);

} // namespace qs::quantization
