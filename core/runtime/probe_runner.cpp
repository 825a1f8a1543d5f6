#include "core/runtime/probe_runner.h"

#include "core/runtime/batching.h"

#include <algorithm>

namespace qs::runtime {
namespace {

/// Folds one batch's statistics into the run's: peak of peaks, sums of times.
void addBatchStats(const RunStats& batch, RunStats& total) {
    total.peakActivationBytes = std::max(total.peakActivationBytes, batch.peakActivationBytes);
    total.seconds += batch.seconds;
    total.reusedShapeSteps += batch.reusedShapeSteps;
    for (const auto& [opType, seconds] : batch.secondsByOpType) {
        total.secondsByOpType[opType] += seconds;
    }
    for (const auto& [node, seconds] : batch.secondsByNode) {
        total.secondsByNode[node] += seconds;
    }
    for (const auto& [node, opType] : batch.opTypeByNode) {
        total.opTypeByNode[node] = opType;
    }
}

Result<void> checkFits(const Dataset& dataset, const Executor& executor) {
    if (dataset.inputs.size() != executor.inputIds().size()) {
        return Error(Errc::InvalidArgument, "the dataset has " +
                                                std::to_string(dataset.inputs.size()) +
                                                " input tensor(s), the model takes " +
                                                std::to_string(executor.inputIds().size()));
    }
    if (dataset.samples() == 0) {
        return Error(Errc::InvalidArgument, "the dataset holds no samples");
    }
    for (const Tensor& input : dataset.inputs) {
        if (input.rank() == 0 || input.shape()[0] != dataset.samples()) {
            return Error(Errc::InvalidArgument,
                         "dataset inputs hold different numbers of samples (axis 0)");
        }
    }
    return success();
}

Result<void> observe(const Executor& executor, size_t modelOutputs, const Dataset& dataset,
                     Progress& progress, const BatchObserver& onBatch,
                     const ObserveOptions& options) {
    QS_TRY(checkFits(dataset, executor));
    BatchStream stream(dataset);
    const int64_t batches = stream.batchCount();
    while (!stream.done()) {
        QS_TRY(checkCancelled(progress));
        const std::string step = "batch " + std::to_string(stream.batchesHandedOut() + 1) + "/" +
                                 std::to_string(batches);
        QS_ASSIGN_OR_RETURN(const SampleBatch batch, stream.next().context(step));
        progress.report(static_cast<double>(batch.index) / static_cast<double>(batches),
                        options.label == "batch" ? step : options.label + ", " + step);
        RunStats batchStats;
        batchStats.profile = options.stats != nullptr && options.stats->profile;
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> outputs,
                            executor.run(batch.inputs, &batchStats).context(step));
        if (options.stats != nullptr) {
            addBatchStats(batchStats, *options.stats);
        }
        const std::span<Tensor> all(outputs);
        ObservedBatch observed{batch, all.first(modelOutputs), all.subspan(modelOutputs)};
        QS_TRY(onBatch(observed).context(step));
    }
    progress.report(1.0, options.label == "batch" ? "done" : options.label + ", done");
    return success();
}

} // namespace

Result<void> runObserving(const graph::Graph& graph, std::span<const graph::ValueId> probes,
                          const Dataset& dataset, Progress& progress, const BatchObserver& onBatch,
                          const ObserveOptions& options) {
    graph::Graph probed = graph;
    const size_t modelOutputs = probed.outputs().size();
    for (const graph::ValueId id : probes) {
        probed.addOutput(id);
    }
    QS_ASSIGN_OR_RETURN(const Executor executor,
                        Executor::create(std::move(probed), options.executor));
    return observe(executor, modelOutputs, dataset, progress, onBatch, options);
}

Result<void> runObserving(const graph::Graph& graph, std::span<const graph::ValueId> probes,
                          const DatasetRequest& request, Progress& progress,
                          const BatchObserver& onBatch, const ObserveOptions& options) {
    QS_ASSIGN_OR_RETURN(const Dataset dataset, loadDataset(graph, request));
    return runObserving(graph, probes, dataset, progress, onBatch, options);
}

Result<void> runObserving(const Executor& executor, const Dataset& dataset, Progress& progress,
                          const BatchObserver& onBatch, const ObserveOptions& options) {
    return observe(executor, executor.graph().outputs().size(), dataset, progress, onBatch,
                   options);
}

Result<std::vector<Tensor>> runBatched(const Executor& executor, const Dataset& dataset,
                                       Progress& progress, RunStats* stats, bool shapesOnly) {
    const size_t outputs = executor.graph().outputs().size();
    std::vector<BatchStacker> stackers(outputs, BatchStacker(dataset.samples()));
    std::vector<std::vector<Tensor>> shapes(outputs);
    QS_TRY(runObserving(executor, dataset, progress,
                        [&](ObservedBatch& batch) -> Result<void> {
                            const int64_t samples = batch.batch.end - batch.batch.begin;
                            for (size_t o = 0; o < batch.outputs.size(); ++o) {
                                Tensor& output = batch.outputs[o];
                                if (shapesOnly) {
                                    shapes[o].push_back(
                                        Tensor::withoutData(output.dtype(), output.shape()));
                                } else {
                                    stackers[o].add(std::move(output), samples);
                                }
                            }
                            return success();
                        },
                        {.stats = stats}));
    std::vector<Tensor> results;
    results.reserve(outputs);
    for (size_t o = 0; o < outputs; ++o) {
        if (shapesOnly) {
            QS_ASSIGN_OR_RETURN(Shape shape, stackedShape(shapes[o]));
            results.push_back(Tensor::withoutData(shapes[o][0].dtype(), std::move(shape)));
        } else {
            QS_ASSIGN_OR_RETURN(Tensor joined, stackers[o].take());
            results.push_back(std::move(joined));
        }
    }
    return results;
}

} // namespace qs::runtime
