// The HAWQ session section.

#include "core/session/hawq_section.h"

#include "core/mixed_precision/hawq_problem.h"
#include "core/report/hessian_report.h"
#include "core/session/sections.h"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace qs::session {

namespace {

std::string presetName(quantization::QuantizationPreset preset) {
    return preset == quantization::QuantizationPreset::Mixed ? "mixed" : "performance";
}

/// A malformed field, named by the reader.
struct BadHawqField : std::runtime_error {
    using std::runtime_error::runtime_error;
};

quantization::QuantizationPreset presetFrom(const std::string& text) {
    if (text == "performance") {
        return quantization::QuantizationPreset::Performance;
    }
    if (text == "mixed") {
        return quantization::QuantizationPreset::Mixed;
    }
    throw BadHawqField("unknown preset '" + text + "' (performance, mixed)");
}

nlohmann::json candidateJson(const mixed_precision::HawqCandidate& candidate) {
    return {{"weight_bits", candidate.weightBits},
            {"activation_bits", candidate.activationBits},
            {"ratio", candidate.ratio},
            {"metric", candidate.metric}};
}

mixed_precision::HawqCandidate candidateFrom(const nlohmann::json& json) {
    mixed_precision::HawqCandidate candidate;
    candidate.weightBits = json.at("weight_bits").get<std::vector<int>>();
    candidate.activationBits = json.at("activation_bits").get<std::vector<int>>();
    candidate.ratio = json.at("ratio").get<double>();
    candidate.metric = json.at("metric").get<double>();
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
           selected == other.selected && notes == other.notes;
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
    return json;
}

namespace {

/// One saved layer (weight_qp, macs and perturbation only in sections with the analysis).
HawqSummary::Layer layerFrom(const nlohmann::json& layer) {
    HawqSummary::Layer read{.node = layer.at("node").get<std::string>(),
                            .avgTrace = layer.at("avg_trace").get<double>(),
                            .weightBits = layer.at("weight_bits").get<int>()};
    read.weightQp = layer.value("weight_qp", -1);
    read.macs = layer.value("macs", int64_t{0});
    if (!layer.contains("perturbation")) {
        return read;
    }
    for (const auto& [bits, value] : layer.at("perturbation").items()) {
        size_t used = 0;
        const int width = std::stoi(bits, &used);
        if (used != bits.size()) {
            throw BadHawqField("perturbation key '" + bits + "' is not a bit width");
        }
        read.perturbation[width] = value.get<double>();
    }
    return read;
}

/// The analysis fields of a restorable section (present when "candidates" is).
Result<void> readAnalysis(const nlohmann::json& json, HawqSummary& summary) {
    std::string field;
    try {
        for (const char* name : {"model_hash", "settings", "traces", "candidates", "trace_order",
                                 "pareto", "chosen", "selected", "notes"}) {
            if (!json.contains(name)) {
                return Error(Errc::InvalidArgument, "hawq section: no '" + std::string(name) + "'");
            }
        }
        field = "model_hash";
        summary.modelHash = json.at(field).get<std::string>();
        field = "settings";
        const nlohmann::json& settings = json.at(field);
        summary.settings.hw = settings.at("hw_config").get<std::string>();
        summary.settings.preset = presetFrom(settings.at("preset").get<std::string>());
        const std::string rule = settings.at("rule").get<std::string>();
        const std::optional<quantization::QuantizerPropagationRule> parsed =
            quantization::ruleFromArgument(rule);
        if (!parsed) {
            throw BadHawqField("unknown propagation rule '" + rule + "'");
        }
        summary.settings.rule = *parsed;
        field = "candidates";
        for (const nlohmann::json& candidate : json.at(field)) {
            summary.candidates.push_back(candidateFrom(candidate));
        }
        field = "trace_order";
        summary.traceOrder = json.at(field).get<std::vector<size_t>>();
        field = "pareto";
        summary.pareto = json.at(field).get<std::vector<size_t>>();
        field = "chosen";
        summary.chosen = json.at(field).get<size_t>();
        field = "selected";
        summary.selected = json.at(field).get<size_t>();
        field = "notes";
        summary.notes = json.at(field).get<std::vector<std::string>>();
    } catch (const std::exception& e) {
        return Error(Errc::InvalidArgument, "hawq section: bad '" + field + "': " + e.what());
    }
    QS_ASSIGN_OR_RETURN(
        hessian::HessianScores traces,
        report::hessianScoresFromJson(json.at("traces")).context("hawq section: 'traces'"));
    summary.traces = std::move(traces);
    const size_t count = summary.candidates.size();
    const auto inRange = [count](const std::vector<size_t>& indices) {
        return std::all_of(indices.begin(), indices.end(), [count](size_t i) { return i < count; });
    };
    if (count == 0 || summary.chosen >= count || summary.selected >= count ||
        !inRange(summary.traceOrder) || !inRange(summary.pareto)) {
        return Error(Errc::InvalidArgument, "hawq section: a candidate index is out of range (" +
                                                std::to_string(count) + " candidates)");
    }
    for (size_t c = 0; c < count; ++c) {
        if (summary.candidates[c].weightBits.size() != summary.layers.size()) {
            return Error(Errc::InvalidArgument,
                         "hawq section: candidate " + std::to_string(c) + " has " +
                             std::to_string(summary.candidates[c].weightBits.size()) +
                             " weight bits for " + std::to_string(summary.layers.size()) +
                             " layers");
        }
    }
    return success();
}

} // namespace

Result<HawqSummary> hawqSummaryFromJson(const nlohmann::json& json) {
    const std::string* field = nullptr;
    HawqSummary summary;
    try {
        static const std::string kNames[] = {"compression_ratio_target",
                                             "mode",
                                             "search",
                                             "bits",
                                             "samples",
                                             "iterations",
                                             "ratio",
                                             "metric",
                                             "merged_quantizers",
                                             "requantizers",
                                             "layers"};
        for (const std::string& name : kNames) {
            field = &name;
            if (!json.contains(name)) {
                return Error(Errc::InvalidArgument, "hawq section: no '" + name + "'");
            }
        }
        field = &kNames[0];
        summary.target = json.at(*field).get<double>();
        field = &kNames[1];
        summary.mode = json.at(*field).get<std::string>();
        QS_TRY(mixed_precision::parseAssignmentMode(summary.mode).context("hawq section: mode"));
        field = &kNames[2];
        summary.search = json.at(*field).get<std::string>();
        QS_TRY(mixed_precision::parseSearch(summary.search).context("hawq section: search"));
        field = &kNames[3];
        summary.bits = json.at(*field).get<std::vector<int>>();
        field = &kNames[4];
        summary.samples = json.at(*field).get<int64_t>();
        field = &kNames[5];
        summary.iterations = json.at(*field).get<int>();
        field = &kNames[6];
        summary.ratio = json.at(*field).get<double>();
        field = &kNames[7];
        summary.metric = json.at(*field).get<double>();
        field = &kNames[8];
        summary.mergedQuantizers = json.at(*field).get<int>();
        field = &kNames[9];
        summary.requantizers = json.at(*field).get<int>();
        field = &kNames[10];
        for (const nlohmann::json& layer : json.at(*field)) {
            summary.layers.push_back(layerFrom(layer));
        }
    } catch (const std::exception& e) {
        return Error(Errc::InvalidArgument,
                     "hawq section: bad '" + (field ? *field : std::string()) + "': " + e.what());
    }
    if (json.contains("candidates")) {
        QS_TRY(readAnalysis(json, summary));
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
