// The HAWQ workflow the CLI (`quantscope-cli hawq`) and the GUI call: HawqRequest -> runHawq ->
// HawqOutcome. Stages: propagation (the quantization state), average traces per weight from the
// Hessian service (weights mode, per-tensor LFH score / numel; or traces given), perturbations,
// candidates (trace order, plus the exact Pareto front with --search pareto), the choice for the
// target ratio, and the chosen bits applied to the state (re-finalized: merged quantizers and
// requantizers counted). Re-selecting at another ratio (selectHawqCandidate) reuses everything.
#pragma once

#include "core/graph/graph.h"
#include "core/hessian/hessian_scores.h"
#include "core/mixed_precision/bitops.h"
#include "core/mixed_precision/hawq_problem.h"
#include "core/quantization/quantization_state.h"
#include "core/runtime/dataset_request.h"
#include "core/support/progress.h"

#include <optional>
#include <string_view>
#include <vector>

namespace qs::mixed_precision {

enum class HawqSearch { TraceOrder, Pareto };

/// "trace-order" / "pareto".
std::string_view searchName(HawqSearch search);
Result<HawqSearch> parseSearch(std::string_view text);

/// NNCF's defaults where it has them (compression_ratio 1.5, bits [2, 4, 8]); samples and
/// iterations as the issue asks (32, 100).
struct HawqRequest {
    quantization::QuantizationSettings settings;
    double compressionRatio = 1.5;
    std::vector<int> bits{2, 4, 8};
    BitwidthAssignmentMode mode = BitwidthAssignmentMode::Liberal;
    HawqSearch search = HawqSearch::TraceOrder;
    runtime::DatasetRequest dataset; ///< not read when `traces` is given
    int64_t samples = 32;
    int iterations = 100;
    int64_t batch = 0; ///< Hessian batch; 0: the input's static batch, else min(32, samples)
    uint64_t seed = 0;
    /// Weights-mode per-tensor scores of every layer (a `hessian` JSON read back): no Hessian run.
    std::optional<hessian::HessianScores> traces;
};

struct HawqTimings {
    double tracesSeconds = 0.0;
    double perturbationSeconds = 0.0;
    double searchSeconds = 0.0;
};

/// Everything a selection needs, computed once.
struct HawqAnalysis {
    HawqProblem problem;
    hessian::HessianScores traceScores; ///< what --traces-out writes
    std::vector<double> avgTraces;      ///< per layer
    LayerPerturbations perturbations;
    /// Trace-order candidates first, then (pareto search) the front's points not among them.
    std::vector<HawqCandidate> candidates;
    std::vector<size_t> traceOrder; ///< indices of the trace-order candidates
    std::vector<size_t> pareto;     ///< indices of the front (ratio descending)
    HawqSearch search = HawqSearch::TraceOrder;
};

struct HawqOutcome {
    HawqAnalysis analysis;
    double target = 0.0;
    size_t chosen = 0;
    quantization::QuantizationState state; ///< with the chosen bits, finalized
    int mergedQuantizers = 0;
    int requantizers = 0;
    HawqTimings timings;
};

/// Average trace per weight of each layer from weights-mode per-tensor scores (matched by node).
Result<std::vector<double>> averageTraces(const HawqProblem& problem,
                                          const hessian::HessianScores& scores);

/// The candidate the search picks for `target`: trace-order among its candidates, pareto among
/// the front. NNCF's error outside the range.
Result<size_t> selectHawqCandidate(const HawqAnalysis& analysis, double target);

/// The choices that give `state` the candidate's bits (weights and activations with allowed
/// bits), for an editor that applies them as one undoable step.
Result<quantization::QuantizerConfigChoice>
hawqConfigChoice(const quantization::QuantizationState& state, const HawqProblem& problem,
                 const HawqCandidate& candidate);

/// Sets the candidate's configs (hawqConfigChoice) and re-finalizes; on error `state` is
/// unchanged.
Result<void> applyHawqCandidate(quantization::QuantizationState& state, const HawqProblem& problem,
                                const HawqCandidate& candidate);

/// The whole workflow.
Result<HawqOutcome> runHawq(const graph::Graph& model, const HawqRequest& request,
                            Progress& progress);

/// Merged quantizers and requantizers of a finalized setup.
int mergedQuantizerCount(const quantization::SingleConfigQuantizerSetup& setup);
int requantizerCount(const quantization::SingleConfigQuantizerSetup& setup);

} // namespace qs::mixed_precision
