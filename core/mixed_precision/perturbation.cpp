// Weight quantization noise per layer and config.

#include "core/mixed_precision/perturbation.h"

#include "core/quantization/fake_quantize.h"
#include "core/quantization/insertion_point_values.h"
#include "core/quantization/quantizer_parameters.h"
#include "core/quantization/statistics.h"

#include <vector>

namespace qs::mixed_precision {

Result<double> weightPerturbation(const graph::TensorData& weight,
                                  const quantization::QuantizerConfig& config,
                                  std::optional<int64_t> axis) {
    QS_ASSIGN_OR_RETURN(const quantization::MinMaxRange range,
                        quantization::weightRange(weight, config, axis));
    const std::optional<int> channelAxis =
        config.perChannel && axis ? std::optional<int>(static_cast<int>(*axis)) : std::nullopt;
    QS_ASSIGN_OR_RETURN(
        const quantization::QuantizerParameters params,
        quantization::parametersFromMinMax(config, range.min, range.max, channelAxis));
    const std::span<const float> original = weight.as<float>();
    std::vector<float> quantized(original.begin(), original.end());
    QS_TRY(quantization::fakeQuantize(quantized, weight.dims(), params));
    double total = 0.0;
    for (size_t i = 0; i < quantized.size(); ++i) {
        const double d = static_cast<double>(quantized[i]) - static_cast<double>(original[i]);
        total += d * d;
    }
    return total;
}

Result<LayerPerturbations> layerPerturbations(const graph::Graph& model,
                                              const quantization::QuantizationState& state,
                                              const HawqProblem& problem, Progress& progress) {
    LayerPerturbations out(problem.layers.size());
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        QS_TRY(checkCancelled(progress));
        const WeightLayer& layer = problem.layers[l];
        const quantization::MultiConfigQuantizationPoint& point =
            state.proposal.setup.quantizationPoints.at(layer.weightQp);
        QS_ASSIGN_OR_RETURN(const quantization::ResolvedInsertionPoint at,
                            quantization::resolveInsertionPoint(model, point.insertionPoint));
        const graph::TensorData& weight = *model.value(at.value).initializer;
        for (const int bits : layer.bitsAllowed) {
            const std::optional<quantization::QuantizerConfig> config =
                configForBits(point, bits, state.settings.preset);
            QS_ASSIGN_OR_RETURN(out[l][bits],
                                weightPerturbation(weight, *config, at.weightAxis)
                                    .context("perturbation of '" + layer.node + "' at " +
                                             std::to_string(bits) + " bits"));
        }
        progress.report(static_cast<double>(l + 1) / static_cast<double>(problem.layers.size()),
                        "perturbation " + layer.node);
    }
    return out;
}

} // namespace qs::mixed_precision
