// Config-list merging at branches: intersection (MERGE_ALL_IN_ONE), equal multisets
// (MERGE_IF_ALL_BRANCHES_SAME), requantization-compatible candidates
// (MERGE_WITH_POTENTIAL_REQUANTIZATION) or nothing (DO_NOT_MERGE_BRANCHES).

#include "core/quantization/merge_configs.h"

#include <algorithm>

namespace qs::quantization {

namespace {
bool contains(const QuantizerConfigList& list, const QuantizerConfig& config) {
    return std::find(list.begin(), list.end(), config) != list.end();
}

bool sameMultiset(const QuantizerConfigList& a, QuantizerConfigList b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (const QuantizerConfig& config : a) {
        auto it = std::find(b.begin(), b.end(), config);
        if (it == b.end()) {
            return false;
        }
        b.erase(it);
    }
    return true;
}

MergedConfigs noMerge(const std::vector<QuantizerConfigList>& branches) {
    MergedConfigs out;
    for (const auto& branch : branches) {
        out.branchLists.emplace_back(branch);
    }
    return out;
}
} // namespace

QuantizerConfigList orderByBranchPriority(QuantizerConfigList candidates,
                                          const std::vector<QuantizerConfigList>& branches) {
    size_t maxLen = 0;
    for (const auto& branch : branches) {
        maxLen = std::max(maxLen, branch.size());
    }
    auto priority = [&](const QuantizerConfig& config) {
        size_t sum = 0;
        for (const auto& branch : branches) {
            auto it = std::find(branch.begin(), branch.end(), config);
            sum += it == branch.end() ? maxLen + 1 : static_cast<size_t>(it - branch.begin());
        }
        return sum;
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const QuantizerConfig& a, const QuantizerConfig& b) {
                         const size_t pa = priority(a);
                         const size_t pb = priority(b);
                         return pa != pb ? pa < pb : tieBreakLess(a, b);
                     });
    return candidates;
}

namespace {
/// Every config of any branch that is in each branch list or, for
/// MERGE_WITH_POTENTIAL_REQUANTIZATION, that each branch could requantize.
QuantizerConfigList mergeCandidates(const std::vector<QuantizerConfigList>& branches,
                                    bool allowRequantization) {
    QuantizerConfigList candidates;
    for (const auto& branch : branches) {
        for (const QuantizerConfig& config : branch) {
            if (!contains(candidates, config)) {
                candidates.push_back(config);
            }
        }
    }
    auto acceptedBy = [&](const QuantizerConfigList& branch, const QuantizerConfig& candidate) {
        if (contains(branch, candidate)) {
            return true;
        }
        return allowRequantization &&
               std::all_of(branch.begin(), branch.end(), [&](const QuantizerConfig& c) {
                   return c.isValidRequantizationFor(candidate);
               });
    };
    QuantizerConfigList kept;
    for (const QuantizerConfig& candidate : candidates) {
        if (std::all_of(branches.begin(), branches.end(), [&](const QuantizerConfigList& branch) {
                return acceptedBy(branch, candidate);
            })) {
            kept.push_back(candidate);
        }
    }
    return kept;
}
} // namespace

MergedConfigs mergeConfigsForBranches(const std::vector<QuantizerConfigList>& branches,
                                      QuantizerPropagationRule rule) {
    if (branches.empty() || rule == QuantizerPropagationRule::DoNotMergeBranches) {
        return noMerge(branches);
    }
    MergedConfigs out;
    out.branchLists.assign(branches.size(), std::nullopt);
    if (rule == QuantizerPropagationRule::MergeIfAllBranchesSame) {
        const bool allSame =
            std::all_of(branches.begin(), branches.end(), [&](const QuantizerConfigList& branch) {
                return sameMultiset(branch, branches.front());
            });
        if (!allSame) {
            return noMerge(branches);
        }
        out.mergedList = branches.front();
        return out;
    }
    const bool requantize = rule == QuantizerPropagationRule::MergeWithPotentialRequantization;
    QuantizerConfigList kept = mergeCandidates(branches, requantize);
    if (kept.empty()) {
        return noMerge(branches);
    }
    out.mergedList = orderByBranchPriority(std::move(kept), branches);
    if (requantize) {
        // Branches whose list differs keep their own quantizer below the merged one.
        for (size_t i = 0; i < branches.size(); ++i) {
            if (!sameMultiset(branches[i], out.mergedList)) {
                out.branchLists[i] = branches[i];
            }
        }
    }
    return out;
}

} // namespace qs::quantization
