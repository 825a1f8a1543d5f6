// The report of a calibration (quantization::runCalibration): the JSON written by
// `quantize --report` and savable from the GUI, and the console text `quantize` prints.
#pragma once

#include "core/quantization/calibration_workflow.h"

#include <nlohmann/json.hpp>

#include <string>

namespace qs::report {

/// {"calibration": {dataset, samples, batch_size, range_estimator, seconds}, "quantizers": per
/// quantizer parameters and SQNR, "simulation", "bitwidth_table"}; the caller adds "model" and
/// "setup" (where they came from).
nlohmann::json toJson(const quantization::CalibrationOutcome& outcome);

/// "Calibrated N quantizers on S samples in T s; simulation T s", then per output its cosine
/// similarity, max abs error and top-1 agreement, and the lowest quantizer SQNR.
std::string calibrationText(const quantization::CalibrationOutcome& outcome);

} // namespace qs::report
