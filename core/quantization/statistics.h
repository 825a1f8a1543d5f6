// Activation statistics for calibration (reference/nncf-quantization.md §3): the float model runs
// over a dataset in batches with every observed tensor added as an extra graph output, and each
// batch is reduced at once into per-sample min / max / |max| (summed for means over samples),
// global min / max, per-channel (axis 1) min / max and, on request, per-sample percentiles.
// Weight statistics come from the initializers themselves, per output channel.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/quantizer_config.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/tensor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace qs::quantization {

/// How a quantizer's range is estimated from activation statistics.
enum class RangeEstimator {
    Nncf,       ///< NNCF's PTQ default: MEAN_MINMAX for per-tensor activations, MINMAX per-channel
    MinMax,     ///< global min and max over the dataset
    MeanMinMax, ///< means over samples of the per-sample min and max
    Percentile, ///< means over samples of per-sample percentiles (per-tensor activations)
};

std::string_view rangeEstimatorName(RangeEstimator estimator);

/// Parses "nncf", "minmax", "mean_minmax" or "percentile".
Result<RangeEstimator> parseRangeEstimator(std::string_view text);

struct StatisticsOptions {
    bool percentiles = false;  ///< also collect per-sample percentiles (a sort per tensor)
    double percentile = 99.99; ///< upper percentile; the lower one is 100 - percentile
};

/// Statistics of one tensor over a dataset. Symmetric quantizers use |max| statistics (NNCF's
/// use_abs_max), asymmetric ones min and max.
struct TensorStatistics {
    int64_t samples = 0;
    float min = std::numeric_limits<float>::infinity();
    float max = -std::numeric_limits<float>::infinity();
    double sumSampleMin = 0.0;
    double sumSampleMax = 0.0;
    double sumSampleAbsMax = 0.0;
    std::vector<float> channelMin; ///< along axis 1 (empty for rank < 2)
    std::vector<float> channelMax;
    double sumSampleLow = 0.0; ///< per-sample percentile sums (with `percentiles`)
    double sumSampleHigh = 0.0;
    double sumSampleAbsHigh = 0.0;

    /// Adds a batch (samples on axis 0, float). Fails on NaN/inf or a channel count change.
    Result<void> addBatch(const runtime::Tensor& batch, const StatisticsOptions& options);
};

/// A min/max range, one entry per channel or a single one.
struct MinMaxRange {
    std::vector<float> min;
    std::vector<float> max;
};

/// The range a quantizer with `config` takes from `stats` under `estimator`. Per-channel
/// quantizers always use the per-channel min / max (as NNCF does); Percentile needs statistics
/// collected with `percentiles`.
Result<MinMaxRange> activationRange(const TensorStatistics& stats, const QuantizerConfig& config,
                                    RangeEstimator estimator);

/// Per-channel (along `axis`) or per-tensor min and |max|-or-max of a float weight.
Result<MinMaxRange> weightRange(const graph::TensorData& weight, const QuantizerConfig& config,
                                std::optional<int64_t> axis);

/// Runs `model` over `dataset` (runtime::runObserving) and returns the statistics of each of
/// `observed`, in order. Reports progress per batch; a cancel gives Errc::Cancelled.
Result<std::vector<TensorStatistics>> collectStatistics(const graph::Graph& model,
                                                        std::span<const graph::ValueId> observed,
                                                        const runtime::Dataset& dataset,
                                                        const StatisticsOptions& options,
                                                        Progress& progress);

} // namespace qs::quantization
