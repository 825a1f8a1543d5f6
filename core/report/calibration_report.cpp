#include "core/report/calibration_report.h"

#include "core/quantization/quantizer_setup_report.h"

#include <iomanip>
#include <limits>
#include <sstream>

namespace qs::report {

Result<std::optional<AccuracyComparison>>
calibrationAccuracy(const quantization::CalibrationOutcome& outcome) {
    return simulationAccuracy(outcome.simulation);
}

Result<std::optional<AccuracyComparison>>
simulationAccuracy(const quantization::SimulationReport& simulation) {
    return compareAccuracy(simulation.labelled);
}

nlohmann::json toJson(const quantization::CalibrationOutcome& outcome) {
    nlohmann::json report;
    report["calibration"] = {
        {"dataset", outcome.dataset},
        {"samples", outcome.samples},
        {"batch_size", outcome.batchSize},
        {"range_estimator", quantization::rangeEstimatorName(outcome.estimator)},
        {"seconds", outcome.calibrationSeconds}};
    nlohmann::json quantizers =
        quantization::toJson(outcome.setup, outcome.parameters).at("quantizers");
    for (const auto& [id, error] : outcome.simulation.quantizers) {
        quantizers[std::to_string(id)].update(quantization::toJson(error));
    }
    report["quantizers"] = quantizers;
    report["simulation"] = quantization::toJson(outcome.simulation);
    report["bitwidth_table"] = quantization::bitwidthSummaryTable(outcome.setup);
    // Bad labels are reported by calibrationAccuracy() where the caller checks it.
    if (auto accuracy = calibrationAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        report["accuracy"] = toJson(**accuracy);
    }
    return report;
}

std::string calibrationText(const quantization::CalibrationOutcome& outcome) {
    const quantization::SimulationReport& simulation = outcome.simulation;
    std::ostringstream out;
    out << "Calibrated " << outcome.parameters.size() << " quantizers on " << outcome.samples
        << " samples in " << outcome.calibrationSeconds << " s; simulation " << simulation.seconds
        << " s\n";
    double worst = std::numeric_limits<double>::infinity();
    int worstId = -1;
    for (const auto& [id, error] : simulation.quantizers) {
        if (error.localSqnrDb < worst) {
            worst = error.localSqnrDb;
            worstId = id;
        }
    }
    out << std::fixed << std::setprecision(6);
    for (const quantization::OutputMetrics& m : simulation.outputs) {
        out << "Output '" << m.name << "': cosine similarity " << m.meanCosine << " (min "
            << m.minCosine << "), max abs error " << m.maxAbsError;
        if (m.top1Agreement) {
            out << ", top-1 agreement " << *m.top1Agreement;
        }
        out << "\n";
    }
    if (worstId >= 0) {
        out << std::setprecision(2) << "Lowest quantizer SQNR: #" << worstId << " " << worst
            << " dB\n";
    }
    if (auto accuracy = calibrationAccuracy(outcome); accuracy.ok() && accuracy->has_value()) {
        out << accuracyText(**accuracy);
    }
    return out.str();
}

} // namespace qs::report
