// Weight compression as one workflow, the same for the CLI (`compress-weights`) and the GUI
// (Quantize ▸ Compress Weights): load the dataset a data-aware sensitivity metric needs, plan,
// and apply the plan. The GUI plans, shows and edits the plan, and applies it on export; the CLI
// plans and applies at once. The report of the outcome is core/report/compression_report.h.
#pragma once

#include "core/compression/weight_compression.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/labelled_scores.h"

#include <cstdint>
#include <optional>

namespace qs::compression {

struct WeightCompressionRequest {
    WeightCompressionOptions options;
    runtime::DatasetRequest dataset; ///< empty: data-free
};

struct WeightCompressionOutcome {
    CompressionPlan plan;
    std::optional<CompressionSummary> summary; ///< once applied
    int64_t datasetSamples = 0;                ///< 0: no dataset ran
    int64_t batchSize = 0;
    /// The float and the compressed model's first output on a labelled dataset, for their
    /// accuracies (report::compressionAccuracy); nothing without labels.
    std::optional<runtime::LabelledScores> labelled;
};

/// Loads the request's dataset (if any) and plans (planWeightCompression).
Result<WeightCompressionOutcome> planCompression(const graph::Graph& graph,
                                                 const WeightCompressionRequest& request,
                                                 Progress& progress);

/// Applies the outcome's plan to `graph` and records the summary in it.
Result<void> applyCompression(graph::Graph& graph, WeightCompressionOutcome& outcome,
                              Progress& progress);

/// Runs the float model and its compressed copy over the request's dataset when it has labels,
/// and keeps their scores in `outcome.labelled` (nothing is run without labels). The GUI calls it
/// after exporting; runWeightCompression does it for the CLI.
Result<void> scoreCompression(const graph::Graph& floatModel, const graph::Graph& compressed,
                              const runtime::DatasetRequest& dataset,
                              WeightCompressionOutcome& outcome, Progress& progress);

/// Plans and applies: `graph` is the compressed model afterwards. With a labelled dataset both
/// models are scored on it as well (outcome.labelled).
Result<WeightCompressionOutcome> runWeightCompression(graph::Graph& graph,
                                                      const WeightCompressionRequest& request,
                                                      Progress& progress);

} // namespace qs::compression
