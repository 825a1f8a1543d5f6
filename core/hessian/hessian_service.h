// HessianService (MCT's HessianInfoService, reference/mct-hessian-pruning.md §1.2-1.3, keyed by
// sample as its own notes suggest): owns the executor and a sample source, and answers
// HessianScoresRequests from a cache keyed by (node, mode, granularity, sample index) and the
// estimator settings. A fetch works out, per sample, which targets are missing, streams the
// source once, re-batches the samples that need work into Hessian batches of request.batch
// (a sample is never dropped or used twice, whatever the source's own batch), and computes all
// missing targets of a batch in one forward pass plus one reverse sweep per iteration. Only
// finished batches enter the cache, so a cancelled fetch leaves it consistent.
#pragma once

#include "core/hessian/hessian_scores.h"
#include "core/hessian/lfh_estimator.h"
#include "core/hessian/sample_batch_source.h"

#include <functional>
#include <map>
#include <tuple>

namespace qs::hessian {

/// Work counters, for tests and reports.
struct HessianServiceStats {
    int64_t forwardPasses = 0;        ///< one per computed Hessian batch
    int64_t sweeps = 0;               ///< reverse sweeps (batches x iterations)
    int64_t samplesComputed = 0;      ///< samples that went through a batch
    int64_t targetScoresComputed = 0; ///< (target, sample) pairs computed
};

class HessianService {
public:
    /// `executor` and `source` must outlive the service; `seed` seeds the Rademacher draws.
    HessianService(const runtime::Executor& executor, SampleBatchSource& source, uint64_t seed = 0);

    /// Scores for every target node and sample of `request` (targets in request order, empty
    /// targetNodes: defaultTargetNodes). Errors: invalid request, unknown or unsuitable target,
    /// fewer samples in the source than requested (both counts), Cancelled.
    Result<HessianScores> fetch(const HessianScoresRequest& request, Progress& progress);

    const HessianServiceStats& stats() const { return m_stats; }

private:
    /// (node, mode, granularity, settings, sample index); settings = outputs, iterations, stop.
    using Key = std::tuple<std::string, int, int, std::string, int64_t>;

    struct Entry {
        std::vector<double> scores;
        runtime::Shape shape;
    };

    Result<void> computeMissing(const HessianScoresRequest& request,
                                const std::vector<EstimatorTarget>& targets,
                                const HessianOutputs& outputs, const std::string& settings,
                                Progress& progress);

    /// Refuses (explicit targets) or drops with a note (`defaults`) targets whose samples are not
    /// on axis 0 (sequence-first attention, a flattened batch), found by tracing 1 and 2 samples.
    Result<void> checkSamplesAxis(std::vector<EstimatorTarget>& targets, bool defaults,
                                  std::vector<std::string>& notes);

    /// Caches the scores of `targets` on `indices` that are not cached yet.
    void store(const std::vector<EstimatorTarget>& targets, const std::vector<int64_t>& indices,
               BatchScores scores, const std::function<Key(const EstimatorTarget&, int64_t)>& key);

    const runtime::Executor& m_executor;
    SampleBatchSource& m_source;
    uint64_t m_seed = 0;
    std::map<Key, Entry> m_cache;
    HessianServiceStats m_stats;
};

/// The workflow: executor over `graph`, a service over `source`, one fetch.
Result<HessianScores> runHessianScores(const graph::Graph& graph,
                                       const HessianScoresRequest& request,
                                       SampleBatchSource& source, Progress& progress,
                                       uint64_t seed = 0);

} // namespace qs::hessian
