#include "core/compression/compression_workflow.h"

namespace qs::compression {

Result<WeightCompressionOutcome> planCompression(const graph::Graph& graph,
                                                 const WeightCompressionRequest& request,
                                                 Progress& progress) {
    WeightCompressionOutcome outcome;
    std::optional<runtime::Dataset> dataset;
    if (!request.dataset.empty()) {
        QS_ASSIGN_OR_RETURN(dataset, runtime::loadDataset(graph, request.dataset));
        outcome.datasetSamples = dataset->samples();
        outcome.batchSize = dataset->batchSize;
    }
    QS_ASSIGN_OR_RETURN(outcome.plan, planWeightCompression(graph, request.options, progress,
                                                            dataset ? &*dataset : nullptr));
    return outcome;
}

Result<void> applyCompression(graph::Graph& graph, WeightCompressionOutcome& outcome,
                              Progress& progress) {
    QS_ASSIGN_OR_RETURN(outcome.summary, applyWeightCompression(graph, outcome.plan, progress));
    return success();
}

Result<WeightCompressionOutcome> runWeightCompression(graph::Graph& graph,
                                                      const WeightCompressionRequest& request,
                                                      Progress& progress) {
    QS_ASSIGN_OR_RETURN(WeightCompressionOutcome outcome,
                        planCompression(graph, request, progress));
    QS_TRY(applyCompression(graph, outcome, progress));
    return outcome;
}

} // namespace qs::compression
