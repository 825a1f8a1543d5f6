// Calibration as one workflow, the same for the CLI (`quantize --calib-*`) and the GUI
// (Quantize ▸ Calibrate…): load the dataset, calibrate the finalized setup (statistics → ranges →
// parameters) and simulate the quantized model against the float one. The report of the outcome
// (JSON and console text) is core/report/calibration_report.h.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/calibration.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/quantizer_setup.h"
#include "core/quantization/statistics.h"
#include "core/runtime/dataset_request.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <cstdint>
#include <string>

namespace qs::quantization {

struct CalibrationRequest {
    runtime::DatasetRequest dataset = runtime::calibrationRequest();
    RangeEstimator estimator = RangeEstimator::Nncf;
    double percentile = 99.99; ///< for RangeEstimator::Percentile
};

struct CalibrationOutcome {
    SingleConfigQuantizerSetup setup; ///< the setup calibrated
    QuantizerParametersMap parameters;
    SimulationReport simulation;
    std::string dataset; ///< DatasetRequest::describe()
    int64_t samples = 0;
    int64_t batchSize = 0;
    RangeEstimator estimator = RangeEstimator::Nncf;
    double calibrationSeconds = 0.0;
};

/// Progress: 0–10 % loading, 10–55 % statistics, 55–100 % simulation; a cancel gives
/// Errc::Cancelled.
Result<CalibrationOutcome> runCalibration(const graph::Graph& model,
                                          const SingleConfigQuantizerSetup& setup,
                                          const CalibrationRequest& request, Progress& progress);

} // namespace qs::quantization
