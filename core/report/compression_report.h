// The reports of weight compression (compression::planCompression / applyCompression) and FP16
// conversion (compression::convertToFloat16): the JSON of `compress-weights --report` and
// `convert-fp16 --report`, and the console text both commands print.
#pragma once

#include "core/compression/compression_workflow.h"
#include "core/compression/fp16_conversion.h"
#include "core/report/accuracy.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace qs::report {

/// Top-1 (and top-5) of the float and the compressed model when the outcome was scored on a
/// labelled dataset; nothing otherwise. Labels outside the output's class range are an error.
Result<std::optional<AccuracyComparison>>
compressionAccuracy(const compression::WeightCompressionOutcome& outcome);

/// The plan (options, per-weight decisions, table rows), once applied "summary", and with labels
/// "accuracy" {"float", "compressed"}; the caller adds "model" and "output".
nlohmann::json toJson(const compression::WeightCompressionOutcome& outcome);

/// "Sensitivity: M over N dataset row(s) in batches of B" when the ratio mixes modes (empty
/// otherwise), NNCF's bitwidth table, once applied "Compressed weights: N (X MiB -> Y MiB)", and
/// with labels both models' accuracy.
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
