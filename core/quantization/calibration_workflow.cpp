#include "core/quantization/calibration_workflow.h"

#include <chrono>

namespace qs::quantization {
namespace {
constexpr double kLoaded = 0.10;
constexpr double kCalibrated = 0.55;
} // namespace

Result<CalibrationOutcome> runCalibration(const graph::Graph& model,
                                          const SingleConfigQuantizerSetup& setup,
                                          const CalibrationRequest& request, Progress& progress) {
    progress.report(0.0, "Loading the calibration data");
    QS_ASSIGN_OR_RETURN(const runtime::Dataset dataset,
                        runtime::loadDataset(model, request.dataset));
    QS_TRY(checkCancelled(progress));
    CalibrationOutcome outcome;
    outcome.setup = setup;
    outcome.dataset = request.dataset.describe();
    outcome.samples = dataset.samples();
    outcome.batchSize = dataset.batchSize;
    outcome.estimator = request.estimator;
    progress.report(kLoaded, "Collecting statistics");
    const auto start = std::chrono::steady_clock::now();
    {
        SubProgress stage(progress, kLoaded, kCalibrated);
        QS_ASSIGN_OR_RETURN(
            outcome.parameters,
            calibrate(model, setup, dataset,
                      {.estimator = request.estimator, .percentile = request.percentile}, stage));
    }
    outcome.calibrationSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    progress.report(kCalibrated, "Simulating the quantized model");
    {
        SubProgress stage(progress, kCalibrated, 1.0);
        QS_ASSIGN_OR_RETURN(outcome.simulation,
                            simulateQuantization(model, setup, outcome.parameters, dataset, stage));
    }
    progress.report(1.0, "Done");
    return outcome;
}

} // namespace qs::quantization
