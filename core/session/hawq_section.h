// The HAWQ section of a session (issue 15): what a HAWQ run chose, enough for a later session to
// show the choice and re-select without recomputing — the request (target, mode, search, bits,
// samples, iterations), the chosen candidate's ratio and metric, and per layer its node, average
// trace and chosen weight bits. The chosen configs themselves live in the quantization section.
#pragma once

#include "core/mixed_precision/hawq_workflow.h"
#include "core/session/session_file.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qs::session {

inline constexpr std::string_view kHawqSection = "hawq";

struct HawqSummary {
    double target = 0.0;
    std::string mode;
    std::string search;
    std::vector<int> bits;
    int64_t samples = 0;
    int iterations = 0;
    double ratio = 0.0;
    double metric = 0.0;
    int mergedQuantizers = 0;
    int requantizers = 0;

    struct Layer {
        std::string node;
        double avgTrace = 0.0;
        int weightBits = 0;

        bool operator==(const Layer&) const = default;
    };

    std::vector<Layer> layers;

    bool operator==(const HawqSummary&) const = default;
};

HawqSummary summarize(const mixed_precision::HawqOutcome& outcome,
                      const mixed_precision::HawqRequest& request);

nlohmann::json toJson(const HawqSummary& summary);

/// Reads what toJson writes; a malformed section is an error naming the field.
Result<HawqSummary> hawqSummaryFromJson(const nlohmann::json& json);

/// The session's HAWQ summary, if it has one.
Result<std::optional<HawqSummary>> hawqSummary(const SessionFile& session);

} // namespace qs::session
