#include "core/report/compression_report.h"

#include <iomanip>
#include <sstream>

namespace qs::report {
namespace {
/// Clamped tensors named in the text; the JSON report lists all.
constexpr size_t kListedClampedTensors = 5;

double mebibytes(int64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0);
}
} // namespace

std::string mebibytesText(int64_t bytes) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2) << mebibytes(bytes) << " MiB";
    return out.str();
}

Result<std::optional<AccuracyComparison>>
compressionAccuracy(const compression::WeightCompressionOutcome& outcome) {
    return compareAccuracy(outcome.labelled);
}

nlohmann::json toJson(const compression::WeightCompressionOutcome& outcome) {
    nlohmann::json json = compression::planToJson(outcome.plan);
    if (outcome.summary) {
        const compression::CompressionSummary& summary = *outcome.summary;
        json["summary"] = {{"compressed_weights", summary.compressedWeights},
                           {"weight_bytes_before", summary.floatBytesBefore},
                           {"weight_bytes_after", summary.bytesAfter},
                           {"opset", summary.opset},
                           {"ir_version", summary.irVersion}};
    }
    // Bad labels are reported by compressionAccuracy() where the caller checks it.
    if (auto accuracy = compressionAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        json["accuracy"] = toJson(**accuracy, "compressed");
    }
    return json;
}

std::string compressionText(const compression::WeightCompressionOutcome& outcome) {
    const compression::WeightCompressionOptions& options = outcome.plan.options;
    std::ostringstream out;
    if (options.ratio < 1.0 && compression::modeBits(options.mode) == 4) {
        out << "Sensitivity: " << compression::sensitivityMetricName(options.sensitivity);
        if (outcome.datasetSamples > 0) {
            out << " over " << outcome.datasetSamples << " dataset row(s) in batches of "
                << outcome.batchSize;
        }
        out << "\n";
    }
    out << compression::formatBitwidthTable(outcome.plan);
    if (outcome.summary) {
        out << "Compressed weights: " << outcome.summary->compressedWeights << " ("
            << mebibytesText(outcome.summary->floatBytesBefore) << " -> "
            << mebibytesText(outcome.summary->bytesAfter) << ")\n";
    }
    if (auto accuracy = compressionAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        out << accuracyText(**accuracy, "compressed");
    }
    return out.str();
}

nlohmann::json toJson(const compression::Fp16Report& report, const FileSizes& files) {
    return {{"converted_initializers", report.convertedInitializers},
            {"converted_values", report.convertedValues},
            {"casts_inserted", report.castsInserted},
            {"blocked_nodes", report.blockedNodes},
            {"clamped_elements", report.clampedElements},
            {"clamped_tensors", report.clampedTensors},
            {"flushed_elements", report.flushedElements},
            {"untyped_values", report.untypedValues},
            {"weight_bytes_before", report.bytesBefore},
            {"weight_bytes_after", report.bytesAfter},
            {"file_bytes_before", files.before},
            {"file_bytes_after", files.after}};
}

std::string fp16Text(const compression::Fp16Report& report, const FileSizes& files) {
    std::ostringstream out;
    out << std::fixed << std::setprecision(2)
        << "Converted to float16: " << report.convertedInitializers << " initializers, "
        << report.convertedValues << " values; " << report.blockedNodes
        << " nodes kept in float32; " << report.castsInserted << " Cast nodes inserted\n"
        << "Weights: " << mebibytes(report.bytesBefore) << " MiB -> "
        << mebibytes(report.bytesAfter) << " MiB; model size: " << mebibytes(files.before)
        << " MiB -> " << mebibytes(files.after) << " MiB\n"
        << "Clamped to +-65504: " << report.clampedElements << " values";
    for (size_t i = 0; i < report.clampedTensors.size() && i < kListedClampedTensors; ++i) {
        out << (i == 0 ? " in " : ", ") << report.clampedTensors[i];
    }
    if (report.clampedTensors.size() > kListedClampedTensors) {
        out << ", ...";
    }
    out << "\nFlushed to zero: " << report.flushedElements << " values\n";
    if (report.untypedValues > 0) {
        out << "Warning: " << report.untypedValues
            << " values have no inferred element type and were left unchanged\n";
    }
    return out.str();
}

} // namespace qs::report
