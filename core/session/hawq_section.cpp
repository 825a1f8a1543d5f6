// The HAWQ session section.

#include "core/session/hawq_section.h"

#include "core/session/sections.h"

namespace qs::session {

HawqSummary summarize(const mixed_precision::HawqOutcome& outcome,
                      const mixed_precision::HawqRequest& request) {
    const mixed_precision::HawqAnalysis& analysis = outcome.analysis;
    const mixed_precision::HawqCandidate& chosen = analysis.candidates[outcome.chosen];
    HawqSummary summary;
    summary.target = outcome.target;
    summary.mode = std::string(mixed_precision::assignmentModeName(analysis.problem.mode));
    summary.search = std::string(mixed_precision::searchName(analysis.search));
    summary.bits = request.bits;
    summary.samples = request.samples;
    summary.iterations = request.iterations;
    summary.ratio = chosen.ratio;
    summary.metric = chosen.metric;
    summary.mergedQuantizers = outcome.mergedQuantizers;
    summary.requantizers = outcome.requantizers;
    for (size_t l = 0; l < analysis.problem.layers.size(); ++l) {
        summary.layers.push_back({.node = analysis.problem.layers[l].node,
                                  .avgTrace = analysis.avgTraces[l],
                                  .weightBits = chosen.weightBits[l]});
    }
    return summary;
}

nlohmann::json toJson(const HawqSummary& summary) {
    nlohmann::json layers = nlohmann::json::array();
    for (const HawqSummary::Layer& layer : summary.layers) {
        layers.push_back({{"node", layer.node},
                          {"avg_trace", layer.avgTrace},
                          {"weight_bits", layer.weightBits}});
    }
    return {{"compression_ratio_target", summary.target},
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
}

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
            summary.layers.push_back({.node = layer.at("node").get<std::string>(),
                                      .avgTrace = layer.at("avg_trace").get<double>(),
                                      .weightBits = layer.at("weight_bits").get<int>()});
        }
    } catch (const std::exception& e) {
        return Error(Errc::InvalidArgument,
                     "hawq section: bad '" + (field ? *field : std::string()) + "': " + e.what());
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

} // namespace qs::session
