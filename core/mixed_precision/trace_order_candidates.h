// NNCF's TraceOrderBitwidthMatcher (reference/nncf-quantization.md §4, "Candidate enumeration",
// "Filters"): the layers ordered by average trace ascending, every non-decreasing bit-width
// sequence over that order, each position mapped to the layer's closest allowed bit width,
// de-duplicated, then the excessive-bitwidth filter and, in strict mode, the rule that the layers
// of an adjacency group take one bit width.
#pragma once

#include "core/mixed_precision/hawq_problem.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace qs::mixed_precision {

/// Layer indices by average trace ascending; equal traces keep layer order.
std::vector<size_t> traceOrder(std::span<const double> avgTraces);

/// Sum over j = 1..m of C(m, j) * C(L - 1, j - 1): the non-decreasing sequences of length L over
/// m bit widths.
uint64_t nonDecreasingSequenceCount(size_t length, size_t bitwidths);

/// Every non-decreasing sequence of `bits` (ascending) of `length`, in NNCF's order: j bit widths
/// (combinations in order), then j - 1 cut points among the L - 1 gaps (combinations in order).
std::vector<std::vector<int>> nonDecreasingSequences(size_t length, std::span<const int> bits);

/// The same sequences, one at a time (the count grows as L^(m-1)).
void forEachNonDecreasingSequence(size_t length, std::span<const int> bits,
                                  const std::function<void(const std::vector<int>&)>& visit);

/// The allowed bit width (ascending list) closest to `bits`; the first on a tie.
int closestAllowedBits(std::span<const int> allowed, int bits);

/// Bit widths some layer allows that no activation quantizer allows (2 under NPU).
std::vector<int> excessiveBitwidths(const HawqProblem& problem);

/// NNCF's candidates, each a weight bit width per layer in `problem.layers` order.
std::vector<std::vector<int>> traceOrderCandidates(const HawqProblem& problem,
                                                   std::span<const double> avgTraces);

} // namespace qs::mixed_precision
