// The HAWQ session section.

#include "core/session/hawq_section.h"

#include "core/mixed_precision/hawq_problem.h"
#include "core/report/hessian_report.h"
#include "core/session/sections.h"
#include "core/support/json_reader.h"

#include <algorithm>
#include <limits>
#include <set>

namespace qs::session {

namespace {

std::string presetName(quantization::QuantizationPreset preset) {
    return preset == quantization::QuantizationPreset::Mixed ? "mixed" : "performance";
}

nlohmann::json candidateJson(const mixed_precision::HawqCandidate& candidate) {
    return {{"weight_bits", candidate.weightBits},
            {"activation_bits", candidate.activationBits},
            {"ratio", candidate.ratio},
            {"metric", candidate.metric}};
}

/// Bit widths a saved field may hold (the quantizer configs' range).
constexpr int kMinBits = 2;
constexpr int kMaxBits = 16;

/// A list of bit widths, each in the quantizers' range (or 0 where `unassigned` allows it: an
/// activation no adjacency group sets).
Result<std::vector<int>> bitList(const nlohmann::json& object, const std::string& path,
                                 std::string_view key, bool unassigned = false) {
    QS_ASSIGN_OR_RETURN(std::vector<int> bits, strict::field<std::vector<int>>(object, path, key));
    for (size_t i = 0; i < bits.size(); ++i) {
        if ((bits[i] < kMinBits || bits[i] > kMaxBits) && !(unassigned && bits[i] == 0)) {
            return strict::fieldError(strict::element(strict::member(path, key), i),
                                      std::to_string(bits[i]) + " is no bit width (" +
                                          std::to_string(kMinBits) + ".." +
                                          std::to_string(kMaxBits) + ")");
        }
    }
    return bits;
}

Result<mixed_precision::HawqCandidate> candidateFrom(const nlohmann::json& json,
                                                     const std::string& path) {
    QS_TRY(strict::onlyKeys(json, path, {"weight_bits", "activation_bits", "ratio", "metric"}));
    mixed_precision::HawqCandidate candidate;
    QS_ASSIGN_OR_RETURN(candidate.weightBits, bitList(json, path, "weight_bits"));
    QS_ASSIGN_OR_RETURN(candidate.activationBits, bitList(json, path, "activation_bits", true));
    QS_ASSIGN_OR_RETURN(candidate.ratio, strict::field<double>(json, path, "ratio"));
    QS_ASSIGN_OR_RETURN(candidate.metric, strict::field<double>(json, path, "metric"));
    return candidate;
}

Error mismatch(const std::string& what) {
    return Error(Errc::InvalidArgument,
                 "hawq section does not match the model's quantizers: " + what);
}

} // namespace

bool HawqSummary::operator==(const HawqSummary& other) const {
    const auto tracesJson = [](const std::optional<hessian::HessianScores>& traces) {
        return traces ? report::toJson(*traces) : nlohmann::json();
    };
    return target == other.target && mode == other.mode && search == other.search &&
           bits == other.bits && samples == other.samples && iterations == other.iterations &&
           ratio == other.ratio && metric == other.metric &&
           mergedQuantizers == other.mergedQuantizers && requantizers == other.requantizers &&
           layers == other.layers && modelHash == other.modelHash && settings == other.settings &&
           tracesJson(traces) == tracesJson(other.traces) && candidates == other.candidates &&
           traceOrder == other.traceOrder && pareto == other.pareto && chosen == other.chosen &&
           selected == other.selected && notes == other.notes &&
           dataset.has_value() == other.dataset.has_value() &&
           (!dataset || datasetRequestToJson(*dataset) == datasetRequestToJson(*other.dataset));
}

HawqSummary summarize(const mixed_precision::HawqOutcome& outcome,
                      const mixed_precision::HawqRequest& request, std::string modelHash,
                      std::optional<size_t> selected) {
    const mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    HawqSummary summary;
    summary.selected = selected.value_or(outcome.chosen);
    const mixed_precision::HawqCandidate& shown = analysis.candidates[summary.selected];
    summary.target = outcome.target;
    summary.mode = std::string(mixed_precision::assignmentModeName(analysis.problem.mode));
    summary.search = std::string(mixed_precision::searchName(analysis.search));
    summary.bits = request.bits;
    summary.samples = request.samples;
    summary.iterations = request.iterations;
    summary.ratio = shown.ratio;
    summary.metric = shown.metric;
    summary.mergedQuantizers = outcome.mergedQuantizers;
    summary.requantizers = outcome.requantizers;
    for (size_t l = 0; l < analysis.problem.layers.size(); ++l) {
        const mixed_precision::WeightLayer& layer = analysis.problem.layers[l];
        summary.layers.push_back({.node = layer.node,
                                  .avgTrace = analysis.avgTraces[l],
                                  .weightBits = shown.weightBits[l],
                                  .weightQp = layer.weightQp,
                                  .macs = layer.macs,
                                  .perturbation = analysis.perturbations[l]});
    }
    summary.modelHash = std::move(modelHash);
    summary.settings = outcome.state.settings;
    summary.traces = analysis.traceScores;
    summary.candidates = analysis.candidates;
    summary.traceOrder = analysis.traceOrder;
    summary.pareto = analysis.pareto;
    summary.chosen = outcome.chosen;
    summary.notes = analysis.problem.notes;
    if (!request.dataset.empty()) { // traces read from a file have no dataset
        summary.dataset = request.dataset;
    }
    return summary;
}

nlohmann::json toJson(const HawqSummary& summary) {
    nlohmann::json layers = nlohmann::json::array();
    for (const HawqSummary::Layer& layer : summary.layers) {
        nlohmann::json perturbation = nlohmann::json::object();
        for (const auto& [bits, value] : layer.perturbation) {
            perturbation[std::to_string(bits)] = value;
        }
        layers.push_back({{"node", layer.node},
                          {"avg_trace", layer.avgTrace},
                          {"weight_bits", layer.weightBits},
                          {"weight_qp", layer.weightQp},
                          {"macs", layer.macs},
                          {"perturbation", std::move(perturbation)}});
    }
    nlohmann::json json = {{"compression_ratio_target", summary.target},
                           {"mode", summary.mode},
                           {"search", summary.search},
                           {"bits", summary.bits},
                           {"samples", summary.samples},
                           {"iterations", summary.iterations},
                           {"ratio", summary.ratio},
                           {"metric", summary.metric},
                           {"merged_quantizers", summary.mergedQuantizers},
                           {"requantizers", summary.requantizers},
                           {"layers", std::move(layers)}};
    if (!summary.restorable()) {
        return json;
    }
    nlohmann::json candidates = nlohmann::json::array();
    for (const mixed_precision::HawqCandidate& candidate : summary.candidates) {
        candidates.push_back(candidateJson(candidate));
    }
    json["model_hash"] = summary.modelHash;
    json["settings"] = {{"hw_config", summary.settings.hw},
                        {"preset", presetName(summary.settings.preset)},
                        {"rule", quantization::ruleArgument(summary.settings.rule)}};
    json["traces"] = report::toJson(*summary.traces);
    json["candidates"] = std::move(candidates);
    json["trace_order"] = summary.traceOrder;
    json["pareto"] = summary.pareto;
    json["chosen"] = summary.chosen;
    json["selected"] = summary.selected;
    json["notes"] = summary.notes;
    if (summary.dataset) {
        json["dataset_request"] = datasetRequestToJson(*summary.dataset);
    }
    return json;
}

namespace {

/// One saved layer (weight_qp, macs and perturbation only in sections with the analysis).
Result<HawqSummary::Layer> layerFrom(const nlohmann::json& layer, const std::string& path) {
    QS_TRY(strict::onlyKeys(
        layer, path, {"node", "avg_trace", "weight_bits", "weight_qp", "macs", "perturbation"}));
    HawqSummary::Layer read;
    QS_ASSIGN_OR_RETURN(read.node, strict::field<std::string>(layer, path, "node"));
    QS_ASSIGN_OR_RETURN(read.avgTrace, strict::field<double>(layer, path, "avg_trace"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* bits, strict::require(layer, path, "weight_bits"));
    QS_ASSIGN_OR_RETURN(
        read.weightBits,
        strict::smallInteger(*bits, strict::member(path, "weight_bits"), kMinBits, kMaxBits));
    if (layer.contains("weight_qp")) {
        QS_ASSIGN_OR_RETURN(read.weightQp, strict::field<int>(layer, path, "weight_qp"));
    }
    if (layer.contains("macs")) {
        QS_ASSIGN_OR_RETURN(read.macs, strict::field<int64_t>(layer, path, "macs"));
    }
    const auto perturbation = layer.find("perturbation");
    if (perturbation == layer.end()) {
        return read;
    }
    const std::string perturbationPath = strict::member(path, "perturbation");
    QS_TRY(strict::expectObject(*perturbation, perturbationPath));
    for (const auto& [key, value] : perturbation->items()) {
        QS_ASSIGN_OR_RETURN(const int width, strict::idKey(key, perturbationPath));
        if (width < kMinBits || width > kMaxBits) {
            return strict::fieldError(strict::member(perturbationPath, key),
                                      "'" + key + "' is no bit width");
        }
        QS_ASSIGN_OR_RETURN(read.perturbation[width],
                            strict::as<double>(value, strict::member(perturbationPath, key)));
    }
    return read;
}

Result<quantization::QuantizationSettings> settingsFrom(const nlohmann::json& json,
                                                        const std::string& path) {
    QS_TRY(strict::onlyKeys(json, path, {"hw_config", "preset", "rule"}));
    quantization::QuantizationSettings settings;
    QS_ASSIGN_OR_RETURN(settings.hw, strict::field<std::string>(json, path, "hw_config"));
    QS_ASSIGN_OR_RETURN(const std::string preset, strict::field<std::string>(json, path, "preset"));
    if (preset == "performance") {
        settings.preset = quantization::QuantizationPreset::Performance;
    } else if (preset == "mixed") {
        settings.preset = quantization::QuantizationPreset::Mixed;
    } else {
        return strict::fieldError(strict::member(path, "preset"),
                                  "unknown preset '" + preset + "' (performance, mixed)");
    }
    QS_ASSIGN_OR_RETURN(const std::string rule, strict::field<std::string>(json, path, "rule"));
    const std::optional<quantization::QuantizerPropagationRule> parsed =
        quantization::ruleFromArgument(rule);
    if (!parsed) {
        return strict::fieldError(strict::member(path, "rule"),
                                  "unknown propagation rule '" + rule + "'");
    }
    settings.rule = *parsed;
    return settings;
}

/// The saved candidates; each has one weight bit width per saved layer.
Result<void> readCandidates(const nlohmann::json& json, const std::string& path,
                            HawqSummary& summary) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json* candidates,
                        strict::require(json, path, "candidates"));
    const std::string candidatesPath = strict::member(path, "candidates");
    QS_TRY(strict::expectArray(*candidates, candidatesPath));
    for (size_t c = 0; c < candidates->size(); ++c) {
        const std::string candidatePath = strict::element(candidatesPath, c);
        QS_ASSIGN_OR_RETURN(mixed_precision::HawqCandidate candidate,
                            candidateFrom((*candidates)[c], candidatePath));
        if (candidate.weightBits.size() != summary.layers.size()) {
            return strict::fieldError(strict::member(candidatePath, "weight_bits"),
                                      std::to_string(candidate.weightBits.size()) +
                                          " weight bits for " +
                                          std::to_string(summary.layers.size()) + " layers");
        }
        summary.candidates.push_back(std::move(candidate));
    }
    if (summary.candidates.empty()) {
        return strict::fieldError(candidatesPath, "no candidate");
    }
    return success();
}

/// A candidate index (`count` candidates).
Result<size_t> candidateIndex(const nlohmann::json& value, const std::string& path, size_t count) {
    QS_ASSIGN_OR_RETURN(const int64_t i,
                        strict::integer(value, path, 0, static_cast<int64_t>(count) - 1));
    return static_cast<size_t>(i);
}

Result<std::vector<size_t>> candidateIndices(const nlohmann::json& json, const std::string& path,
                                             std::string_view key, size_t count) {
    QS_ASSIGN_OR_RETURN(const nlohmann::json* list, strict::require(json, path, key));
    const std::string listPath = strict::member(path, key);
    QS_TRY(strict::expectArray(*list, listPath));
    std::vector<size_t> out;
    for (size_t i = 0; i < list->size(); ++i) {
        QS_ASSIGN_OR_RETURN(const size_t c,
                            candidateIndex((*list)[i], strict::element(listPath, i), count));
        out.push_back(c);
    }
    return out;
}

/// The analysis fields of a restorable section (present when "candidates" is).
Result<void> readAnalysis(const nlohmann::json& json, const std::string& path,
                          HawqSummary& summary) {
    QS_ASSIGN_OR_RETURN(summary.modelHash, strict::field<std::string>(json, path, "model_hash"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* settings, strict::require(json, path, "settings"));
    QS_ASSIGN_OR_RETURN(summary.settings,
                        settingsFrom(*settings, strict::member(path, "settings")));
    QS_TRY(readCandidates(json, path, summary));
    const size_t count = summary.candidates.size();
    QS_ASSIGN_OR_RETURN(summary.traceOrder, candidateIndices(json, path, "trace_order", count));
    QS_ASSIGN_OR_RETURN(summary.pareto, candidateIndices(json, path, "pareto", count));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* chosen, strict::require(json, path, "chosen"));
    QS_ASSIGN_OR_RETURN(summary.chosen,
                        candidateIndex(*chosen, strict::member(path, "chosen"), count));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* selected, strict::require(json, path, "selected"));
    QS_ASSIGN_OR_RETURN(summary.selected,
                        candidateIndex(*selected, strict::member(path, "selected"), count));
    QS_ASSIGN_OR_RETURN(summary.notes,
                        strict::field<std::vector<std::string>>(json, path, "notes"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* traces, strict::require(json, path, "traces"));
    QS_ASSIGN_OR_RETURN(
        hessian::HessianScores scores,
        report::hessianScoresFromJson(*traces).context(strict::member(path, "traces")));
    summary.traces = std::move(scores);
    return success();
}

/// What was asked: target, mode, search, bits, samples, iterations.
Result<void> readRequestFields(const nlohmann::json& json, const std::string& path,
                               HawqSummary& summary) {
    QS_ASSIGN_OR_RETURN(summary.target,
                        strict::field<double>(json, path, "compression_ratio_target"));
    QS_ASSIGN_OR_RETURN(summary.mode, strict::field<std::string>(json, path, "mode"));
    QS_TRY(
        mixed_precision::parseAssignmentMode(summary.mode).context(strict::member(path, "mode")));
    QS_ASSIGN_OR_RETURN(summary.search, strict::field<std::string>(json, path, "search"));
    QS_TRY(mixed_precision::parseSearch(summary.search).context(strict::member(path, "search")));
    QS_ASSIGN_OR_RETURN(summary.bits, bitList(json, path, "bits"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* samples, strict::require(json, path, "samples"));
    QS_ASSIGN_OR_RETURN(summary.samples, strict::integer(*samples, strict::member(path, "samples"),
                                                         1, std::numeric_limits<int64_t>::max()));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* iterations,
                        strict::require(json, path, "iterations"));
    QS_ASSIGN_OR_RETURN(summary.iterations,
                        strict::smallInteger(*iterations, strict::member(path, "iterations"), 1,
                                             std::numeric_limits<int>::max()));
    return success();
}

/// What came out: the chosen point's ratio and metric, the counts, the layers.
Result<void> readOutcomeFields(const nlohmann::json& json, const std::string& path,
                               HawqSummary& summary) {
    QS_ASSIGN_OR_RETURN(summary.ratio, strict::field<double>(json, path, "ratio"));
    QS_ASSIGN_OR_RETURN(summary.metric, strict::field<double>(json, path, "metric"));
    QS_ASSIGN_OR_RETURN(summary.mergedQuantizers,
                        strict::field<int>(json, path, "merged_quantizers"));
    QS_ASSIGN_OR_RETURN(summary.requantizers, strict::field<int>(json, path, "requantizers"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* layers, strict::require(json, path, "layers"));
    const std::string layersPath = strict::member(path, "layers");
    QS_TRY(strict::expectArray(*layers, layersPath));
    for (size_t l = 0; l < layers->size(); ++l) {
        QS_ASSIGN_OR_RETURN(HawqSummary::Layer layer,
                            layerFrom((*layers)[l], strict::element(layersPath, l)));
        summary.layers.push_back(std::move(layer));
    }
    return success();
}

} // namespace

Result<HawqSummary> hawqSummaryFromJson(const nlohmann::json& json) {
    const std::string path = strict::member("sections", kHawqSection);
    QS_TRY(strict::expectObject(json, path));
    QS_TRY(strict::onlyKeys(json, path,
                            {"compression_ratio_target",
                             "mode",
                             "search",
                             "bits",
                             "samples",
                             "iterations",
                             "ratio",
                             "metric",
                             "merged_quantizers",
                             "requantizers",
                             "layers",
                             "model_hash",
                             "settings",
                             "traces",
                             "candidates",
                             "trace_order",
                             "pareto",
                             "chosen",
                             "selected",
                             "notes",
                             "dataset_request"}));
    HawqSummary summary;
    QS_TRY(readRequestFields(json, path, summary));
    QS_TRY(readOutcomeFields(json, path, summary));
    if (json.contains("candidates")) {
        QS_TRY(readAnalysis(json, path, summary));
    }
    if (const auto dataset = json.find("dataset_request"); dataset != json.end()) {
        QS_ASSIGN_OR_RETURN(
            summary.dataset,
            datasetRequestFromJson(*dataset, strict::member(path, "dataset_request")));
    }
    return summary;
}

Result<std::optional<HawqSummary>> hawqSummary(const SessionFile& session) {
    const nlohmann::json* section = findSection(session, kHawqSection);
    if (section == nullptr) {
        return std::optional<HawqSummary>();
    }
    QS_ASSIGN_OR_RETURN(HawqSummary summary, hawqSummaryFromJson(*section));
    return std::optional<HawqSummary>(std::move(summary));
}

mixed_precision::HawqRequest requestOf(const HawqSummary& summary) {
    mixed_precision::HawqRequest request;
    request.settings = summary.settings;
    request.compressionRatio = summary.target;
    request.bits = summary.bits;
    request.mode = *mixed_precision::parseAssignmentMode(summary.mode);
    request.search = *mixed_precision::parseSearch(summary.search);
    request.samples = summary.samples;
    request.iterations = summary.iterations;
    if (summary.dataset) {
        request.dataset = *summary.dataset;
    }
    return request;
}

Result<mixed_precision::HawqOutcome> restoreHawqOutcome(const graph::Graph& model,
                                                        const HawqSummary& summary) {
    if (!summary.restorable()) {
        return Error(Errc::InvalidArgument,
                     "the hawq section is a summary only (no candidates): re-run HAWQ");
    }
    const mixed_precision::HawqRequest request = requestOf(summary);
    mixed_precision::HawqOutcome outcome;
    outcome.target = summary.target;
    QS_ASSIGN_OR_RETURN(outcome.state, quantization::computeQuantization(model, summary.settings));
    // The layers HAWQ kept out of the search (no trace) are the weight quantizers not saved.
    std::set<int> saved;
    for (const HawqSummary::Layer& layer : summary.layers) {
        saved.insert(layer.weightQp);
    }
    std::set<int> fixed;
    for (const auto& [id, point] : outcome.state.proposal.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight && !saved.contains(id)) {
            fixed.insert(id);
        }
    }
    mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    QS_ASSIGN_OR_RETURN(
        analysis.problem,
        mixed_precision::buildHawqProblem(model, outcome.state, request.bits, request.mode, fixed));
    if (analysis.problem.layers.size() != summary.layers.size()) {
        return mismatch(std::to_string(summary.layers.size()) + " layers saved, " +
                        std::to_string(analysis.problem.layers.size()) + " now");
    }
    for (size_t l = 0; l < summary.layers.size(); ++l) {
        mixed_precision::WeightLayer& layer = analysis.problem.layers[l];
        const HawqSummary::Layer& savedLayer = summary.layers[l];
        if (layer.weightQp != savedLayer.weightQp || layer.node != savedLayer.node) {
            return mismatch("layer " + std::to_string(l) + " was #" +
                            std::to_string(savedLayer.weightQp) + " '" + savedLayer.node +
                            "', is #" + std::to_string(layer.weightQp) + " '" + layer.node + "'");
        }
        for (const int bits : layer.bitsAllowed) {
            if (!savedLayer.perturbation.contains(bits)) {
                return mismatch("layer '" + layer.node + "' has no saved perturbation for " +
                                std::to_string(bits) + " bits");
            }
        }
        layer.macs = savedLayer.macs; // possibly measured on a sample: not recomputed
        analysis.perturbations.push_back(savedLayer.perturbation);
    }
    analysis.problem.notes = summary.notes;
    analysis.traceScores = *summary.traces;
    QS_ASSIGN_OR_RETURN(analysis.avgTraces,
                        mixed_precision::averageTraces(analysis.problem, analysis.traceScores));
    analysis.search = request.search;
    analysis.candidates = summary.candidates;
    analysis.traceOrder = summary.traceOrder;
    analysis.pareto = summary.pareto;
    for (const mixed_precision::HawqCandidate& candidate : analysis.candidates) {
        if (candidate.activationBits.size() != analysis.problem.activations.size()) {
            return mismatch("a candidate has " + std::to_string(candidate.activationBits.size()) +
                            " activation bits for " +
                            std::to_string(analysis.problem.activations.size()) +
                            " activation quantizers");
        }
    }
    outcome.chosen = summary.chosen;
    QS_TRY(mixed_precision::applyHawqCandidate(outcome.state, analysis.problem,
                                               analysis.candidates[outcome.chosen]));
    outcome.mergedQuantizers = mixed_precision::mergedQuantizerCount(outcome.state.setup);
    outcome.requantizers = mixed_precision::requantizerCount(outcome.state.setup);
    return outcome;
}

} // namespace qs::session
