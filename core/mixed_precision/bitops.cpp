// Activation bit assignment, BitOps ratio, metric and selection.

#include "core/mixed_precision/bitops.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <set>

namespace qs::mixed_precision {

namespace {

/// The bit widths every activation quantizer of the group allows (those with none of the bits
/// do not take part); nullopt when none takes part.
std::optional<std::set<int>> commonActivationBits(const HawqProblem& problem,
                                                  const AdjacencyGroup& members) {
    std::optional<std::set<int>> common;
    for (const size_t a : members.activations) {
        const std::vector<int>& allowed = problem.activations[a].bitsAllowed;
        if (allowed.empty()) {
            continue;
        }
        std::set<int> next;
        std::copy_if(allowed.begin(), allowed.end(), std::inserter(next, next.end()),
                     [&](int bits) { return !common || common->contains(bits); });
        common = std::move(next);
    }
    return common;
}

/// Strict: the smallest common width among the weights' bits, else the smallest common one.
std::optional<int> strictBits(const std::optional<std::set<int>>& common,
                              const std::set<int>& weights) {
    if (!common || common->empty()) {
        return std::nullopt;
    }
    const auto match = std::find_if(common->begin(), common->end(), [&](int bits) {
        return weights.empty() || weights.contains(bits);
    });
    return match != common->end() ? *match : *common->begin();
}

/// Liberal: the only allowed width; else the smallest allowed one a weight has; else the
/// smallest allowed; a quantizer with none of the bits keeps its own.
int liberalBits(const ActivationQuantizer& activation, const std::set<int>& weights) {
    const std::vector<int>& allowed = activation.bitsAllowed;
    if (allowed.empty()) {
        return activation.currentBits;
    }
    const auto match = std::find_if(allowed.begin(), allowed.end(),
                                    [&](int bits) { return weights.contains(bits); });
    return allowed.size() == 1 || match == allowed.end() ? allowed.front() : *match;
}

} // namespace

Result<void> assignGroupActivationBits(const HawqProblem& problem, size_t group,
                                       std::span<const int> weightBits,
                                       std::vector<int>& activationBits) {
    const AdjacencyGroup& members = problem.groups[group];
    std::set<int> weights;
    for (const size_t l : members.layers) {
        weights.insert(weightBits[l]);
    }
    if (problem.mode == BitwidthAssignmentMode::Liberal) {
        for (const size_t a : members.activations) {
            activationBits[a] = liberalBits(problem.activations[a], weights);
        }
        return success();
    }
    if (weights.size() > 1) {
        return Error(Errc::InvalidArgument, "strict bitwidth assignment: adjacency group " +
                                                std::to_string(group) +
                                                " has weights of different bit widths");
    }
    const std::optional<int> chosen = strictBits(commonActivationBits(problem, members), weights);
    for (const size_t a : members.activations) {
        const ActivationQuantizer& activation = problem.activations[a];
        activationBits[a] =
            activation.bitsAllowed.empty() || !chosen ? activation.currentBits : *chosen;
    }
    return success();
}

Result<std::vector<int>> assignActivationBits(const HawqProblem& problem,
                                              std::span<const int> weightBits) {
    std::vector<int> activationBits(problem.activations.size(), 0);
    for (size_t g = 0; g < problem.groups.size(); ++g) {
        QS_TRY(assignGroupActivationBits(problem, g, weightBits, activationBits));
    }
    return activationBits;
}

double maxBitOps(const HawqProblem& problem) {
    double total = 0.0;
    for (const WeightLayer& layer : problem.layers) {
        total += static_cast<double>(layer.macs) * 8.0;
    }
    return total;
}

double bitOps(const HawqProblem& problem, std::span<const int> weightBits,
              std::span<const int> activationBits) {
    double total = 0.0;
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        const WeightLayer& layer = problem.layers[l];
        const int a = layer.activation ? activationBits[*layer.activation] : 0;
        total += static_cast<double>(layer.macs) * std::max(weightBits[l], a);
    }
    return total;
}

double hawqMetric(std::span<const double> avgTraces, const LayerPerturbations& perturbations,
                  std::span<const int> weightBits) {
    double total = 0.0;
    for (size_t l = 0; l < weightBits.size(); ++l) {
        total += avgTraces[l] * perturbations[l].at(weightBits[l]);
    }
    return total;
}

Result<HawqCandidate> evaluateCandidate(const HawqProblem& problem,
                                        std::span<const double> avgTraces,
                                        const LayerPerturbations& perturbations,
                                        std::vector<int> weightBits) {
    HawqCandidate candidate;
    QS_ASSIGN_OR_RETURN(candidate.activationBits, assignActivationBits(problem, weightBits));
    const double ops = bitOps(problem, weightBits, candidate.activationBits);
    candidate.ratio = ops > 0.0 ? maxBitOps(problem) / ops : 1.0;
    candidate.metric = hawqMetric(avgTraces, perturbations, weightBits);
    candidate.weightBits = std::move(weightBits);
    return candidate;
}

Result<size_t> selectForRatio(std::span<const HawqCandidate> candidates,
                              std::span<const size_t> among, double target) {
    if (among.empty()) {
        return Error(Errc::InvalidArgument, "no HAWQ candidate to choose from");
    }
    double low = std::numeric_limits<double>::infinity();
    double high = -low;
    for (const size_t i : among) {
        low = std::min(low, candidates[i].ratio);
        high = std::max(high, candidates[i].ratio);
    }
    // A relative slack so that a ratio printed with 3 decimals and typed back still matches.
    constexpr double kSlack = 1e-9;
    if (target < low * (1.0 - kSlack) || target > high * (1.0 + kSlack)) {
        std::array<char, 160> text{};
        std::snprintf(text.data(), text.size(),
                      "Invalid compression ratio=%g. Should be within range [%.3f, %.3f]", target,
                      low, high);
        return Error(Errc::Usage, text.data());
    }
    target = std::clamp(target, low, high);
    std::optional<size_t> best;
    for (const size_t i : among) {
        if (candidates[i].ratio < target) {
            continue;
        }
        if (!best || candidates[i].metric < candidates[*best].metric ||
            (candidates[i].metric == candidates[*best].metric && i < *best)) {
            best = i;
        }
    }
    return *best;
}

} // namespace qs::mixed_precision
