// Per-branch bit widths under a branch-merging propagation rule. With MERGE_ALL_IN_ONE (and
// MERGE_IF_ALL_BRANCHES_SAME once the branches agreed) one quantizer sits above a fork and serves
// every branch, so a bit width chosen for it applies to all of them; only
// MERGE_WITH_POTENTIAL_REQUANTIZATION keeps a quantizer per branch below an upstream one
// (DESIGN.md, "Propagation rule"). The GUI asks this module when to offer that rule.
#pragma once

#include "core/quantization/quantization_state.h"

#include <vector>

namespace qs::quantization {

/// True when `rule` merges branch quantizers into one above the fork, so branches cannot get
/// different configs.
bool ruleMergesBranches(QuantizerPropagationRule rule);

/// The points of `changes` that serve several branches (directly quantize more than one op)
/// under a branch-merging rule of `state` and are given a config other than their default (first)
/// candidate: the user is choosing per-branch bit widths the rule cannot keep apart.
std::vector<int> mergedBranchChoices(const QuantizationState& state,
                                     const QuantizerConfigChoice& changes);

} // namespace qs::quantization
