// Calibration as the GUI holds it: what the user asked for (the core workflow's
// quantization::CalibrationRequest: dataset, batch size, range estimator), the job body that runs
// the core workflow (quantization::runCalibration, on a job thread), and the result a
// GraphDocument keeps together with a fingerprint of the setup it was made for — so any later
// config or settings change shows the parameters as stale. Plus the SQNR colour scale shared by
// the table, the graph overlay and its legend.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/calibration.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <QColor>
#include <QString>

#include <cstdint>
#include <string>

namespace qs::ui {

/// What Quantize ▸ Calibrate… asks for: the request of the core workflow, as the CLI's.
using CalibrationRequest = quantization::CalibrationRequest;

/// Calibrated parameters and their check, for one setup.
struct CalibrationResult {
    quantization::QuantizerParametersMap parameters;
    quantization::SimulationReport report;
    QString dataset;              ///< "random 8", "images /data/calib", …
    std::string setupFingerprint; ///< of the setup calibrated (setupFingerprint())
};

/// Identifies a finalized setup: equal fingerprints, same quantizers with the same configs.
std::string setupFingerprint(const quantization::SingleConfigQuantizerSetup& setup);

/// quantization::runCalibration (job thread): loads the dataset, calibrates `setup` on `model`
/// and simulates it. Progress goes 0–10 % loading, 10–55 % statistics, 55–100 % simulation; a
/// cancel gives Errc::Cancelled.
Result<CalibrationResult> runCalibration(const graph::Graph& model,
                                         const quantization::SingleConfigQuantizerSetup& setup,
                                         const CalibrationRequest& request, Progress& progress);

/// "cosine 0.9991 · max |err| 0.012 · top-1 100 %" for each output, joined by "; ", then with a
/// labelled dataset "top-1 accuracy: float 98.33 %, quantized 98.06 % (360 labelled)".
QString outputMetricsText(const quantization::SimulationReport& report);

/// "23.4 dB", "∞ dB" for a noiseless quantizer.
QString sqnrText(double db);

/// SQNR scale of the overlay: red at or below kSqnrLowDb, green at or above kSqnrHighDb.
constexpr double kSqnrLowDb = 10.0;
constexpr double kSqnrHighDb = 40.0;

/// The colour of `db` on the red (low) → yellow → green (high) scale.
QColor sqnrColor(double db);

/// low/high, scale and zero point of one quantizer as a multi-line tooltip text.
QString parametersText(const quantization::QuantizerParameters& params);

} // namespace qs::ui
