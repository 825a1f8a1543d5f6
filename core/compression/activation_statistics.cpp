#include "core/compression/activation_statistics.h"

#include "core/runtime/probe_runner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>
#include <utility>

namespace qs::compression {

using graph::Graph;
using graph::NodeId;
using runtime::Tensor;

namespace {
constexpr std::array<std::pair<SensitivityMetric, std::string_view>, 4> kMetricNames = {{
    {SensitivityMetric::WeightQuantizationError, "weight_quantization_error"},
    {SensitivityMetric::MeanActivationVariance, "mean_activation_variance"},
    {SensitivityMetric::MaxActivationVariance, "max_activation_variance"},
    {SensitivityMetric::MeanActivationMagnitude, "mean_activation_magnitude"},
}};

/// Normalises a token axis counted from the end (-1 or -2) for a rank >= 2 tensor.
int64_t positiveAxis(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
}
} // namespace

std::string_view sensitivityMetricName(SensitivityMetric metric) {
    for (const auto& [value, name] : kMetricNames) {
        if (value == metric) {
            return name;
        }
    }
    return "weight_quantization_error";
}

Result<SensitivityMetric> parseSensitivityMetric(std::string_view text) {
    std::string key(text);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const auto& [value, name] : kMetricNames) {
        if (name == key) {
            return value;
        }
    }
    return Error(Errc::Usage,
                 "unknown sensitivity metric '" + std::string(text) +
                     "' (expected weight_quantization_error, mean_activation_variance, "
                     "max_activation_variance or mean_activation_magnitude)");
}

bool isDataAware(SensitivityMetric metric) {
    return metric != SensitivityMetric::WeightQuantizationError;
}

Result<ActivationProbe> activationProbeOf(const Graph& graph, NodeId node, int weightPort) {
    const graph::Node& op = graph.node(node);
    if ((op.opType != "MatMul" && op.opType != "Gemm") || (weightPort != 0 && weightPort != 1) ||
        op.inputs.size() < 2) {
        return Error(Errc::Unsupported, "no activation statistic for port " +
                                            std::to_string(weightPort) + " of " + op.opType +
                                            " node '" + op.name + "'");
    }
    const int activationPort = 1 - weightPort;
    // The contracted axis of the activation: last for a left operand, second-to-last for a right
    // one, swapped by Gemm's transA/transB. Tokens run along the other of the last two axes.
    bool contractsLast = activationPort == 0;
    if (op.opType == "Gemm") {
        const bool transposed = op.intAttr(activationPort == 0 ? "transA" : "transB", 0) != 0;
        contractsLast = contractsLast != transposed;
    }
    return ActivationProbe{op.inputs[static_cast<size_t>(activationPort)], contractsLast ? -2 : -1};
}

ActivationStatistic::ActivationStatistic(SensitivityMetric metric, int64_t tokenAxis)
    : m_metric(metric)
    , m_tokenAxis(tokenAxis) {}

double ActivationStatistic::reduceChannels(std::span<const double> variances,
                                           std::span<const double> magnitudes) const {
    if (variances.empty()) {
        return 0.0;
    }
    switch (m_metric) {
    case SensitivityMetric::MaxActivationVariance:
        return *std::max_element(variances.begin(), variances.end());
    case SensitivityMetric::MeanActivationMagnitude: {
        double sum = 0.0;
        for (const double magnitude : magnitudes) {
            sum += magnitude;
        }
        return sum / static_cast<double>(magnitudes.size());
    }
    case SensitivityMetric::MeanActivationVariance:
    case SensitivityMetric::WeightQuantizationError:
        break;
    }
    double sum = 0.0;
    for (const double variance : variances) {
        sum += variance;
    }
    return sum / static_cast<double>(variances.size());
}

void ActivationStatistic::addSample(const float* data, int64_t tokens, int64_t channels,
                                    int64_t tokenStride, int64_t channelStride) {
    std::vector<double> variances(static_cast<size_t>(channels));
    std::vector<double> magnitudes(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
        double sum = 0.0;
        double maxAbs = 0.0;
        for (int64_t t = 0; t < tokens; ++t) {
            const double x = data[t * tokenStride + c * channelStride];
            sum += x;
            maxAbs = std::max(maxAbs, std::abs(x));
        }
        const double mean = sum / static_cast<double>(tokens);
        double squares = 0.0;
        for (int64_t t = 0; t < tokens; ++t) {
            const double d = data[t * tokenStride + c * channelStride] - mean;
            squares += d * d;
        }
        variances[size_t(c)] = squares / static_cast<double>(tokens); // numpy var, ddof 0
        magnitudes[size_t(c)] = maxAbs;
    }
    m_sampleSum += reduceChannels(variances, magnitudes);
    ++m_samples;
}

void ActivationStatistic::addPooled(const float* data, int64_t tokens, int64_t channels,
                                    int64_t tokenStride, int64_t channelStride) {
    if (m_mean.empty()) {
        m_mean.assign(size_t(channels), 0.0);
        m_m2.assign(size_t(channels), 0.0);
        m_maxAbs.assign(size_t(channels), 0.0);
    }
    const auto n = static_cast<double>(tokens);
    const auto before = static_cast<double>(m_pooledCount);
    for (int64_t c = 0; c < channels; ++c) {
        double sum = 0.0;
        double& maxAbs = m_maxAbs[size_t(c)];
        for (int64_t t = 0; t < tokens; ++t) {
            const double x = data[t * tokenStride + c * channelStride];
            sum += x;
            maxAbs = std::max(maxAbs, std::abs(x));
        }
        const double mean = sum / n;
        double squares = 0.0;
        for (int64_t t = 0; t < tokens; ++t) {
            const double d = data[t * tokenStride + c * channelStride] - mean;
            squares += d * d;
        }
        // Chan et al.: merge (count, mean, M2) of the rows so far with this batch's.
        const double delta = mean - m_mean[size_t(c)];
        m_m2[size_t(c)] += squares + delta * delta * before * n / (before + n);
        m_mean[size_t(c)] += delta * n / (before + n);
    }
    m_pooledCount += tokens;
}

Result<void> ActivationStatistic::add(const Tensor& activation) {
    if (activation.dtype() != graph::DataType::Float) {
        return Error(Errc::Unsupported, "activation statistics need float32 activations, got " +
                                            std::string(graph::dataTypeName(activation.dtype())));
    }
    const auto rank = static_cast<int64_t>(activation.rank());
    if (activation.numElements() == 0) {
        return success();
    }
    // A vector is one token of C channels.
    const int64_t last = rank == 0 ? 1 : activation.shape().back();
    const int64_t secondLast = rank >= 2 ? activation.dim(-2) : 1;
    const bool tokensLast = rank >= 2 && positiveAxis(m_tokenAxis, rank) == rank - 1;
    const int64_t tokens = tokensLast ? last : secondLast;
    const int64_t channels = tokensLast ? secondLast : last;
    const int64_t tokenStride = tokensLast ? 1 : last;
    const int64_t channelStride = tokensLast ? last : 1;
    if (!m_mean.empty() && static_cast<int64_t>(m_mean.size()) != channels) {
        return Error(Errc::InvalidArgument, "activation has " + std::to_string(channels) +
                                                " channels, earlier batches had " +
                                                std::to_string(m_mean.size()));
    }
    const float* data = activation.data<float>();
    if (rank <= 2) {
        addPooled(data, tokens, channels, tokenStride, channelStride);
        return success();
    }
    const int64_t sampleElements = tokens * channels;
    for (int64_t offset = 0; offset < activation.numElements(); offset += sampleElements) {
        addSample(data + offset, tokens, channels, tokenStride, channelStride);
    }
    return success();
}

double ActivationStatistic::value() const {
    if (m_samples > 0) {
        return m_sampleSum / static_cast<double>(m_samples);
    }
    if (m_pooledCount == 0) {
        return 0.0;
    }
    std::vector<double> variances(m_m2.size());
    for (size_t c = 0; c < m_m2.size(); ++c) {
        variances[c] = m_m2[c] / static_cast<double>(m_pooledCount);
    }
    return reduceChannels(variances, m_maxAbs);
}

namespace {
/// One statistic per probe; constant activations go to theirs at once, the others are listed in
/// `probed` (with their statistic's index) to be observed on every batch.
Result<void> startStatistics(const Graph& graph, std::span<const ActivationProbe> probes,
                             SensitivityMetric metric, std::vector<ActivationStatistic>& statistics,
                             std::vector<graph::ValueId>& probed,
                             std::vector<size_t>& statisticOf) {
    statistics.reserve(probes.size());
    for (size_t i = 0; i < probes.size(); ++i) {
        statistics.emplace_back(metric, probes[i].tokenAxis);
        const graph::Value& value = graph.value(probes[i].value);
        if (value.isInitializer()) {
            QS_TRY(statistics[i]
                       .add(Tensor::wrap(value.initializer))
                       .context("constant activation '" + value.name + "'"));
            continue;
        }
        probed.push_back(probes[i].value);
        statisticOf.push_back(i);
    }
    return success();
}
} // namespace

Result<std::vector<double>> collectActivationStatistics(const Graph& graph,
                                                        std::span<const ActivationProbe> probes,
                                                        SensitivityMetric metric,
                                                        const runtime::Dataset& dataset,
                                                        Progress& progress) {
    if (!isDataAware(metric)) {
        return Error(Errc::InvalidArgument, "weight_quantization_error needs no activations");
    }
    std::vector<ActivationStatistic> statistics;
    std::vector<graph::ValueId> probed;
    std::vector<size_t> statisticOf;
    QS_TRY(startStatistics(graph, probes, metric, statistics, probed, statisticOf));
    QS_TRY(runtime::runObserving(graph, probed, dataset, progress,
                                 [&](runtime::ObservedBatch& batch) -> Result<void> {
                                     for (size_t p = 0; p < probed.size(); ++p) {
                                         QS_TRY(statistics[statisticOf[p]]
                                                    .add(batch.probes[p])
                                                    .context("activation '" +
                                                             graph.value(probed[p]).name + "'"));
                                     }
                                     return success();
                                 },
                                 {.label = "activation statistics"}));
    std::vector<double> values;
    values.reserve(statistics.size());
    for (const ActivationStatistic& statistic : statistics) {
        values.push_back(statistic.value());
    }
    return values;
}

} // namespace qs::compression
