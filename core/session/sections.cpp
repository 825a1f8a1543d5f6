#include "core/session/sections.h"

#include <exception>

namespace qs::session {

const nlohmann::json* findSection(const SessionFile& session, std::string_view key) {
    const auto it = session.sections.find(key);
    return it == session.sections.end() ? nullptr : &it->second;
}

void setSection(SessionFile& session, std::string_view key, nlohmann::json section) {
    session.sections.insert_or_assign(std::string(key), std::move(section));
}

CalibrationSummary summarize(const quantization::CalibrationOutcome& outcome) {
    CalibrationSummary summary;
    summary.dataset = outcome.dataset;
    summary.samples = outcome.samples;
    summary.batchSize = outcome.batchSize;
    summary.rangeEstimator = std::string(quantization::rangeEstimatorName(outcome.estimator));
    summary.seconds = outcome.calibrationSeconds;
    for (const quantization::OutputMetrics& m : outcome.simulation.outputs) {
        summary.outputs.push_back({m.name, m.meanCosine, m.maxAbsError, m.top1Agreement});
    }
    return summary;
}

nlohmann::json toJson(const CalibrationSummary& summary) {
    nlohmann::json outputs = nlohmann::json::array();
    for (const CalibrationSummary::Output& o : summary.outputs) {
        outputs.push_back({{"name", o.name},
                           {"cosine_similarity", o.cosine},
                           {"max_abs_error", o.maxAbsError},
                           {"top1_agreement", o.top1Agreement ? nlohmann::json(*o.top1Agreement)
                                                              : nlohmann::json()}});
    }
    return {{"dataset", summary.dataset},      {"samples", summary.samples},
            {"batch_size", summary.batchSize}, {"range_estimator", summary.rangeEstimator},
            {"seconds", summary.seconds},      {"outputs", std::move(outputs)}};
}

Result<CalibrationSummary> calibrationSummaryFromJson(const nlohmann::json& json) {
    try {
        CalibrationSummary summary;
        summary.dataset = json.at("dataset").get<std::string>();
        summary.samples = json.at("samples").get<int64_t>();
        summary.batchSize = json.at("batch_size").get<int64_t>();
        summary.rangeEstimator = json.at("range_estimator").get<std::string>();
        summary.seconds = json.at("seconds").get<double>();
        for (const nlohmann::json& o : json.at("outputs")) {
            const nlohmann::json& top1 = o.at("top1_agreement");
            summary.outputs.push_back(
                {o.at("name").get<std::string>(), o.at("cosine_similarity").get<double>(),
                 o.at("max_abs_error").get<double>(),
                 top1.is_null() ? std::nullopt : std::optional<double>(top1.get<double>())});
        }
        return summary;
    } catch (const std::exception& e) {
        return Error(Errc::InvalidArgument,
                     std::string("malformed calibration section: ") + e.what());
    }
}

Result<std::optional<CalibrationSummary>> calibrationSummary(const SessionFile& session) {
    const nlohmann::json* section = findSection(session, kCalibrationSection);
    if (section == nullptr) {
        return std::optional<CalibrationSummary>();
    }
    QS_ASSIGN_OR_RETURN(CalibrationSummary summary, calibrationSummaryFromJson(*section));
    return std::optional<CalibrationSummary>(std::move(summary));
}

void setCompressionPlan(SessionFile& session, const compression::CompressionPlan& plan) {
    setSection(session, kCompressionSection, compression::planToJson(plan));
}

} // namespace qs::session
