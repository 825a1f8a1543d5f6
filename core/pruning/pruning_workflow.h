// The pruning workflow (reference/mct-hessian-pruning.md §2): Request -> analysis (sections,
// SIMD sizes, channel importance; the expensive part, LFH scores from the Hessian service) ->
// masks (the greedy under the memory target and the user's locks and kept counts; cheap, what the
// GUI re-runs after an edit) -> the pruned graph and PruningInfo.
#pragma once

#include "core/hessian/hessian_scores.h"
#include "core/pruning/channel_importance.h"
#include "core/pruning/greedy_mask.h"
#include "core/pruning/pruning_section.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/labelled_scores.h"
#include "core/support/progress.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qs::pruning {

/// `--target-memory 50%` (of the dense FP32 weight bytes) or a byte count.
struct TargetMemory {
    bool fraction = true;
    double value = 0.5; ///< the fraction (0, 1], or bytes

    /// The target in bytes for a model of `denseBytes`.
    int64_t bytes(int64_t denseBytes) const;
    std::string describe() const;
};

/// Parses "50%", "12.5%", "51200000".
Result<TargetMemory> parseTargetMemory(std::string_view text);

struct PruningRequest {
    TargetMemory target;
    std::string hw = "cpu"; ///< a built-in device or a HW config JSON file
    int64_t simd = 0;       ///< > 0 overrides the HW config's SIMD sizes (1 = channel pruning)
    bool simdPadding = true;
    ImportanceMetric importance = ImportanceMetric::Lfh;
    int64_t samples = 32; ///< MCT's num_score_approximations
    int iterations = hessian::kDefaultHessianIterations;
    /// MCT's weights-mode rule (reference §1.5): after 10 iterations a batch stops once the
    /// scores change by less than 1e-3 relative.
    bool earlyStop = true;
    int64_t hessianBatch = 0;      ///< 0: the input's static batch, else min(32, samples)
    uint64_t seed = 0;             ///< Rademacher draws (lfh) or the random scores
    std::vector<std::string> lock; ///< entries never pruned
    std::vector<std::pair<std::string, int64_t>> keep; ///< entries with a fixed kept count
    runtime::DatasetRequest dataset;                   ///< the samples of the LFH scores
    /// Precomputed weights-mode per-channel scores (`--scores-in`) instead of a Hessian run.
    std::optional<hessian::HessianScores> scores;
};

/// What does not depend on the target or the constraints.
struct PruningAnalysis {
    /// The graph the sections refer to: the model prepared by preparePruningGraph (constants of
    /// prunable nodes untied); the pruned graph is built from it.
    graph::Graph graph;
    int untiedConstants = 0;
    SectionDetection detection;
    std::vector<std::string> entryNames; ///< per section
    std::vector<std::string> exitNames;
    std::vector<EntryImportance> importance; ///< per section
    /// H_c per section, the entry's per-channel LFH scores (empty lists unless LFH): what a
    /// session saves to restore the importance without the dataset.
    std::vector<std::vector<double>> hessian;
    std::vector<int64_t> simdByNode;
    int64_t simd = 0; ///< the SIMD size reported: the override, or the smallest over the entries
    bool simdPadding = true;
    ImportanceMetric metric = ImportanceMetric::Lfh;
    int64_t samples = 0; ///< samples scored (lfh)
    std::vector<std::string> notes;
    double scoringSeconds = 0.0;
};

/// MCT's PruningInfo: per entry node its 0/1 mask and the per-channel scores unrolled from the
/// group scores.
struct PruningInfo {
    std::vector<std::string> entries;
    std::vector<std::vector<uint8_t>> masks;
    std::vector<std::vector<double>> scores;
};

struct PruningOutcome {
    int64_t targetBytes = 0;
    int64_t denseBytes = 0;       ///< every float initializer, unpadded
    int64_t minimumBytes = 0;     ///< one SIMD group per free entry
    int64_t prunedBytes = 0;      ///< as the memory calculator counts (padded if asked)
    int64_t prunedGraphBytes = 0; ///< the pruned graph's float initializers, unpadded
    std::vector<int64_t> kept;    ///< per section
    std::vector<EntryConstraint> constraints;
    std::vector<int64_t> sectionBytesBefore; ///< the section members' weights, dense
    std::vector<int64_t> sectionBytesAfter;
    int64_t greedySteps = 0;
    double greedySeconds = 0.0;
    PruningInfo info;
    graph::Graph pruned;
    /// The dense and the pruned model's first output on a labelled dataset (scorePruning), for
    /// their accuracies; nothing without labels.
    std::optional<runtime::LabelledScores> labelled;
};

/// Sections, SIMD sizes and importance; LFH loads request.dataset and asks the Hessian service
/// for every entry at once (weights mode, per output channel), unless request.scores is set.
Result<PruningAnalysis> analyzePruning(const graph::Graph& graph, const PruningRequest& request,
                                       Progress& progress);

/// The constraints of request.lock / request.keep, one per section; names must be entries.
Result<std::vector<EntryConstraint>> constraintsFor(const PruningAnalysis& analysis,
                                                    const PruningRequest& request);

/// Greedy masks for the target with `constraints` (one per section) and the info, without the
/// pruned graph (`pruned` stays empty, `prunedGraphBytes` 0): what the GUI re-runs after an edit.
Result<PruningOutcome> computePruningMasks(const PruningAnalysis& analysis,
                                           const TargetMemory& target,
                                           const std::vector<EntryConstraint>& constraints);

/// computePruningMasks, then the pruned graph.
Result<PruningOutcome> computePruning(const PruningAnalysis& analysis, const TargetMemory& target,
                                      const std::vector<EntryConstraint>& constraints);

/// analyzePruning then computePruning with the request's constraints.
Result<PruningOutcome> runPruning(const graph::Graph& graph, const PruningRequest& request,
                                  Progress& progress, PruningAnalysis* analysisOut = nullptr);

/// Runs `dense` and `outcome.pruned` over `dataset` when it has labels (else nothing runs) and
/// keeps their scores in `outcome.labelled`.
Result<void> scorePruning(const graph::Graph& dense, const runtime::DatasetRequest& dataset,
                          PruningOutcome& outcome, Progress& progress);

} // namespace qs::pruning
