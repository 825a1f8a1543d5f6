// Trace-order candidate enumeration and its filters.

#include "core/mixed_precision/trace_order_candidates.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace qs::mixed_precision {

std::vector<size_t> traceOrder(std::span<const double> avgTraces) {
    std::vector<size_t> order(avgTraces.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return avgTraces[a] < avgTraces[b]; });
    return order;
}

namespace {

uint64_t binomial(uint64_t n, uint64_t k) {
    if (k > n) {
        return 0;
    }
    k = std::min(k, n - k);
    uint64_t out = 1;
    for (uint64_t i = 1; i <= k; ++i) {
        out = out * (n - k + i) / i; // exact: a product of i consecutive numbers divides by i!
    }
    return out;
}

/// Calls `visit` with every k-combination of 0..n-1 in lexicographic order.
template <typename Visit>
void forEachCombination(size_t n, size_t k, Visit&& visit) {
    if (k > n) {
        return;
    }
    std::vector<size_t> pick(k);
    std::iota(pick.begin(), pick.end(), size_t{0});
    while (true) {
        visit(pick);
        size_t i = k;
        while (i > 0 && pick[i - 1] == n - k + i - 1) {
            --i;
        }
        if (i == 0) {
            return;
        }
        ++pick[i - 1];
        for (size_t j = i; j < k; ++j) {
            pick[j] = pick[j - 1] + 1;
        }
    }
}

} // namespace

uint64_t nonDecreasingSequenceCount(size_t length, size_t bitwidths) {
    uint64_t count = 0;
    for (size_t j = 1; j <= bitwidths && length > 0; ++j) {
        count += binomial(bitwidths, j) * binomial(length - 1, j - 1);
    }
    return count;
}

void forEachNonDecreasingSequence(size_t length, std::span<const int> bits,
                                  const std::function<void(const std::vector<int>&)>& visit) {
    if (length == 0) {
        return;
    }
    std::vector<int> sequence;
    sequence.reserve(length);
    for (size_t j = 1; j <= bits.size(); ++j) {
        forEachCombination(bits.size(), j, [&](const std::vector<size_t>& widths) {
            forEachCombination(length - 1, j - 1, [&](const std::vector<size_t>& cuts) {
                sequence.clear();
                size_t previous = 0;
                size_t run = 0; // runs of equal bits end after each cut
                for (const size_t cut : cuts) {
                    sequence.insert(sequence.end(), cut + 1 - previous, bits[widths[run++]]);
                    previous = cut + 1;
                }
                sequence.insert(sequence.end(), length - previous, bits[widths.back()]);
                visit(sequence);
            });
        });
    }
}

std::vector<std::vector<int>> nonDecreasingSequences(size_t length, std::span<const int> bits) {
    std::vector<std::vector<int>> out;
    forEachNonDecreasingSequence(
        length, bits, [&](const std::vector<int>& sequence) { out.push_back(sequence); });
    return out;
}

int closestAllowedBits(std::span<const int> allowed, int bits) {
    int best = allowed.front();
    for (const int candidate : allowed) {
        if (std::abs(candidate - bits) < std::abs(best - bits)) {
            best = candidate;
        }
    }
    return best;
}

std::vector<int> excessiveBitwidths(const HawqProblem& problem) {
    std::set<int> activationBits;
    for (const ActivationQuantizer& activation : problem.activations) {
        activationBits.insert(activation.bitsAllowed.begin(), activation.bitsAllowed.end());
    }
    std::vector<int> out;
    for (const int bits : problem.bits) {
        if (!activationBits.contains(bits)) {
            out.push_back(bits);
        }
    }
    return out;
}

std::vector<std::vector<int>> traceOrderCandidates(const HawqProblem& problem,
                                                   std::span<const double> avgTraces) {
    const std::vector<size_t> order = traceOrder(avgTraces);
    const std::vector<int> excessive = excessiveBitwidths(problem);
    std::set<std::vector<int>> seen;
    std::vector<std::vector<int>> out;
    std::vector<int> weightBits(problem.layers.size());
    forEachNonDecreasingSequence(order.size(), problem.bits, [&](const std::vector<int>& sequence) {
        for (size_t position = 0; position < order.size(); ++position) {
            const WeightLayer& layer = problem.layers[order[position]];
            weightBits[order[position]] = closestAllowedBits(layer.bitsAllowed, sequence[position]);
        }
        if (seen.contains(weightBits)) {
            return;
        }
        seen.insert(weightBits);
        if (!excessive.empty() && std::all_of(excessive.begin(), excessive.end(), [&](int bits) {
                return std::find(weightBits.begin(), weightBits.end(), bits) != weightBits.end();
            })) {
            return;
        }
        if (problem.mode == BitwidthAssignmentMode::Strict) {
            const bool split = std::any_of(
                problem.groups.begin(), problem.groups.end(), [&](const AdjacencyGroup& group) {
                    return std::any_of(group.layers.begin(), group.layers.end(), [&](size_t l) {
                        return weightBits[l] != weightBits[group.layers.front()];
                    });
                });
            if (split) {
                return;
            }
        }
        out.push_back(weightBits);
    });
    return out;
}

} // namespace qs::mixed_precision
