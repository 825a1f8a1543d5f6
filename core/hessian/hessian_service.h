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
#include <span>
#include <string>
#include <tuple>

namespace qs::hessian {

/// Work counters, for tests and reports.
struct HessianServiceStats {
    int64_t forwardPasses = 0;        ///< one per computed Hessian batch
    int64_t sweeps = 0;               ///< reverse sweeps (batches x iterations)
    int64_t samplesComputed = 0;      ///< samples that went through a batch
    int64_t targetScoresComputed = 0; ///< (target, sample) pairs computed
    int64_t sampleAxisForwards = 0;   ///< traced forwards run only to judge the samples axis
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

    static Key key(const HessianScoresRequest& request, const std::string& settings,
                   const EstimatorTarget& target, int64_t sample);

    /// Samples of the request for which some target has no cached score.
    std::vector<int64_t> missingSamples(const HessianScoresRequest& request,
                                        const std::vector<EstimatorTarget>& targets,
                                        const std::string& settings) const;

    /// Applies the known samples-axis verdicts and arranges for the missing ones: judged here
    /// (batch 1, or fewer than 2 samples to compute) or on the first batch (m_judgeOnFirstBatch).
    /// Error when no target is left.
    Result<void> settleSamplesAxis(const HessianScoresRequest& request,
                                   std::vector<EstimatorTarget>& targets,
                                   const std::string& settings, std::vector<std::string>& notes);

    /// The targets with no cached score for some sample of `indices`.
    std::vector<EstimatorTarget> missingTargets(const HessianScoresRequest& request,
                                                const std::string& settings,
                                                const std::vector<EstimatorTarget>& targets,
                                                const std::vector<int64_t>& indices) const;

    /// Runs the Hessian batches of the missing samples; judges the samples axis on the first
    /// one when m_judgeOnFirstBatch is set (and may drop targets, adding notes).
    Result<void> computeMissing(const HessianScoresRequest& request,
                                std::vector<EstimatorTarget>& targets,
                                const HessianOutputs& outputs, const std::string& settings,
                                std::vector<std::string>& notes, Progress& progress);

    /// False when the samples axis cannot or need not be judged: fewer than 2 samples, or a
    /// model with a static batch.
    bool sampleAxisCheckable() const;

    /// True when some target has no samples-axis verdict yet.
    bool unjudged(const std::vector<EstimatorTarget>& targets) const;

    /// Records, for every target without one, whether it holds the samples on axis 0 (sequence-
    /// first attention or a flattened batch do not): its tensor's axis is 1 long in `single`
    /// and `count` long in `many`, traces of 1 and `count` samples.
    /// Judges the targets whose samples axis the graph's shapes show: that dim carries the
    /// symbol of the first input's dynamic batch dim.
    void judgeSamplesAxisBySymbol(const std::vector<EstimatorTarget>& targets);

    void judgeSamplesAxis(const std::vector<EstimatorTarget>& targets,
                          const runtime::ForwardTrace& single, const runtime::ForwardTrace& many,
                          int64_t count);

    /// Refuses (explicit targets) or drops with a note (`defaults`) targets judged not to hold
    /// their samples on axis 0.
    Result<void> applySampleAxisVerdicts(std::vector<EstimatorTarget>& targets, bool defaults,
                                         std::vector<std::string>& notes) const;

    /// Judges `targets` by tracing samples 0..1 and sample 0.
    Result<void> traceSamplesAxis(const std::vector<EstimatorTarget>& targets);

    /// Judges `targets` on a Hessian batch's trace (`count` >= 2 samples) and its first sample
    /// alone, then applies the verdicts.
    Result<void> judgeOnBatch(const runtime::ForwardTrace& trace,
                              std::span<const runtime::Tensor> inputs, int64_t count, bool defaults,
                              std::vector<EstimatorTarget>& targets,
                              std::vector<std::string>& notes);

    /// Caches the scores of `targets` on `indices` that are not cached yet.
    void store(const std::vector<EstimatorTarget>& targets, const std::vector<int64_t>& indices,
               BatchScores scores, const std::function<Key(const EstimatorTarget&, int64_t)>& key);

    const runtime::Executor& m_executor;
    SampleBatchSource& m_source;
    uint64_t m_seed = 0;
    std::map<Key, Entry> m_cache;
    /// (node, weights mode) -> empty when it holds its samples on axis 0, else why not.
    std::map<std::pair<std::string, bool>, std::string> m_sampleAxis;
    bool m_judgeOnFirstBatch = false; ///< set by fetch for computeMissing
    HessianServiceStats m_stats;
};

/// The workflow: executor over `graph`, a service over `source`, one fetch.
Result<HessianScores> runHessianScores(const graph::Graph& graph,
                                       const HessianScoresRequest& request,
                                       SampleBatchSource& source, Progress& progress,
                                       uint64_t seed = 0);

} // namespace qs::hessian
