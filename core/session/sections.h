// The feature sections of a session besides quantization: each feature writes its section from
// its workflow's outcome and reads it back. A feature adds its key and its two functions here
// (or in its own sections file next to this one); SessionFile keeps every section as JSON, so a
// session written by a newer build keeps sections this one does not know.
#pragma once

#include "core/compression/weight_compression.h"
#include "core/quantization/calibration_workflow.h"
#include "core/runtime/dataset_request.h"
#include "core/session/session_file.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::session {

inline constexpr std::string_view kCalibrationSection = "calibration";
inline constexpr std::string_view kCompressionSection = "compression";

/// The section `key`, or nullptr when the session has none.
const nlohmann::json* findSection(const SessionFile& session, std::string_view key);

/// Sets (replaces) the section `key`.
void setSection(SessionFile& session, std::string_view key, nlohmann::json section);

/// A dataset request as the Hessian and HAWQ sections keep it, to run again with the same data:
/// {"npy", "images", "classes", "random", "seed", "max_samples" (null: all), "labels",
///  "input_shapes"}.
nlohmann::json datasetRequestToJson(const runtime::DatasetRequest& dataset);

/// Reads it back strictly; errors name `path`.
Result<runtime::DatasetRequest> datasetRequestFromJson(const nlohmann::json& json,
                                                       const std::string& path);

/// What a calibration found, as much as a later session shows without recalibrating.
struct CalibrationSummary {
    std::string dataset; ///< DatasetRequest::describe()
    int64_t samples = 0;
    int64_t batchSize = 0;
    std::string rangeEstimator;
    double seconds = 0.0;

    struct Output {
        std::string name;
        double cosine = 0.0;
        double maxAbsError = 0.0;
        std::optional<double> top1Agreement;

        bool operator==(const Output&) const = default;
    };

    std::vector<Output> outputs;

    bool operator==(const CalibrationSummary&) const = default;
};

CalibrationSummary summarize(const quantization::CalibrationOutcome& outcome);

nlohmann::json toJson(const CalibrationSummary& summary);

/// The summary of a calibration section; a malformed one is an error naming the field.
Result<CalibrationSummary> calibrationSummaryFromJson(const nlohmann::json& json);

/// The session's calibration summary, if it has one.
Result<std::optional<CalibrationSummary>> calibrationSummary(const SessionFile& session);

/// The compression section: the plan as planToJson writes it.
void setCompressionPlan(SessionFile& session, const compression::CompressionPlan& plan);

} // namespace qs::session
