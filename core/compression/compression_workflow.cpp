#include "core/compression/compression_workflow.h"

namespace qs::compression {

namespace {

Result<std::optional<runtime::Dataset>> loadRequested(const graph::Graph& graph,
                                                      const runtime::DatasetRequest& request) {
    if (request.empty()) {
        return std::optional<runtime::Dataset>();
    }
    QS_ASSIGN_OR_RETURN(runtime::Dataset dataset, runtime::loadDataset(graph, request));
    return std::optional<runtime::Dataset>(std::move(dataset));
}

Result<WeightCompressionOutcome> planOn(const graph::Graph& graph,
                                        const WeightCompressionOptions& options,
                                        const std::optional<runtime::Dataset>& dataset,
                                        Progress& progress) {
    WeightCompressionOutcome outcome;
    if (dataset) {
        outcome.datasetSamples = dataset->samples();
        outcome.batchSize = dataset->batchSize;
    }
    QS_ASSIGN_OR_RETURN(outcome.plan, planWeightCompression(graph, options, progress,
                                                            dataset ? &*dataset : nullptr));
    return outcome;
}

} // namespace

Result<WeightCompressionOutcome> planCompression(const graph::Graph& graph,
                                                 const WeightCompressionRequest& request,
                                                 Progress& progress) {
    QS_ASSIGN_OR_RETURN(const std::optional<runtime::Dataset> dataset,
                        loadRequested(graph, request.dataset));
    return planOn(graph, request.options, dataset, progress);
}

Result<void> applyCompression(graph::Graph& graph, WeightCompressionOutcome& outcome,
                              Progress& progress) {
    QS_ASSIGN_OR_RETURN(outcome.summary, applyWeightCompression(graph, outcome.plan, progress));
    return success();
}

Result<void> scoreCompression(const graph::Graph& floatModel, const graph::Graph& compressed,
                              const runtime::DatasetRequest& dataset,
                              WeightCompressionOutcome& outcome, Progress& progress) {
    QS_ASSIGN_OR_RETURN(outcome.labelled,
                        runtime::scoreLabelled(floatModel, compressed, dataset, progress));
    return success();
}

Result<WeightCompressionOutcome> runWeightCompression(graph::Graph& graph,
                                                      const WeightCompressionRequest& request,
                                                      Progress& progress) {
    QS_ASSIGN_OR_RETURN(const std::optional<runtime::Dataset> dataset,
                        loadRequested(graph, request.dataset));
    QS_ASSIGN_OR_RETURN(WeightCompressionOutcome outcome,
                        planOn(graph, request.options, dataset, progress));
    // Weights are shared, so the float copy costs only the node and value tables.
    std::optional<graph::Graph> floatModel;
    if (dataset && dataset->labels) {
        floatModel = graph;
    }
    QS_TRY(applyCompression(graph, outcome, progress));
    if (floatModel) {
        QS_ASSIGN_OR_RETURN(outcome.labelled,
                            runtime::scoreLabelled(*floatModel, graph, *dataset, progress));
    }
    return outcome;
}

} // namespace qs::compression
