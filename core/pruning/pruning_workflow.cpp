#include "core/pruning/pruning_workflow.h"

#include "core/hessian/hessian_service.h"
#include "core/pruning/memory_calculator.h"
#include "core/pruning/prepare_graph.h"
#include "core/pruning/prune_graph.h"
#include "core/pruning/simd_size.h"
#include "core/quantization/hw_config.h"
#include "core/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace qs::pruning {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t floatInitializerParameters(const graph::Graph& graph) {
    int64_t total = 0;
    std::set<size_t> seen;
    for (const graph::NodeId id : graph.nodeIds()) {
        for (const graph::ValueId in : graph.node(id).inputs) {
            if (in.valid() && graph.value(in).isInitializer() &&
                graph.value(in).initializer->dtype() == graph::DataType::Float &&
                seen.insert(in.index()).second) {
                total += graph.value(in).initializer->numElements();
            }
        }
    }
    return total;
}

/// H_c per section from precomputed or freshly computed weights-mode per-channel scores.
Result<std::vector<std::vector<double>>> hessianPerSection(const hessian::HessianScores& scores,
                                                           const PruningAnalysis& analysis) {
    if (scores.mode != hessian::HessianMode::Weights ||
        scores.granularity != hessian::HessianScoresGranularity::PerOutputChannel) {
        return Error(Errc::InvalidArgument,
                     "LFH importance needs weights-mode per-output-channel scores, got " +
                         std::string(hessian::modeName(scores.mode)) + " / " +
                         std::string(hessian::granularityName(scores.granularity)));
    }
    std::vector<std::vector<double>> out;
    for (const std::string& entry : analysis.entryNames) {
        auto it =
            std::find_if(scores.targets.begin(), scores.targets.end(),
                         [&](const hessian::HessianTargetScores& t) { return t.node == entry; });
        if (it == scores.targets.end()) {
            return Error(Errc::InvalidArgument, "the scores have no target '" + entry + "'");
        }
        out.push_back(it->mean());
    }
    return out;
}

Result<hessian::HessianScores> computeScores(const graph::Graph& graph,
                                             const PruningRequest& request,
                                             const PruningAnalysis& analysis, Progress& progress) {
    if (request.dataset.empty()) {
        return Error(Errc::Usage, "LFH importance needs a dataset (--calib-npy, --calib-images or "
                                  "--calib-random); --importance l2 or random do not");
    }
    if (request.samples <= 0) {
        return Error(Errc::InvalidArgument, "--samples must be positive");
    }
    hessian::HessianScoresRequest hr;
    hr.mode = hessian::HessianMode::Weights;
    hr.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
    hr.targetNodes = analysis.entryNames;
    hr.samples = request.samples;
    hr.iterations = request.iterations;
    hr.earlyStop = request.earlyStop;
    const std::vector<graph::ValueId> inputs = graph.runtimeInputs();
    const int64_t fixed = inputs.empty() ? 0 : runtime::staticBatchSize(graph.value(inputs[0]));
    hr.batch = request.hessianBatch > 0
                   ? request.hessianBatch
                   : (fixed > 0 ? fixed : std::min(hessian::kDefaultHessianBatch, request.samples));
    if (fixed > 0 && hr.batch != fixed) {
        return Error(Errc::InvalidArgument,
                     "the model's input has a static batch of " + std::to_string(fixed) +
                         ": the Hessian batch must be " + std::to_string(fixed));
    }
    runtime::DatasetRequest source = request.dataset;
    if (source.kind() != runtime::DatasetKind::Random) {
        source.maxSamples = std::min(source.maxSamples, request.samples);
    }
    QS_ASSIGN_OR_RETURN(runtime::Dataset data,
                        runtime::loadDataset(graph, source).context("dataset"));
    if (data.samples() < request.samples) {
        return Error(Errc::InvalidArgument, "--samples " + std::to_string(request.samples) +
                                                " but the dataset has " +
                                                std::to_string(data.samples()) + " samples");
    }
    QS_ASSIGN_OR_RETURN(runtime::Executor executor, runtime::Executor::create(graph));
    hessian::TensorBatchSource samples(std::move(data.inputs), hr.batch);
    hessian::HessianService service(executor, samples, request.seed);
    return service.fetch(hr, progress);
}

} // namespace

int64_t TargetMemory::bytes(int64_t denseBytes) const {
    if (fraction) {
        return static_cast<int64_t>(std::floor(value * static_cast<double>(denseBytes)));
    }
    return static_cast<int64_t>(value);
}

std::string TargetMemory::describe() const {
    std::ostringstream out;
    if (fraction) {
        out << value * 100.0 << " %";
    } else {
        out << static_cast<int64_t>(value) << " bytes";
    }
    return out.str();
}

Result<TargetMemory> parseTargetMemory(std::string_view text) {
    const Error bad(Errc::Usage,
                    "--target-memory expects a percentage (50%) or a byte count, got '" +
                        std::string(text) + "'");
    if (text.empty()) {
        return bad;
    }
    TargetMemory target;
    const bool percent = text.back() == '%';
    const std::string number(percent ? text.substr(0, text.size() - 1) : text);
    try {
        size_t used = 0;
        const double value = std::stod(number, &used);
        if (used != number.size() || !std::isfinite(value) || value <= 0.0) {
            return bad;
        }
        if (percent) {
            if (value > 100.0) {
                return bad;
            }
            target.fraction = true;
            target.value = value / 100.0;
        } else {
            if (value != std::floor(value) || value > 9.0e18) {
                return bad;
            }
            target.fraction = false;
            target.value = value;
        }
    } catch (const std::exception&) {
        return bad;
    }
    return target;
}

namespace {

/// The names of the sections' entries and exits, and the SIMD size reported: the override, or the
/// smallest over the entries.
void describeSections(PruningAnalysis& analysis, int64_t simdOverride) {
    const graph::Graph& graph = analysis.graph;
    analysis.simd = simdOverride;
    for (const PruningSection& section : analysis.detection.sections) {
        analysis.entryNames.push_back(graph.node(section.entry).name);
        analysis.exitNames.push_back(graph.node(section.exit).name);
        const int64_t simd = analysis.simdByNode[section.entry.index()];
        if (simdOverride <= 0) {
            analysis.simd = analysis.simd == 0 ? simd : std::min(analysis.simd, simd);
        }
    }
    if (analysis.simd == 0) {
        analysis.simd = kDefaultSimdSize;
    }
}

/// H_c per section (empty lists unless LFH): precomputed, or from one Hessian service fetch.
Result<std::vector<std::vector<double>>>
lfhHessians(PruningAnalysis& analysis, const PruningRequest& request, Progress& progress) {
    if (request.importance != ImportanceMetric::Lfh || analysis.detection.sections.empty()) {
        return std::vector<std::vector<double>>(analysis.detection.sections.size());
    }
    hessian::HessianScores scores;
    if (request.scores) {
        scores = *request.scores;
    } else {
        SubProgress scoring(progress, 0.02, 0.98);
        QS_ASSIGN_OR_RETURN(scores, computeScores(analysis.graph, request, analysis, scoring));
    }
    analysis.samples = static_cast<int64_t>(scores.sampleIndices.size());
    analysis.notes.insert(analysis.notes.end(), scores.notes.begin(), scores.notes.end());
    return hessianPerSection(scores, analysis).context("LFH scores");
}

} // namespace

Result<PruningAnalysis> analyzePruning(const graph::Graph& model, const PruningRequest& request,
                                       Progress& progress) {
    if (request.simd < 0) {
        return Error(Errc::InvalidArgument, "--simd must be positive");
    }
    PruningAnalysis analysis;
    SubProgress detectStage(progress, 0.0, 0.02);
    detectStage.report(0.0, "pruning sections");
    QS_ASSIGN_OR_RETURN(analysis.graph, preparePruningGraph(model, &analysis.untiedConstants));
    const graph::Graph& graph = analysis.graph;
    if (analysis.untiedConstants > 0) {
        analysis.notes.push_back(std::to_string(analysis.untiedConstants) +
                                 " constant(s) shared between nodes were given one copy per node, "
                                 "so each can be sliced on its own");
    }
    QS_ASSIGN_OR_RETURN(analysis.detection, detectPruningSections(graph));
    QS_TRY(checkCancelled(progress));
    QS_ASSIGN_OR_RETURN(const quantization::HWConfig hw,
                        quantization::HWConfig::fromArgument(request.hw).context("--hw"));
    analysis.simdByNode = simdSizesByNode(hw, graph, request.simd);
    analysis.simdPadding = request.simdPadding;
    analysis.metric = request.importance;
    describeSections(analysis, request.simd);
    const Clock::time_point start = Clock::now();
    QS_ASSIGN_OR_RETURN(analysis.hessian, lfhHessians(analysis, request, progress));
    const std::vector<std::vector<double>>& hessianScores = analysis.hessian;
    QS_TRY(checkCancelled(progress));
    std::mt19937_64 rng(request.seed);
    for (size_t s = 0; s < analysis.detection.sections.size(); ++s) {
        const PruningSection& section = analysis.detection.sections[s];
        QS_ASSIGN_OR_RETURN(EntryImportance importance,
                            entryImportance(graph, section, request.importance, hessianScores[s],
                                            analysis.simdByNode[section.entry.index()], rng));
        analysis.importance.push_back(std::move(importance));
    }
    analysis.scoringSeconds = secondsSince(start);
    progress.report(1.0, "importance");
    return analysis;
}

Result<std::vector<EntryConstraint>> constraintsFor(const PruningAnalysis& analysis,
                                                    const PruningRequest& request) {
    std::vector<EntryConstraint> constraints(analysis.entryNames.size());
    const auto find = [&](const std::string& name) -> Result<size_t> {
        auto it = std::find(analysis.entryNames.begin(), analysis.entryNames.end(), name);
        if (it == analysis.entryNames.end()) {
            return Error(Errc::Usage, "'" + name + "' is not the entry node of a pruning section");
        }
        return static_cast<size_t>(it - analysis.entryNames.begin());
    };
    for (const std::string& name : request.lock) {
        QS_ASSIGN_OR_RETURN(const size_t s, find(name).context("--lock"));
        constraints[s] = {EntryConstraint::Kind::Lock, analysis.importance[s].channels()};
    }
    for (const auto& [name, kept] : request.keep) {
        QS_ASSIGN_OR_RETURN(const size_t s, find(name).context("--keep"));
        if (kept < 1 || kept > analysis.importance[s].channels()) {
            return Error(Errc::InvalidArgument,
                         "--keep " + name + "=" + std::to_string(kept) + ": the node has " +
                             std::to_string(analysis.importance[s].channels()) + " channels");
        }
        constraints[s] = {EntryConstraint::Kind::Keep, kept};
    }
    return constraints;
}

Result<PruningOutcome> computePruningMasks(const PruningAnalysis& analysis,
                                           const TargetMemory& target,
                                           const std::vector<EntryConstraint>& constraints) {
    const graph::Graph& graph = analysis.graph;
    PruningOutcome outcome;
    MemoryCalculator memory(graph, analysis.detection, analysis.simdByNode, analysis.simdPadding);
    outcome.denseBytes = memory.denseParameters() * kFp32BytesPerParameter;
    outcome.targetBytes = target.bytes(outcome.denseBytes);
    outcome.constraints = constraints;
    const size_t sections = analysis.detection.sections.size();
    std::vector<int64_t> dense(sections);
    for (size_t s = 0; s < sections; ++s) {
        dense[s] = analysis.detection.sections[s].channels;
    }
    const Clock::time_point start = Clock::now();
    QS_ASSIGN_OR_RETURN(const GreedyMasks masks,
                        greedyMasks(memory, analysis.importance, constraints, outcome.targetBytes)
                            .context("--target-memory " + target.describe()));
    outcome.greedySeconds = secondsSince(start);
    outcome.kept = masks.kept;
    outcome.greedySteps = masks.steps;
    outcome.minimumBytes = masks.minimumParameters * kFp32BytesPerParameter;
    outcome.prunedBytes = masks.parameters * kFp32BytesPerParameter;
    // The per-section table counts the members' weights unpadded.
    const MemoryCalculator plain(graph, analysis.detection, analysis.simdByNode, false);
    for (size_t s = 0; s < sections; ++s) {
        const int si = static_cast<int>(s);
        outcome.sectionBytesBefore.push_back(plain.sectionParameters(si, dense) *
                                             kFp32BytesPerParameter);
        outcome.sectionBytesAfter.push_back(plain.sectionParameters(si, masks.kept) *
                                            kFp32BytesPerParameter);
        outcome.info.entries.push_back(analysis.entryNames[s]);
        outcome.info.masks.push_back(channelMask(analysis.importance[s], masks.kept[s]));
        outcome.info.scores.push_back(analysis.importance[s].unrolledScores());
    }
    return outcome;
}

Result<PruningOutcome> computePruning(const PruningAnalysis& analysis, const TargetMemory& target,
                                      const std::vector<EntryConstraint>& constraints) {
    QS_ASSIGN_OR_RETURN(PruningOutcome outcome, computePruningMasks(analysis, target, constraints));
    QS_ASSIGN_OR_RETURN(outcome.pruned,
                        buildPrunedGraph(analysis.graph, analysis.detection, outcome.info.masks));
    outcome.prunedGraphBytes = floatInitializerParameters(outcome.pruned) * kFp32BytesPerParameter;
    return outcome;
}

Result<PruningOutcome> runPruning(const graph::Graph& graph, const PruningRequest& request,
                                  Progress& progress, PruningAnalysis* analysisOut) {
    QS_ASSIGN_OR_RETURN(PruningAnalysis analysis, analyzePruning(graph, request, progress));
    QS_ASSIGN_OR_RETURN(const std::vector<EntryConstraint> constraints,
                        constraintsFor(analysis, request));
    QS_ASSIGN_OR_RETURN(PruningOutcome outcome,
                        computePruning(analysis, request.target, constraints));
    if (analysisOut != nullptr) {
        *analysisOut = std::move(analysis);
    }
    return outcome;
}

Result<void> scorePruning(const graph::Graph& dense, const runtime::DatasetRequest& dataset,
                          PruningOutcome& outcome, Progress& progress) {
    QS_ASSIGN_OR_RETURN(outcome.labelled,
                        runtime::scoreLabelled(dense, outcome.pruned, dataset, progress));
    return success();
}

} // namespace qs::pruning
