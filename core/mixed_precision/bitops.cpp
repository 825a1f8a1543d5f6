// Activation bit assignment, BitOps ratio, metric and selection.

#include "core/mixed_precision/bitops.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <set>

namespace qs::mixed_precision {

Result<void> assignGroupActivationBits(const HawqProblem& problem, size_t group,
                                       std::span<const int> weightBits,
                                       std::vector<int>& activationBits) {
    const AdjacencyGroup& members = problem.groups[group];
    std::set<int> weights;
    for (const size_t l : members.layers) {
        weights.insert(weightBits[l]);
    }
    if (problem.mode == BitwidthAssignmentMode::Strict) {
        if (weights.size() > 1) {
            return Error(Errc::InvalidArgument, "strict bitwidth assignment: adjacency group " +
                                                    std::to_string(group) +
                                                    " has weights of different bit widths");
        }
        std::optional<std::set<int>> common;
        for (const size_t a : members.activations) {
            const std::vector<int>& allowed = problem.activations[a].bitsAllowed;
            if (allowed.empty()) {
                continue;
            }
            std::set<int> next;
            for (const int bits : allowed) {
                if (!common || common->contains(bits)) {
                    next.insert(bits);
                }
            }
            common = std::move(next);
        }
        std::optional<int> chosen;
        if (common) {
            for (const int bits : *common) {
                if (weights.empty() || weights.contains(bits)) {
                    chosen = bits;
                    break;
                }
            }
            if (!chosen && !common->empty()) {
                chosen = *common->begin();
            }
        }
        for (const size_t a : members.activations) {
            const ActivationQuantizer& activation = problem.activations[a];
            activationBits[a] =
                activation.bitsAllowed.empty() || !chosen ? activation.currentBits : *chosen;
        }
        return success();
    }
    for (const size_t a : members.activations) {
        const ActivationQuantizer& activation = problem.activations[a];
        const std::vector<int>& allowed = activation.bitsAllowed;
        if (allowed.empty()) {
            activationBits[a] = activation.currentBits;
            continue;
        }
        if (allowed.size() == 1) {
            activationBits[a] = allowed.front();
            continue;
        }
        auto match = std::find_if(allowed.begin(), allowed.end(),
                                  [&](int bits) { return weights.contains(bits); });
        activationBits[a] = match != allowed.end() ? *match : allowed.front();
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
        return Error(Errc::InvalidArgument, text.data());
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
