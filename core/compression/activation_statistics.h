// Data-aware sensitivity for weight-compression ratio mixing (reference/nncf-quantization.md §5
// "Sensitivity metrics"): run the model on a dataset with the executor and reduce the input
// activation of each ratio-defining layer to one number — the mean or max over channels of the
// variance along the token axis, or the mean over channels of the largest |x| along it —
// averaged over samples. The weight's sensitivity is then (1 / INT8 error) × that number.
#pragma once

#include "core/graph/graph.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/tensor.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace qs::compression {

/// §5 SensitivityMetric. The first is data-free; the others need a dataset.
enum class SensitivityMetric {
    WeightQuantizationError,
    MeanActivationVariance,
    MaxActivationVariance,
    MeanActivationMagnitude,
};

/// "weight_quantization_error", "mean_activation_variance", ...
std::string_view sensitivityMetricName(SensitivityMetric metric);

/// Parses a metric name, case-insensitively.
Result<SensitivityMetric> parseSensitivityMetric(std::string_view text);

bool isDataAware(SensitivityMetric metric);

/// One layer input to observe: a value and the axis its tokens run along (the non-contracted one
/// of its last two axes, counted from the end: -2 for `x @ W`, -1 when the weight comes first
/// or the input is transposed).
struct ActivationProbe {
    graph::ValueId value;
    int64_t tokenAxis = -2;
};

/// The probe of the activation feeding weight port `weightPort` of MatMul/Gemm `node`;
/// Unsupported for other ops.
Result<ActivationProbe> activationProbeOf(const graph::Graph& graph, graph::NodeId node,
                                          int weightPort);

/// Reduces the activations seen by one probe. Activations of rank >= 3 are [samples..., T, C]
/// (or [..., C, T]): each leading index is a sample, reduced on its own and averaged. Activations
/// of rank <= 2 have no sample axis of their own — the token axis is the dataset's axis — so the
/// rows of every batch are pooled per channel into one sequence.
class ActivationStatistic {
public:
    ActivationStatistic(SensitivityMetric metric, int64_t tokenAxis);

    /// Adds one batch of the activation (float32).
    Result<void> add(const runtime::Tensor& activation);

    /// The statistic over everything added; 0 before anything was added.
    double value() const;

private:
    void addSample(const float* data, int64_t tokens, int64_t channels, int64_t tokenStride,
                   int64_t channelStride);
    void addPooled(const float* data, int64_t tokens, int64_t channels, int64_t tokenStride,
                   int64_t channelStride);
    double reduceChannels(std::span<const double> variances,
                          std::span<const double> magnitudes) const;

    SensitivityMetric m_metric;
    int64_t m_tokenAxis;
    double m_sampleSum = 0.0; ///< rank >= 3: sum of per-sample statistics
    int64_t m_samples = 0;
    // rank <= 2: per-channel running count, mean and sum of squared deviations (Chan's merge),
    // and the largest magnitude.
    int64_t m_pooledCount = 0;
    std::vector<double> m_mean;
    std::vector<double> m_m2;
    std::vector<double> m_maxAbs;
};

/// Runs the model over `dataset` (runtime::runObserving: batch by batch, keeping only the probed
/// activations alive) and returns one statistic per probe, in order.
Result<std::vector<double>> collectActivationStatistics(const graph::Graph& graph,
                                                        std::span<const ActivationProbe> probes,
                                                        SensitivityMetric metric,
                                                        const runtime::Dataset& dataset,
                                                        Progress& progress);

} // namespace qs::compression
