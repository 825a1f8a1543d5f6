// The HAWQ workflow: state, traces, perturbations, candidates, choice, application.

#include "core/mixed_precision/hawq_workflow.h"

#include "core/hessian/hessian_service.h"
#include "core/hessian/sample_batch_source.h"
#include "core/mixed_precision/pareto_search.h"
#include "core/mixed_precision/perturbation.h"
#include "core/mixed_precision/trace_order_candidates.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <set>

namespace qs::mixed_precision {

using quantization::QuantizationState;

std::string_view searchName(HawqSearch search) {
    return search == HawqSearch::Pareto ? "pareto" : "trace-order";
}

Result<HawqSearch> parseSearch(std::string_view text) {
    if (text == "trace-order") {
        return HawqSearch::TraceOrder;
    }
    if (text == "pareto") {
        return HawqSearch::Pareto;
    }
    return Error(Errc::InvalidArgument,
                 "unknown search '" + std::string(text) + "' (trace-order, pareto)");
}

int mergedQuantizerCount(const quantization::SingleConfigQuantizerSetup& setup) {
    return static_cast<int>(setup.mergedInto.size());
}

int requantizerCount(const quantization::SingleConfigQuantizerSetup& setup) {
    return static_cast<int>(setup.requantizationParents.size());
}

Result<std::vector<double>> averageTraces(const HawqProblem& problem,
                                          const hessian::HessianScores& scores) {
    if (scores.mode != hessian::HessianMode::Weights ||
        scores.granularity != hessian::HessianScoresGranularity::PerTensor) {
        return Error(Errc::InvalidArgument,
                     "HAWQ traces need weights-mode per-tensor scores, got " +
                         std::string(hessian::modeName(scores.mode)) + " " +
                         std::string(hessian::granularityName(scores.granularity)));
    }
    std::map<std::string, const hessian::HessianTargetScores*> byNode;
    for (const hessian::HessianTargetScores& target : scores.targets) {
        byNode[target.node] = &target;
    }
    std::vector<double> traces;
    for (const WeightLayer& layer : problem.layers) {
        const auto it = byNode.find(layer.node);
        if (it == byNode.end()) {
            return Error(Errc::InvalidArgument,
                         "the traces have no scores for layer '" + layer.node + "'");
        }
        const std::vector<double> mean = it->second->mean();
        if (mean.size() != 1 || it->second->numel() != layer.numel) {
            return Error(Errc::InvalidArgument,
                         "the traces of layer '" + layer.node + "' are for a tensor of " +
                             std::to_string(it->second->numel()) + " elements, its weight has " +
                             std::to_string(layer.numel));
        }
        traces.push_back(mean.front() / static_cast<double>(layer.numel));
    }
    return traces;
}

Result<size_t> selectHawqCandidate(const HawqAnalysis& analysis, double target) {
    const std::vector<size_t>& among =
        analysis.search == HawqSearch::Pareto ? analysis.pareto : analysis.traceOrder;
    return selectForRatio(analysis.candidates, among, target);
}

Result<quantization::QuantizerConfigChoice> hawqConfigChoice(const QuantizationState& state,
                                                             const HawqProblem& problem,
                                                             const HawqCandidate& candidate) {
    const auto& points = state.proposal.setup.quantizationPoints;
    quantization::QuantizerConfigChoice changes;
    const auto set = [&](int qp, int bits) -> Result<void> {
        const std::optional<quantization::QuantizerConfig> config =
            configForBits(points.at(qp), bits, state.settings.preset);
        if (!config) {
            return Error(Errc::Internal, "quantizer #" + std::to_string(qp) + " has no " +
                                             std::to_string(bits) + "-bit config");
        }
        changes[qp] = *config;
        return success();
    };
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        QS_TRY(set(problem.layers[l].weightQp, candidate.weightBits[l]));
    }
    for (size_t a = 0; a < problem.activations.size(); ++a) {
        if (!problem.activations[a].bitsAllowed.empty()) {
            QS_TRY(set(problem.activations[a].qp, candidate.activationBits[a]));
        }
    }
    return changes;
}

Result<void> applyHawqCandidate(QuantizationState& state, const HawqProblem& problem,
                                const HawqCandidate& candidate) {
    QS_ASSIGN_OR_RETURN(const quantization::QuantizerConfigChoice changes,
                        hawqConfigChoice(state, problem, candidate));
    return quantization::chooseConfigs(state, changes);
}

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result<hessian::HessianScores> computeTraces(const graph::Graph& model, const HawqRequest& request,
                                             std::vector<runtime::Tensor>& firstSample,
                                             Progress& progress) {
    // The service's default targets (every Conv/ConvTranspose/Gemm/MatMul with a weight) rather
    // than the layers by name: it then drops, with a note, those whose samples are not on axis 0
    // (sequence-first attention), which HAWQ leaves out of the search instead of failing.
    hessian::HessianScoresRequest scores;
    scores.mode = hessian::HessianMode::Weights;
    scores.granularity = hessian::HessianScoresGranularity::PerTensor;
    scores.samples = request.samples;
    scores.iterations = request.iterations;
    const std::vector<graph::ValueId> inputs = model.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : runtime::staticBatchSize(model.value(inputs[0]));
    scores.batch =
        request.batch > 0
            ? request.batch
            : (fixed > 0 ? fixed : std::min(hessian::kDefaultHessianBatch, request.samples));
    if (request.dataset.empty()) {
        return Error(Errc::InvalidArgument, "HAWQ traces need a dataset (or traces to load)");
    }
    runtime::DatasetRequest source = request.dataset;
    if (source.kind() != runtime::DatasetKind::Random) {
        source.maxSamples = request.samples;
    }
    QS_ASSIGN_OR_RETURN(runtime::Dataset data,
                        runtime::loadDataset(model, source).context("dataset"));
    for (const runtime::Tensor& input : data.inputs) {
        firstSample.push_back(runtime::sliceBatch(input, 0, 1));
    }
    QS_ASSIGN_OR_RETURN(runtime::Executor executor, runtime::Executor::create(model));
    hessian::TensorBatchSource samples(std::move(data.inputs), scores.batch);
    hessian::HessianService service(executor, samples, request.seed);
    return service.fetch(scores, progress);
}

/// Layers without scores stay out of the search at their current config, with a note.
Result<void> fixLayersWithoutTraces(const graph::Graph& model, const HawqRequest& request,
                                    HawqOutcome& outcome) {
    HawqAnalysis& analysis = outcome.analysis;
    std::set<std::string> scored;
    for (const hessian::HessianTargetScores& target : analysis.traceScores.targets) {
        scored.insert(target.node);
    }
    std::set<int> fixed;
    for (const WeightLayer& layer : analysis.problem.layers) {
        if (!scored.contains(layer.node)) {
            fixed.insert(layer.weightQp);
        }
    }
    if (fixed.empty()) {
        return success();
    }
    QS_ASSIGN_OR_RETURN(analysis.problem,
                        buildHawqProblem(model, outcome.state, request.bits, request.mode, fixed));
    for (const int id : fixed) {
        analysis.problem.notes.push_back(
            "layer '" +
            outcome.state.proposal.setup.quantizationPoints.at(id).insertionPoint.targetNodeName +
            "' has no trace and keeps its config outside the search (" +
            outcome.state.choice.at(id).toString() + ")");
    }
    return success();
}

/// The trace-order search's own non-dominated candidates, ratio descending.
std::vector<size_t> traceOrderFront(const HawqAnalysis& analysis) {
    std::vector<size_t> order = analysis.traceOrder;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const HawqCandidate& x = analysis.candidates[a];
        const HawqCandidate& y = analysis.candidates[b];
        return x.ratio != y.ratio ? x.ratio > y.ratio : x.metric < y.metric;
    });
    std::vector<size_t> front;
    for (const size_t i : order) {
        const HawqCandidate& candidate = analysis.candidates[i];
        const bool better =
            front.empty() || candidate.metric < analysis.candidates[front.back()].metric;
        const bool sameRatio =
            !front.empty() && analysis.candidates[front.back()].ratio == candidate.ratio;
        if (better && !sameRatio) {
            front.push_back(i);
        }
    }
    return front;
}

/// Trace-order candidates, then the front's points that are not among them.
Result<void> buildCandidates(HawqAnalysis& analysis, Progress& progress) {
    const HawqProblem& problem = analysis.problem;
    std::map<std::vector<int>, size_t> index;
    for (std::vector<int>& bits : traceOrderCandidates(problem, analysis.avgTraces)) {
        QS_TRY(checkCancelled(progress));
        QS_ASSIGN_OR_RETURN(HawqCandidate candidate,
                            evaluateCandidate(problem, analysis.avgTraces, analysis.perturbations,
                                              std::move(bits)));
        index[candidate.weightBits] = analysis.candidates.size();
        analysis.traceOrder.push_back(analysis.candidates.size());
        analysis.candidates.push_back(std::move(candidate));
    }
    if (analysis.search == HawqSearch::Pareto) {
        QS_ASSIGN_OR_RETURN(
            std::vector<HawqCandidate> front,
            paretoFront(problem, analysis.avgTraces, analysis.perturbations, progress));
        for (HawqCandidate& point : front) {
            auto [it, added] = index.try_emplace(point.weightBits, analysis.candidates.size());
            if (added) {
                analysis.candidates.push_back(std::move(point));
            }
            analysis.pareto.push_back(it->second);
        }
        return success();
    }
    analysis.pareto = traceOrderFront(analysis);
    return success();
}

/// The traces stage: scores given or computed, layers without them fixed, MACs measured.
Result<void> prepareTraces(const graph::Graph& model, const HawqRequest& request,
                           HawqOutcome& outcome, Progress& progress) {
    HawqAnalysis& analysis = outcome.analysis;
    std::vector<runtime::Tensor> firstSample;
    if (request.traces) {
        analysis.traceScores = *request.traces;
    } else {
        SubProgress stage(progress, 0.0, 0.8);
        QS_ASSIGN_OR_RETURN(
            analysis.traceScores,
            computeTraces(model, request, firstSample, stage).context("average traces"));
    }
    QS_TRY(fixLayersWithoutTraces(model, request, outcome));
    if (!firstSample.empty()) {
        QS_TRY(measureUnknownMacs(model, firstSample, analysis.problem).context("MACs"));
    }
    if (std::all_of(analysis.problem.layers.begin(), analysis.problem.layers.end(),
                    [](const WeightLayer& layer) { return layer.macs == 0; })) {
        return Error(Errc::InvalidArgument,
                     "no layer has known MACs, so no BitOps ratio: give static input shapes "
                     "(--input-shape) or a dataset to measure them");
    }
    return success();
}

} // namespace

Result<HawqOutcome> runHawq(const graph::Graph& model, const HawqRequest& request,
                            Progress& progress) {
    if (request.samples <= 0 || request.iterations <= 0) {
        return Error(Errc::InvalidArgument, "HAWQ needs samples > 0 and iterations > 0");
    }
    HawqOutcome outcome;
    outcome.target = request.compressionRatio;
    QS_ASSIGN_OR_RETURN(outcome.state, quantization::computeQuantization(model, request.settings));
    HawqAnalysis& analysis = outcome.analysis;
    analysis.search = request.search;
    QS_ASSIGN_OR_RETURN(analysis.problem,
                        buildHawqProblem(model, outcome.state, request.bits, request.mode));
    QS_TRY(checkCancelled(progress));

    auto start = std::chrono::steady_clock::now();
    QS_TRY(prepareTraces(model, request, outcome, progress));
    QS_ASSIGN_OR_RETURN(analysis.avgTraces, averageTraces(analysis.problem, analysis.traceScores));
    outcome.timings.tracesSeconds = secondsSince(start);

    start = std::chrono::steady_clock::now();
    {
        SubProgress stage(progress, 0.8, 0.9);
        QS_ASSIGN_OR_RETURN(analysis.perturbations,
                            layerPerturbations(model, outcome.state, analysis.problem, stage));
    }
    outcome.timings.perturbationSeconds = secondsSince(start);

    start = std::chrono::steady_clock::now();
    {
        SubProgress stage(progress, 0.9, 1.0);
        QS_TRY(buildCandidates(analysis, stage));
    }
    QS_ASSIGN_OR_RETURN(outcome.chosen, selectHawqCandidate(analysis, request.compressionRatio));
    outcome.timings.searchSeconds = secondsSince(start);
    QS_TRY(
        applyHawqCandidate(outcome.state, analysis.problem, analysis.candidates[outcome.chosen]));
    outcome.mergedQuantizers = mergedQuantizerCount(outcome.state.setup);
    outcome.requantizers = requantizerCount(outcome.state.setup);
    progress.report(1.0, "done");
    return outcome;
}

} // namespace qs::mixed_precision
