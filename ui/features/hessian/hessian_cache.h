// HessianCache: the Hessian service of one open document, shared by every feature that asks for
// Hessian scores (the sensitivity overlay here, HAWQ's and pruning's dialogs): one executor, the
// dataset loaded once, and core's HessianService with its per-sample cache, so a second request
// over an overlapping node set on the same dataset computes only what is missing. A different
// dataset (another fingerprint) starts a fresh service. Fetches run on job threads, one at a time.
#pragma once

#include "core/graph/graph.h"
#include "core/hessian/hessian_service.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/executor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <memory>
#include <mutex>
#include <string>

namespace qs::ui {

class HessianCache {
public:
    HessianCache();

    ~HessianCache();

    HessianCache(const HessianCache&) = delete;
    HessianCache& operator=(const HessianCache&) = delete;

    /// Scores of `request` for `graph` (the document's graph; the first fetch builds the
    /// executor from it) on the samples of `dataset`, from the cache where it has them. Blocks
    /// while another fetch runs. Errors: the dataset's, the service's (not enough samples with
    /// both counts, an unsuitable target), Cancelled (the cache keeps the finished batches).
    Result<hessian::HessianScores> fetch(const graph::Graph& graph,
                                         const runtime::DatasetRequest& dataset,
                                         const hessian::HessianScoresRequest& request,
                                         Progress& progress);

    /// The work counters of the current service (zeros before the first fetch).
    hessian::HessianServiceStats stats() const;

    /// Fetches answered (so tests can see a second request reuse the first's work).
    int64_t fetches() const;

private:
    mutable std::mutex m_mutex;
    std::unique_ptr<runtime::Executor> m_executor;
    std::string m_datasetKey;
    std::unique_ptr<hessian::TensorBatchSource> m_source;
    std::unique_ptr<hessian::HessianService> m_service;
    int64_t m_fetches = 0;
};

} // namespace qs::ui
