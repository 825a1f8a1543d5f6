// Calibration and its check: calibrate() turns a finalized setup plus a dataset into quantizer
// parameters (statistics → ranges, unified-scale groups sharing one range → §3 formulas), and
// simulateQuantization() runs the float model and its fake-quant copy side by side to report each
// quantizer's SQNR and the outputs' cosine similarity, max abs error and top-1 agreement.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/quantizer_setup.h"
#include "core/quantization/statistics.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/labelled_scores.h"
#include "core/runtime/tensor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace qs::quantization {

struct CalibrationOptions {
    RangeEstimator estimator = RangeEstimator::Nncf;
    double percentile = 99.99; ///< for RangeEstimator::Percentile
};

/// Parameters for every quantizer of `setup`: activation ranges from the float model run over
/// `dataset` (runtime::loadDataset, in its batches), weight ranges per output channel
/// from the weights. Members of a unified-scale group share one range (min of mins, max of maxes).
Result<QuantizerParametersMap> calibrate(const graph::Graph& model,
                                         const SingleConfigQuantizerSetup& setup,
                                         const runtime::Dataset& dataset,
                                         const CalibrationOptions& options, Progress& progress);

/// Signal-to-quantization-noise ratios of one quantizer, in dB (+inf when there is no noise).
struct QuantizerError {
    double sqnrDb = 0.0;      ///< float model's tensor vs the quantized model's quantized tensor
    double localSqnrDb = 0.0; ///< the tensor entering this quantizer vs its output (own noise)
};

/// Float vs quantized model on one output, over the dataset.
struct OutputMetrics {
    std::string name;
    double meanCosine = 0.0; ///< mean over samples of the per-sample cosine similarity
    double minCosine = 0.0;
    double maxAbsError = 0.0;
    std::optional<double> top1Agreement; ///< rank-2 outputs: argmax equal, fraction of samples
};

struct SimulationReport {
    int64_t samples = 0;
    double seconds = 0.0;
    std::map<int, QuantizerError> quantizers;
    std::vector<OutputMetrics> outputs;
    /// Set when the dataset has labels (the first output must then be class scores).
    std::optional<runtime::LabelledScores> labelled;
};

/// Runs the float model and its fake-quant copy (insertFakeQuantizers) over `dataset`.
Result<SimulationReport> simulateQuantization(const graph::Graph& model,
                                              const SingleConfigQuantizerSetup& setup,
                                              const QuantizerParametersMap& parameters,
                                              const runtime::Dataset& dataset, Progress& progress);

/// {"samples", "seconds", "outputs": [...]} (per-quantizer errors go with their parameters).
nlohmann::json toJson(const SimulationReport& report);

nlohmann::json toJson(const QuantizerError& error);

} // namespace qs::quantization
