// The report of a calibration (quantization::runCalibration): the JSON written by
// `quantize --report` and savable from the GUI, and the console text `quantize` prints.
#pragma once

#include "core/quantization/calibration_workflow.h"
#include "core/report/accuracy.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace qs::report {

/// The accuracies of a simulation, nothing when its dataset had no labels; labels outside the
/// output's class range are an error naming both numbers.
Result<std::optional<AccuracyComparison>>
simulationAccuracy(const quantization::SimulationReport& simulation);

/// simulationAccuracy() of the calibration's simulation.
Result<std::optional<AccuracyComparison>>
calibrationAccuracy(const quantization::CalibrationOutcome& outcome);

/// {"calibration": {dataset, samples, batch_size, range_estimator, seconds}, "quantizers": per
/// quantizer parameters and SQNR, "simulation", "bitwidth_table", "accuracy" (with labels)};
/// the caller adds "model" and "setup" (where they came from).
nlohmann::json toJson(const quantization::CalibrationOutcome& outcome);

/// "Calibrated N quantizers on S samples in T s; simulation T s", then per output its cosine
/// similarity, max abs error and top-1 agreement, the lowest quantizer SQNR and, with labels, the
/// accuracy of both models.
std::string calibrationText(const quantization::CalibrationOutcome& outcome);

} // namespace qs::report
