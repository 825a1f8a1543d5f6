// The exact Pareto search (`--search pareto`; none of NNCF, MCT or AIMET offers it): each adjacency
// group is one item whose options are its joint weight bit widths (strict mode: one width for the
// whole group) with the activation bits they imply; dynamic programming over the items on the
// BitOps cost keeps, after each item, only the (cost, metric) pairs no other pair dominates. NNCF's
// excessive-bitwidth filter applies as to the trace-order candidates (an assignment using every
// bit width that no activation allows is dropped): the pairs carry the set of excessive widths
// used so far and are compared only within one set until the end. The result is the whole front
// over the filtered assignments: for every BitOps budget the smallest metric any of them reaches,
// so at any target it is at least as good as the trace-order choice.
#pragma once

#include "core/mixed_precision/bitops.h"
#include "core/mixed_precision/hawq_problem.h"
#include "core/support/progress.h"

#include <span>
#include <vector>

namespace qs::mixed_precision {

/// Options a group may take before the search refuses it (the joint choices grow as m^layers).
inline constexpr size_t kMaxGroupOptions = 1 << 16;

/// The front, ratio descending (BitOps ascending) with the metric strictly decreasing along it:
/// no assignment passing the excessive-bitwidth filter has both a ratio >= and a metric < a
/// point's. Errors: a group with more than kMaxGroupOptions options (naming it), no assignment
/// passing the filter, Cancelled.
Result<std::vector<HawqCandidate>> paretoFront(const HawqProblem& problem,
                                               std::span<const double> avgTraces,
                                               const LayerPerturbations& perturbations,
                                               Progress& progress);

} // namespace qs::mixed_precision
