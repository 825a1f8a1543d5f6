// HAWQ's measures of one candidate (reference/nncf-quantization.md §4): the activation bit widths
// that follow from the weights' (liberal or strict, per adjacency group), the BitOps compression
// ratio, the metric sum(avgTrace x perturbation), and the choice of a candidate for a target
// ratio (ratio >= target, smallest metric, first on ties; NNCF's error outside the range).
#pragma once

#include "core/mixed_precision/hawq_problem.h"

#include <map>
#include <span>
#include <vector>

namespace qs::mixed_precision {

/// Per layer, ||Q(W) - W||^2 for each allowed bit width.
using LayerPerturbations = std::vector<std::map<int, double>>;

/// One bit-width assignment with its measures.
struct HawqCandidate {
    std::vector<int> weightBits;     ///< per layer, in HawqProblem::layers order
    std::vector<int> activationBits; ///< per activation quantizer
    double ratio = 0.0;
    double metric = 0.0;

    bool operator==(const HawqCandidate&) const = default;
};

/// Writes the activation bits of `group`'s quantizers into `activationBits` from the weight bits
/// of its layers. Liberal: the only allowed width; else the smallest allowed one that a weight of
/// the group has; else the smallest allowed; (a quantizer with none of the bits keeps its own).
/// Strict: one width, the smallest common allowed one among the weights' bits; an error when the
/// group's weights differ.
Result<void> assignGroupActivationBits(const HawqProblem& problem, size_t group,
                                       std::span<const int> weightBits,
                                       std::vector<int>& activationBits);

/// Every group's activation bits.
Result<std::vector<int>> assignActivationBits(const HawqProblem& problem,
                                              std::span<const int> weightBits);

/// sum over layers of MACs x 8.
double maxBitOps(const HawqProblem& problem);

/// sum over layers of MACs x max(weight bits, bits of the activation feeding it).
double bitOps(const HawqProblem& problem, std::span<const int> weightBits,
              std::span<const int> activationBits);

/// sum over layers of avgTrace x perturbation(layer, its bits).
double hawqMetric(std::span<const double> avgTraces, const LayerPerturbations& perturbations,
                  std::span<const int> weightBits);

/// The candidate with its activation bits, ratio and metric.
Result<HawqCandidate> evaluateCandidate(const HawqProblem& problem,
                                        std::span<const double> avgTraces,
                                        const LayerPerturbations& perturbations,
                                        std::vector<int> weightBits);

/// Among `among` (indices into `candidates`), those with ratio >= target, the smallest metric,
/// the first index on ties. A target outside [min, max] of their ratios is NNCF's error
/// "Invalid compression ratio=R. Should be within range [a, b]".
Result<size_t> selectForRatio(std::span<const HawqCandidate> candidates,
                              std::span<const size_t> among, double target);

} // namespace qs::mixed_precision
