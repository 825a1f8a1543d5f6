// Calibration statistics: one float run per batch with the observed tensors as extra outputs, each
// reduced in place (no copies except the scratch buffer of a percentile).

#include "core/quantization/statistics.h"

#include "core/runtime/probe_runner.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <string>

namespace qs::quantization {
namespace {

using ConstArrayMap = Eigen::Map<const Eigen::ArrayXf>;

/// Linear-interpolated percentile of `values` (reorders them), as numpy's default.
float percentileOf(std::vector<float>& values, double percent) {
    const double position = percent / 100.0 * static_cast<double>(values.size() - 1);
    const auto k = static_cast<size_t>(std::floor(position));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    const float low = values[k];
    const double fraction = position - static_cast<double>(k);
    if (fraction <= 0.0 || k + 1 >= values.size()) {
        return low;
    }
    const float high =
        *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(k) + 1, values.end());
    return static_cast<float>(low + fraction * (high - low));
}

void addSamplePercentiles(TensorStatistics& stats, const float* sample, int64_t count,
                          const StatisticsOptions& options) {
    std::vector<float> scratch(sample, sample + count);
    const float low = percentileOf(scratch, 100.0 - options.percentile);
    const float high = percentileOf(scratch, options.percentile);
    stats.sumSampleLow += low;
    stats.sumSampleHigh += high;
    stats.sumSampleAbsHigh += std::max(std::abs(low), std::abs(high));
}

double mean(double sum, int64_t samples) {
    return sum / static_cast<double>(std::max<int64_t>(samples, 1));
}

std::vector<float> absMax(const std::vector<float>& lo, const std::vector<float>& hi) {
    std::vector<float> out(lo.size());
    for (size_t c = 0; c < lo.size(); ++c) {
        out[c] = std::max(std::abs(lo[c]), std::abs(hi[c]));
    }
    return out;
}

MinMaxRange perTensorRange(const TensorStatistics& stats, bool symmetric,
                           RangeEstimator estimator) {
    const auto f = [](double v) { return std::vector<float>{static_cast<float>(v)}; };
    switch (estimator) {
    case RangeEstimator::MinMax:
        return {f(stats.min),
                f(symmetric ? std::max(std::abs(stats.min), std::abs(stats.max)) : stats.max)};
    case RangeEstimator::Percentile:
        return {f(mean(stats.sumSampleLow, stats.samples)),
                f(mean(symmetric ? stats.sumSampleAbsHigh : stats.sumSampleHigh, stats.samples))};
    case RangeEstimator::Nncf:
    case RangeEstimator::MeanMinMax:
        break;
    }
    return {f(mean(stats.sumSampleMin, stats.samples)),
            f(mean(symmetric ? stats.sumSampleAbsMax : stats.sumSampleMax, stats.samples))};
}

} // namespace

std::string_view rangeEstimatorName(RangeEstimator estimator) {
    switch (estimator) {
    case RangeEstimator::Nncf:
        return "nncf";
    case RangeEstimator::MinMax:
        return "minmax";
    case RangeEstimator::MeanMinMax:
        return "mean_minmax";
    case RangeEstimator::Percentile:
        return "percentile";
    }
    return "?";
}

Result<RangeEstimator> parseRangeEstimator(std::string_view text) {
    for (const RangeEstimator e : {RangeEstimator::Nncf, RangeEstimator::MinMax,
                                   RangeEstimator::MeanMinMax, RangeEstimator::Percentile}) {
        if (rangeEstimatorName(e) == text) {
            return e;
        }
    }
    return Error(Errc::Usage, "unknown range estimator '" + std::string(text) +
                                  "' (nncf, minmax, mean_minmax, percentile)");
}

Result<void> TensorStatistics::addBatch(const runtime::Tensor& batch,
                                        const StatisticsOptions& options) {
    if (batch.dtype() != graph::DataType::Float || batch.rank() == 0) {
        return Error(Errc::Unsupported, "statistics need a batched float tensor, got " +
                                            std::string(graph::dataTypeName(batch.dtype())) + " " +
                                            runtime::shapeToString(batch.shape()));
    }
    const int64_t batchSize = batch.shape()[0];
    if (batchSize == 0) {
        return success();
    }
    const int64_t perSample = batch.numElements() / batchSize;
    const int64_t channels = batch.rank() >= 2 ? batch.shape()[1] : 0;
    if (perSample == 0) {
        return Error(Errc::Unsupported, "statistics of an empty tensor");
    }
    if (channels > 0 && channelMin.empty()) {
        channelMin.assign(static_cast<size_t>(channels), std::numeric_limits<float>::infinity());
        channelMax.assign(static_cast<size_t>(channels), -std::numeric_limits<float>::infinity());
    }
    if (channels > 0 && channelMin.size() != static_cast<size_t>(channels)) {
        return Error(Errc::InvalidArgument, "channel count changed between batches");
    }
    const int64_t inner = channels > 0 ? perSample / channels : perSample;
    const int64_t blocks = channels > 0 ? channels : 1;
    const float* data = batch.data<float>();
    for (int64_t b = 0; b < batchSize; ++b) {
        const float* sample = data + b * perSample;
        float sampleMin = std::numeric_limits<float>::infinity();
        float sampleMax = -std::numeric_limits<float>::infinity();
        for (int64_t c = 0; c < blocks; ++c) {
            const ConstArrayMap block(sample + c * inner, inner);
            const float lo = block.minCoeff();
            const float hi = block.maxCoeff();
            sampleMin = std::min(sampleMin, lo);
            sampleMax = std::max(sampleMax, hi);
            if (channels > 0) {
                channelMin[static_cast<size_t>(c)] =
                    std::min(channelMin[static_cast<size_t>(c)], lo);
                channelMax[static_cast<size_t>(c)] =
                    std::max(channelMax[static_cast<size_t>(c)], hi);
            }
        }
        if (!std::isfinite(sampleMin) || !std::isfinite(sampleMax)) {
            return Error(Errc::InvalidArgument, "tensor holds non-finite values");
        }
        min = std::min(min, sampleMin);
        max = std::max(max, sampleMax);
        sumSampleMin += sampleMin;
        sumSampleMax += sampleMax;
        sumSampleAbsMax += std::max(std::abs(sampleMin), std::abs(sampleMax));
        if (options.percentiles) {
            addSamplePercentiles(*this, sample, perSample, options);
        }
        ++samples;
    }
    return success();
}

Result<MinMaxRange> activationRange(const TensorStatistics& stats, const QuantizerConfig& config,
                                    RangeEstimator estimator) {
    if (stats.samples == 0) {
        return Error(Errc::InvalidArgument, "no statistics collected");
    }
    const bool symmetric = config.mode == QuantizationMode::Symmetric;
    if (!config.perChannel) {
        return perTensorRange(stats, symmetric, estimator);
    }
    if (stats.channelMin.empty()) {
        return Error(Errc::Unsupported, "per-channel quantizer on a tensor without axis 1");
    }
    return MinMaxRange{stats.channelMin,
                       symmetric ? absMax(stats.channelMin, stats.channelMax) : stats.channelMax};
}

Result<MinMaxRange> weightRange(const graph::TensorData& weight, const QuantizerConfig& config,
                                std::optional<int64_t> axis) {
    if (weight.dtype() != graph::DataType::Float) {
        return Error(Errc::Unsupported, "weight quantization needs a float32 weight, got " +
                                            std::string(graph::dataTypeName(weight.dtype())));
    }
    if (config.perChannel && !axis) {
        return Error(Errc::Unsupported, "per-channel weight quantizer on a weight without an "
                                        "output-channel axis");
    }
    const std::vector<int64_t>& dims = weight.dims();
    const std::span<const float> values = weight.as<float>();
    if (values.empty()) {
        return Error(Errc::InvalidModel, "empty weight");
    }
    int64_t channels = 1;
    int64_t inner = static_cast<int64_t>(values.size());
    if (config.perChannel) {
        channels = dims[static_cast<size_t>(*axis)];
        inner = 1;
        for (size_t d = static_cast<size_t>(*axis) + 1; d < dims.size(); ++d) {
            inner *= dims[d];
        }
    }
    const int64_t outer = static_cast<int64_t>(values.size()) / (channels * inner);
    MinMaxRange range{
        std::vector<float>(static_cast<size_t>(channels), std::numeric_limits<float>::infinity()),
        std::vector<float>(static_cast<size_t>(channels), -std::numeric_limits<float>::infinity())};
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t c = 0; c < channels; ++c) {
            const ConstArrayMap block(values.data() + (o * channels + c) * inner, inner);
            auto& lo = range.min[static_cast<size_t>(c)];
            auto& hi = range.max[static_cast<size_t>(c)];
            lo = std::min(lo, block.minCoeff());
            hi = std::max(hi, block.maxCoeff());
        }
    }
    if (config.mode == QuantizationMode::Symmetric) {
        range.max = absMax(range.min, range.max);
    }
    return range;
}

Result<std::vector<TensorStatistics>> collectStatistics(const graph::Graph& model,
                                                        std::span<const graph::ValueId> observed,
                                                        const runtime::Dataset& dataset,
                                                        const StatisticsOptions& options,
                                                        Progress& progress) {
    std::vector<TensorStatistics> stats(observed.size());
    QS_TRY(runtime::runObserving(model, observed, dataset, progress,
                                 [&](runtime::ObservedBatch& batch) -> Result<void> {
                                     for (size_t i = 0; i < observed.size(); ++i) {
                                         QS_TRY(stats[i]
                                                    .addBatch(batch.probes[i], options)
                                                    .context("tensor '" +
                                                             model.value(observed[i]).name + "'"));
                                     }
                                     return success();
                                 },
                                 {.label = "statistics"}));
    return stats;
}

} // namespace qs::quantization
