// Calibrated quantizer parameters (reference/nncf-quantization.md §3): the FakeQuantize range a
// quantizer simulates and the integer encoding (scale, zero point, grid) a QDQ export writes. This
// header is the contract between calibration (statistics -> parameters, fake-quant simulation) and
// export (parameters -> QuantizeLinear/DequantizeLinear or Clip + 8-bit QDQ).
#pragma once

#include "core/quantization/quantizer_config.h"
#include "core/quantization/quantizer_setup.h"
#include "core/support/result.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

namespace qs::quantization {

/// One quantizer's parameters. Vectors hold one entry per channel along `channelAxis`, or a
/// single entry for a per-tensor quantizer. The quantizer computes, per channel c,
///   q = clip(round(x / scale[c]) + zeroPoint[c], quantMin, quantMax),  y = (q - zeroPoint[c]) *
///   scale[c]
/// with round half to even (ONNX QuantizeLinear's rounding). `isSigned` says whether the grid is
/// the signed one (symmetric signed); an asymmetric quantizer always has the unsigned grid
/// [0, 2^b - 1] (narrow [1, 2^b - 1]) and its zero point carries the offset, so an exporter that
/// wants int8 for a negative range shifts grid and zero point by 2^(b-1).
struct QuantizerParameters {
    QuantizerConfig qconfig;
    bool isSigned = true;           ///< forced by the config or decided from statistics
    int quantMin = -128;            ///< integer grid, narrow range applied (e.g. -127..127)
    int quantMax = 127;             ///<
    std::optional<int> channelAxis; ///< tensor axis of per-channel parameters
    std::vector<float> inputLow;    ///< FakeQuantize range after §3's adjustments
    std::vector<float> inputHigh;   ///<
    std::vector<float> scale;       ///< (high - low) / (levels - 1)
    std::vector<int32_t> zeroPoint; ///< on the integer grid above

    int levels() const { return quantMax - quantMin + 1; }

    bool isPerChannel() const { return channelAxis.has_value(); }
};

/// Parameters of a finalized setup, by quantization point id.
using QuantizerParametersMap = std::map<int, QuantizerParameters>;

/// §3's calculate_quantizer_parameters from min/max statistics (one entry each, or one per channel
/// along `channelAxis`): zero filter, signedness, the levels/(levels-2) factor, small-range
/// widening, zero inclusion and zero-point snapping, then scale and zero point.
Result<QuantizerParameters> parametersFromMinMax(const QuantizerConfig& config,
                                                 std::span<const float> statMin,
                                                 std::span<const float> statMax,
                                                 std::optional<int> channelAxis);

/// One quantizer's parameters as JSON: qconfig, signed, quant_min/max, levels, channel_axis,
/// input_low/high, scale, zero_point.
nlohmann::json toJson(const QuantizerParameters& params);

/// The `--encodings-out` JSON: per quantization point its insertion point, config, grid, range,
/// scale and zero point.
nlohmann::json toJson(const SingleConfigQuantizerSetup& setup,
                      const QuantizerParametersMap& parameters);

} // namespace qs::quantization
