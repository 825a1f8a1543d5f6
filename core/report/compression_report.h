// The reports of weight compression (compression::planCompression / applyCompression) and FP16
// conversion (compression::convertToFloat16): the JSON of `compress-weights --report` and
// `convert-fp16 --report`, and the console text both commands print.
#pragma once

#include "core/compression/compression_workflow.h"
#include "core/compression/fp16_conversion.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace qs::report {

/// The plan (options, per-weight decisions, table rows) and, once applied, "summary"; the caller
/// adds "model" and "output".
nlohmann::json toJson(const compression::WeightCompressionOutcome& outcome);

/// "Sensitivity: M over N dataset row(s) in batches of B" when the ratio mixes modes (empty
/// otherwise), NNCF's bitwidth table, and once applied "Compressed weights: N (X MiB -> Y MiB)".
std::string compressionText(const compression::WeightCompressionOutcome& outcome);

/// "12.34 MiB".
std::string mebibytesText(int64_t bytes);

/// Sizes of the model file before and after, for the reports.
struct FileSizes {
    int64_t before = 0;
    int64_t after = 0;
};

/// The conversion report; the caller adds "model", "output", "keep_io_types", "blocked_ops".
nlohmann::json toJson(const compression::Fp16Report& report, const FileSizes& files);

/// What was converted, the casts, clamped and flushed values, sizes before and after.
std::string fp16Text(const compression::Fp16Report& report, const FileSizes& files);

} // namespace qs::report
