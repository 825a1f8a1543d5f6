#include "core/hessian/hessian_service.h"

#include "core/runtime/batching.h"
#include "core/runtime/dataset_request.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace qs::hessian {

using runtime::Tensor;

namespace {

/// The estimator settings a cached score depends on, as one string of the cache key.
std::string settingsKey(const HessianScoresRequest& request, const HessianOutputs& outputs) {
    std::ostringstream key;
    key << request.iterations << '|' << (request.earlyStop ? request.tolerance : 0.0);
    for (const std::string& name : outputs.names) {
        key << '|' << name;
    }
    return key.str();
}

/// Pulls the source once and hands out the wanted samples (increasing indices) in chunks of
/// `batch`, each chunk one tensor per input: source batches are cut and stacked, so no sample
/// is dropped or read twice whatever the two batch sizes are.
class Rebatcher {
public:
    Rebatcher(SampleBatchSource& source, std::vector<int64_t> wanted, int64_t batch)
        : m_source(source)
        , m_wanted(std::move(wanted))
        , m_batch(batch) {}

    /// The next chunk's sample indices and inputs; no indices once every wanted sample is out.
    Result<std::pair<std::vector<int64_t>, std::vector<Tensor>>> next() {
        std::vector<int64_t> indices;
        std::vector<std::vector<Tensor>> parts;
        while (m_cursor < m_wanted.size() && static_cast<int64_t>(indices.size()) < m_batch) {
            if (m_current.empty() || m_offset + currentSize() <= m_wanted[m_cursor]) {
                if (!m_current.empty()) {
                    m_offset += currentSize();
                }
                QS_ASSIGN_OR_RETURN(m_current, m_source.next());
                if (m_current.empty() || m_current[0].rank() == 0) {
                    return Error(Errc::InvalidArgument,
                                 "not enough samples: the dataset holds " +
                                     std::to_string(m_offset) + ", the request needs " +
                                     std::to_string(m_wanted.back() + 1) + " (samples " +
                                     std::to_string(m_wanted.front()) + ".." +
                                     std::to_string(m_wanted.back()) + ")");
                }
                continue;
            }
            // A run of consecutive wanted rows inside the current source batch.
            const int64_t begin = m_wanted[m_cursor] - m_offset;
            int64_t end = begin + 1;
            indices.push_back(m_wanted[m_cursor++]);
            while (m_cursor < m_wanted.size() && static_cast<int64_t>(indices.size()) < m_batch &&
                   m_wanted[m_cursor] == m_offset + end && end < currentSize()) {
                indices.push_back(m_wanted[m_cursor++]);
                ++end;
            }
            parts.resize(m_current.size());
            for (size_t i = 0; i < m_current.size(); ++i) {
                parts[i].push_back(runtime::sliceBatch(m_current[i], begin, end));
            }
        }
        std::vector<Tensor> inputs;
        for (const std::vector<Tensor>& input : parts) {
            if (input.size() == 1) {
                inputs.push_back(input[0]);
                continue;
            }
            QS_ASSIGN_OR_RETURN(Tensor stacked, runtime::concatBatches(input));
            inputs.push_back(std::move(stacked));
        }
        return std::pair{std::move(indices), std::move(inputs)};
    }

private:
    int64_t currentSize() const { return m_current.empty() ? 0 : m_current[0].dim(0); }

    SampleBatchSource& m_source;
    std::vector<int64_t> m_wanted;
    int64_t m_batch;
    size_t m_cursor = 0;
    std::vector<Tensor> m_current;
    int64_t m_offset = 0; ///< global index of m_current's row 0
};

/// The value whose axis `axis` must hold the samples for `target`: its activation, or (weights
/// mode) the data input its per-sample weight gradient is split by.
std::pair<graph::ValueId, int64_t> sampleCarrier(const graph::Graph& graph,
                                                 const EstimatorTarget& target) {
    if (!target.weights) {
        return {target.tensor, 0};
    }
    const graph::Node& node = graph.node(*graph.findNode(target.node));
    const bool transA = node.opType == "Gemm" && node.intAttr("transA", 0) != 0;
    return {node.inputs[0], transA ? 1 : 0};
}

} // namespace

bool HessianService::sampleAxisCheckable() const {
    // Two samples are needed; with one, the estimator's size checks are all there is.
    if (m_source.size().value_or(2) < 2) {
        return false;
    }
    // A model with a static batch cannot run 1 and 2 samples; its batch is what it is, and one
    // sample per batch (the usual static batch) needs no split.
    const std::vector<graph::ValueId> inputs = m_executor.graph().runtimeInputs();
    return inputs.empty() || runtime::staticBatchSize(m_executor.graph().value(inputs[0])) <= 0;
}

bool HessianService::unjudged(const std::vector<EstimatorTarget>& targets) const {
    return std::any_of(targets.begin(), targets.end(), [&](const EstimatorTarget& target) {
        return m_sampleAxis.count({target.node, target.weights}) == 0;
    });
}

void HessianService::judgeSamplesAxisBySymbol(const std::vector<EstimatorTarget>& targets) {
    // Import-time shape inference carries the batch's symbol (dim_param) through the graph; a
    // tensor with it on its sample axis is 1 long for one sample and N long for N, what the
    // traced check would find, without running it.
    const graph::Graph& graph = m_executor.graph();
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    if (inputs.empty()) {
        return;
    }
    const graph::TensorShape& input = graph.value(inputs[0]).shape;
    if (!input.rankKnown || input.rank() == 0 || input.dims[0].isKnown() ||
        input.dims[0].symbol.empty()) {
        return;
    }
    const std::string& batch = input.dims[0].symbol;
    for (const EstimatorTarget& target : targets) {
        const auto [value, axis] = sampleCarrier(graph, target);
        const graph::TensorShape& shape = graph.value(value).shape;
        const auto at = static_cast<size_t>(axis);
        if (shape.rankKnown && shape.rank() > at && !shape.dims[at].isKnown() &&
            shape.dims[at].symbol == batch) {
            m_sampleAxis.emplace(std::pair{target.node, target.weights}, std::string());
        }
    }
}

void HessianService::judgeSamplesAxis(const std::vector<EstimatorTarget>& targets,
                                      const runtime::ForwardTrace& single,
                                      const runtime::ForwardTrace& many, int64_t count) {
    // A tensor holds the samples on its axis iff that axis is 1 long for one sample and
    // `count` long for `count` of them.
    for (const EstimatorTarget& target : targets) {
        const auto [value, axis] = sampleCarrier(m_executor.graph(), target);
        const Tensor& a = single.values[value.index()];
        const Tensor& b = many.values[value.index()];
        const auto rank = static_cast<int64_t>(a.rank());
        const bool batchFirst =
            a.defined() && b.defined() && rank > axis && a.dim(axis) == 1 && b.dim(axis) == count;
        std::string reason;
        if (!batchFirst) {
            reason = "the samples are not on axis " + std::to_string(axis) + " of '" +
                     m_executor.graph().value(value).name + "' (" +
                     (a.defined() ? runtime::shapeToString(a.shape()) : "?") + " for 1 sample, " +
                     (b.defined() ? runtime::shapeToString(b.shape()) : "?") + " for " +
                     std::to_string(count) + ")";
        }
        m_sampleAxis.emplace(std::pair{target.node, target.weights}, std::move(reason));
    }
}

Result<void> HessianService::applySampleAxisVerdicts(std::vector<EstimatorTarget>& targets,
                                                     bool defaults,
                                                     std::vector<std::string>& notes) const {
    std::vector<EstimatorTarget> kept;
    for (EstimatorTarget& target : targets) {
        const auto verdict = m_sampleAxis.find({target.node, target.weights});
        if (verdict == m_sampleAxis.end() || verdict->second.empty()) {
            kept.push_back(std::move(target));
            continue;
        }
        if (!defaults) {
            return Error(Errc::Unsupported,
                         verdict->second + ": its scores cannot be split per sample")
                .context("target node '" + target.node + "'");
        }
        notes.push_back("node '" + target.node + "' is left out: " + verdict->second);
    }
    targets = std::move(kept);
    return success();
}

Result<void> HessianService::traceSamplesAxis(const std::vector<EstimatorTarget>& targets) {
    QS_TRY(m_source.rewind());
    Rebatcher rebatcher(m_source, {0, 1}, 2);
    QS_ASSIGN_OR_RETURN(auto chunk, rebatcher.next());
    std::vector<Tensor> one;
    for (const Tensor& input : chunk.second) {
        one.push_back(runtime::sliceBatch(input, 0, 1));
    }
    QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace two,
                        m_executor.forwardForBackward(chunk.second));
    QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace single, m_executor.forwardForBackward(one));
    m_stats.sampleAxisForwards += 2;
    judgeSamplesAxis(targets, single, two, 2);
    return success();
}

std::vector<int64_t> HessianService::missingSamples(const HessianScoresRequest& request,
                                                    const std::vector<EstimatorTarget>& targets,
                                                    const std::string& settings) const {
    std::vector<int64_t> wanted;
    for (int64_t i = request.firstSample; i < request.firstSample + request.samples; ++i) {
        if (std::any_of(targets.begin(), targets.end(), [&](const EstimatorTarget& target) {
                return m_cache.count(key(request, settings, target, i)) == 0;
            })) {
            wanted.push_back(i);
        }
    }
    return wanted;
}

HessianService::Key HessianService::key(const HessianScoresRequest& request,
                                        const std::string& settings, const EstimatorTarget& target,
                                        int64_t sample) {
    return Key{target.node, static_cast<int>(request.mode), static_cast<int>(request.granularity),
               settings, sample};
}

HessianService::HessianService(const runtime::Executor& executor, SampleBatchSource& source,
                               uint64_t seed)
    : m_executor(executor)
    , m_source(source)
    , m_seed(seed) {}

Result<void> HessianService::settleSamplesAxis(const HessianScoresRequest& request,
                                               std::vector<EstimatorTarget>& targets,
                                               const std::string& settings,
                                               std::vector<std::string>& notes) {
    // Judged once per node: a 1-sample trace against the first Hessian batch's own trace when
    // that has 2 samples or more (one small extra forward, in computeMissing), else against a
    // 2-sample trace, here.
    const bool defaults = request.targetNodes.empty();
    judgeSamplesAxisBySymbol(targets);
    QS_TRY(applySampleAxisVerdicts(targets, defaults, notes));
    m_judgeOnFirstBatch = sampleAxisCheckable() && unjudged(targets);
    if (m_judgeOnFirstBatch &&
        (request.batch < 2 || missingSamples(request, targets, settings).size() < 2)) {
        m_judgeOnFirstBatch = false;
        QS_TRY(traceSamplesAxis(targets));
        QS_TRY(applySampleAxisVerdicts(targets, defaults, notes));
    }
    if (targets.empty()) {
        return Error(Errc::InvalidArgument, "no target holds its samples on axis 0");
    }
    return success();
}

std::vector<EstimatorTarget>
HessianService::missingTargets(const HessianScoresRequest& request, const std::string& settings,
                               const std::vector<EstimatorTarget>& targets,
                               const std::vector<int64_t>& indices) const {
    std::vector<EstimatorTarget> todo;
    for (const EstimatorTarget& target : targets) {
        if (std::any_of(indices.begin(), indices.end(), [&](int64_t i) {
                return m_cache.count(key(request, settings, target, i)) == 0;
            })) {
            todo.push_back(target);
        }
    }
    return todo;
}

Result<HessianScores> HessianService::fetch(const HessianScoresRequest& request,
                                            Progress& progress) {
    QS_TRY(request.validate());
    const graph::Graph& graph = m_executor.graph();
    QS_ASSIGN_OR_RETURN(HessianOutputs outputs, resolveOutputs(graph, request.outputs));
    HessianScores result;
    result.notes = outputs.notes;
    std::vector<std::string> names = request.targetNodes;
    if (names.empty()) {
        names = defaultTargetNodes(graph, request.mode, outputs, result.notes);
        if (names.empty()) {
            return Error(Errc::InvalidArgument,
                         "the model has no Conv, ConvTranspose, Gemm or MatMul node to score");
        }
    }
    std::vector<EstimatorTarget> targets;
    std::set<std::string> seen;
    for (const std::string& name : names) {
        if (!seen.insert(name).second) {
            return Error(Errc::InvalidArgument, "target node '" + name + "' is listed twice");
        }
        QS_ASSIGN_OR_RETURN(EstimatorTarget target,
                            resolveTarget(graph, name, request.mode, outputs));
        targets.push_back(std::move(target));
    }
    const std::string settings = settingsKey(request, outputs);
    QS_TRY(settleSamplesAxis(request, targets, settings, result.notes));
    const std::optional<int64_t> available = m_source.size();
    const int64_t needed = request.firstSample + request.samples;
    if (available && *available < needed) {
        return Error(Errc::InvalidArgument, "not enough samples: the dataset holds " +
                                                std::to_string(*available) +
                                                ", the request needs " + std::to_string(needed) +
                                                " (samples " + std::to_string(request.firstSample) +
                                                ".." + std::to_string(needed - 1) + ")");
    }
    QS_TRY(computeMissing(request, targets, outputs, settings, result.notes, progress));

    result.mode = request.mode;
    result.granularity = request.granularity;
    result.iterations = request.iterations;
    result.batch = request.batch;
    result.earlyStop = request.earlyStop;
    result.tolerance = request.tolerance;
    result.seed = m_seed;
    result.outputs = outputs.names;
    for (int64_t i = request.firstSample; i < needed; ++i) {
        result.sampleIndices.push_back(i);
    }
    for (const EstimatorTarget& target : targets) {
        HessianTargetScores scores;
        scores.node = target.node;
        scores.tensor = target.tensorName;
        for (const int64_t i : result.sampleIndices) {
            const Entry& entry = m_cache.at(key(request, settings, target, i));
            scores.shape = entry.shape;
            scores.perSample.push_back(entry.scores);
        }
        result.targets.push_back(std::move(scores));
    }
    return result;
}

Result<void> HessianService::computeMissing(const HessianScoresRequest& request,
                                            std::vector<EstimatorTarget>& targets,
                                            const HessianOutputs& outputs,
                                            const std::string& settings,
                                            std::vector<std::string>& notes, Progress& progress) {
    const auto keyOf = [&](const EstimatorTarget& target, int64_t sample) {
        return key(request, settings, target, sample);
    };
    const std::vector<int64_t> wanted = missingSamples(request, targets, settings);
    if (wanted.empty()) {
        progress.report(1.0, "all scores cached");
        return success();
    }
    QS_TRY(m_source.rewind());
    Rebatcher rebatcher(m_source, wanted, request.batch);
    const int64_t batches =
        (static_cast<int64_t>(wanted.size()) + request.batch - 1) / request.batch;
    const EstimatorSettings estimator{.granularity = request.granularity,
                                      .iterations = request.iterations,
                                      .earlyStop = request.earlyStop,
                                      .tolerance = request.tolerance,
                                      .seed = m_seed};
    for (int64_t b = 0; b < batches; ++b) {
        if (progress.isCancelled()) {
            return Error(Errc::Cancelled, "cancelled");
        }
        QS_ASSIGN_OR_RETURN(auto chunk, rebatcher.next());
        const auto& [indices, inputs] = chunk;
        const std::string what = "batch " + std::to_string(b + 1) + "/" + std::to_string(batches);
        QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace trace,
                            m_executor.forwardForBackward(inputs).context(what));
        if (m_judgeOnFirstBatch) { // fetch saw to it that this batch has 2 samples or more
            QS_TRY(judgeOnBatch(trace, inputs, static_cast<int64_t>(indices.size()),
                                request.targetNodes.empty(), targets, notes));
        }
        // Every target missing for some sample of the chunk, in one sweep per iteration.
        const std::vector<EstimatorTarget> todo =
            missingTargets(request, settings, targets, indices);
        if (todo.empty()) {
            continue; // only a target the check just dropped wanted these samples
        }
        const auto onSweep = [&](int it) {
            ++m_stats.sweeps;
            const double done =
                (static_cast<double>(b) + static_cast<double>(it) / request.iterations) /
                static_cast<double>(batches);
            progress.report(done, what + ", iteration " + std::to_string(it) + "/" +
                                      std::to_string(request.iterations));
        };
        ++m_stats.forwardPasses;
        QS_ASSIGN_OR_RETURN(BatchScores scores, estimateBatch(m_executor, trace, indices, todo,
                                                              outputs, estimator, progress, onSweep)
                                                    .context(what));
        m_stats.samplesComputed += static_cast<int64_t>(indices.size());
        store(todo, indices, std::move(scores), keyOf);
    }
    return success();
}

Result<void> HessianService::judgeOnBatch(const runtime::ForwardTrace& trace,
                                          std::span<const Tensor> inputs, int64_t count,
                                          bool defaults, std::vector<EstimatorTarget>& targets,
                                          std::vector<std::string>& notes) {
    std::vector<Tensor> one;
    for (const Tensor& input : inputs) {
        one.push_back(runtime::sliceBatch(input, 0, 1));
    }
    QS_ASSIGN_OR_RETURN(const runtime::ForwardTrace single, m_executor.forwardForBackward(one));
    ++m_stats.sampleAxisForwards;
    judgeSamplesAxis(targets, single, trace, count);
    m_judgeOnFirstBatch = false;
    QS_TRY(applySampleAxisVerdicts(targets, defaults, notes));
    if (targets.empty()) {
        return Error(Errc::InvalidArgument, "no target holds its samples on axis 0");
    }
    return success();
}

void HessianService::store(const std::vector<EstimatorTarget>& targets,
                           const std::vector<int64_t>& indices, BatchScores scores,
                           const std::function<Key(const EstimatorTarget&, int64_t)>& key) {
    // Only what was missing: a cached score stays the one first computed.
    for (size_t t = 0; t < targets.size(); ++t) {
        for (size_t s = 0; s < indices.size(); ++s) {
            if (m_cache
                    .emplace(key(targets[t], indices[s]),
                             Entry{std::move(scores.scores[t][s]), scores.shapes[t]})
                    .second) {
                ++m_stats.targetScoresComputed;
            }
        }
    }
}

Result<HessianScores> runHessianScores(const graph::Graph& graph,
                                       const HessianScoresRequest& request,
                                       SampleBatchSource& source, Progress& progress,
                                       uint64_t seed) {
    QS_ASSIGN_OR_RETURN(runtime::Executor executor, runtime::Executor::create(graph));
    HessianService service(executor, source, seed);
    return service.fetch(request, progress);
}

} // namespace qs::hessian
