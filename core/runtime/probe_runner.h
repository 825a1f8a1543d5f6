// The one "run the model over a dataset in batches and look at some tensors" loop. Statistics for
// calibration, activation statistics for weight compression, the calibration simulation, batched
// `run` and the Hessian service all call runObserving: the probed values become extra graph
// outputs (the executor then keeps exactly those alive and frees everything else as usual), the
// dataset streams through a BatchStream, and each batch's outputs go to the caller's observer.
// Progress is reported per batch and a cancel between batches gives the standard cancelled error.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/executor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace qs::runtime {

/// One batch as the observer sees it. `outputs` are the model's own outputs, `probes` the probed
/// values in the order asked for; the observer may move tensors out of both.
struct ObservedBatch {
    const SampleBatch& batch;
    std::span<Tensor> outputs;
    std::span<Tensor> probes;
};

using BatchObserver = std::function<Result<void>(ObservedBatch&)>;

/// Options of a run; `label` starts each progress message ("statistics, batch 3/10").
struct ObserveOptions {
    std::string label = "batch";
    ExecutorOptions executor;
    RunStats* stats = nullptr; ///< summed over batches (peak of peaks) when set
};

/// Runs `graph` with `probes` as extra outputs over `dataset`, batch by batch, and calls
/// `onBatch` after each. A probe is any value the run computes or is fed (an initializer is a
/// constant: read it from the graph instead).
Result<void> runObserving(const graph::Graph& graph, std::span<const graph::ValueId> probes,
                          const Dataset& dataset, Progress& progress, const BatchObserver& onBatch,
                          const ObserveOptions& options = {});

/// The same, loading `request` for `graph` first.
Result<void> runObserving(const graph::Graph& graph, std::span<const graph::ValueId> probes,
                          const DatasetRequest& request, Progress& progress,
                          const BatchObserver& onBatch, const ObserveOptions& options = {});

/// The same loop on an executor built by the caller (its outputs are all "outputs", no probes).
Result<void> runObserving(const Executor& executor, const Dataset& dataset, Progress& progress,
                          const BatchObserver& onBatch, const ObserveOptions& options = {});

/// Runs every sample and stacks each output's batches back along axis 0 (`run`'s outputs). With
/// `shapesOnly`, the outputs are their stacked dtypes and shapes alone (Tensor::withoutData),
/// for a caller that prints shapes: no output is kept past its batch.
Result<std::vector<Tensor>> runBatched(const Executor& executor, const Dataset& dataset,
                                       Progress& progress, RunStats* stats = nullptr,
                                       bool shapesOnly = false);

} // namespace qs::runtime
