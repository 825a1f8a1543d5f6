#include "core/session/sections.h"

#include "core/support/json_reader.h"

#include <limits>

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

namespace {
/// One entry of the calibration section's "outputs".
Result<CalibrationSummary::Output> outputFromJson(const nlohmann::json& o, const std::string& at) {
    QS_TRY(
        strict::onlyKeys(o, at, {"name", "cosine_similarity", "max_abs_error", "top1_agreement"}));
    CalibrationSummary::Output out;
    QS_ASSIGN_OR_RETURN(const nlohmann::json* name, strict::require(o, at, "name"));
    QS_ASSIGN_OR_RETURN(out.name, strict::string(*name, strict::member(at, "name")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* cosine, strict::require(o, at, "cosine_similarity"));
    QS_ASSIGN_OR_RETURN(out.cosine,
                        strict::number(*cosine, strict::member(at, "cosine_similarity")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* error, strict::require(o, at, "max_abs_error"));
    QS_ASSIGN_OR_RETURN(out.maxAbsError,
                        strict::number(*error, strict::member(at, "max_abs_error")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* top1, strict::require(o, at, "top1_agreement"));
    if (!top1->is_null()) {
        QS_ASSIGN_OR_RETURN(out.top1Agreement,
                            strict::number(*top1, strict::member(at, "top1_agreement")));
    }
    return out;
}
} // namespace

Result<CalibrationSummary> calibrationSummaryFromJson(const nlohmann::json& json) {
    const std::string path = strict::member("sections", kCalibrationSection);
    QS_TRY(strict::onlyKeys(
        json, path, {"dataset", "samples", "batch_size", "range_estimator", "seconds", "outputs"}));
    const auto field = [&](std::string_view key) -> Result<const nlohmann::json*> {
        return strict::require(json, path, key);
    };
    constexpr int64_t kMaxCount = std::numeric_limits<int64_t>::max();
    CalibrationSummary summary;
    QS_ASSIGN_OR_RETURN(const nlohmann::json* dataset, field("dataset"));
    QS_ASSIGN_OR_RETURN(summary.dataset, strict::string(*dataset, strict::member(path, "dataset")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* samples, field("samples"));
    QS_ASSIGN_OR_RETURN(summary.samples,
                        strict::integer(*samples, strict::member(path, "samples"), 0, kMaxCount));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* batch, field("batch_size"));
    QS_ASSIGN_OR_RETURN(summary.batchSize,
                        strict::integer(*batch, strict::member(path, "batch_size"), 0, kMaxCount));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* estimator, field("range_estimator"));
    QS_ASSIGN_OR_RETURN(summary.rangeEstimator,
                        strict::string(*estimator, strict::member(path, "range_estimator")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* seconds, field("seconds"));
    QS_ASSIGN_OR_RETURN(summary.seconds, strict::number(*seconds, strict::member(path, "seconds")));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* outputs, field("outputs"));
    const std::string outputsPath = strict::member(path, "outputs");
    QS_TRY(strict::expectArray(*outputs, outputsPath));
    for (size_t i = 0; i < outputs->size(); ++i) {
        QS_ASSIGN_OR_RETURN(CalibrationSummary::Output out,
                            outputFromJson((*outputs)[i], strict::element(outputsPath, i)));
        summary.outputs.push_back(std::move(out));
    }
    return summary;
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

nlohmann::json datasetRequestToJson(const runtime::DatasetRequest& dataset) {
    const bool limited = dataset.maxSamples != std::numeric_limits<int64_t>::max();
    return {{"npy", dataset.npyFiles},
            {"images", dataset.imagesDir},
            {"classes", dataset.classesDir},
            {"random", dataset.randomSamples},
            {"seed", dataset.seed},
            {"max_samples", limited ? nlohmann::json(dataset.maxSamples) : nlohmann::json()},
            {"labels", dataset.labelsNpy},
            {"input_shapes", dataset.inputShapes}};
}

Result<runtime::DatasetRequest> datasetRequestFromJson(const nlohmann::json& json,
                                                       const std::string& path) {
    QS_TRY(strict::onlyKeys(
        json, path,
        {"npy", "images", "classes", "random", "seed", "max_samples", "labels", "input_shapes"}));
    runtime::DatasetRequest dataset;
    QS_ASSIGN_OR_RETURN(dataset.npyFiles,
                        strict::field<std::vector<std::string>>(json, path, "npy"));
    QS_ASSIGN_OR_RETURN(dataset.imagesDir, strict::field<std::string>(json, path, "images"));
    QS_ASSIGN_OR_RETURN(dataset.classesDir, strict::field<std::string>(json, path, "classes"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* random, strict::require(json, path, "random"));
    QS_ASSIGN_OR_RETURN(dataset.randomSamples,
                        strict::integer(*random, strict::member(path, "random"), 0,
                                        std::numeric_limits<int64_t>::max()));
    QS_ASSIGN_OR_RETURN(dataset.seed, strict::field<uint64_t>(json, path, "seed"));
    QS_ASSIGN_OR_RETURN(const nlohmann::json* limit, strict::require(json, path, "max_samples"));
    if (!limit->is_null()) {
        QS_ASSIGN_OR_RETURN(dataset.maxSamples,
                            strict::integer(*limit, strict::member(path, "max_samples"), 1,
                                            std::numeric_limits<int64_t>::max()));
    }
    QS_ASSIGN_OR_RETURN(dataset.labelsNpy, strict::field<std::string>(json, path, "labels"));
    QS_ASSIGN_OR_RETURN(dataset.inputShapes,
                        strict::field<std::vector<std::string>>(json, path, "input_shapes"));
    return dataset;
}

} // namespace qs::session
