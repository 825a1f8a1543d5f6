// NNCF's calculate_quantizer_parameters (reference/nncf-quantization.md §3): FakeQuantize range
// from min/max statistics, then the scale / zero point a QDQ pair needs for that range.

#include "core/quantization/quantizer_parameters.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace qs::quantization {
namespace {

constexpr float kZeroFilterRatio = 0.01F; // symmetric: hi >= 1% of the largest channel max
constexpr float kZeroFilterFloor = 8e-5F; // ... and never below this
constexpr float kAsymMinRange = 8e-4F;    // asymmetric: narrower ranges are widened by this
constexpr int kMinBits = 2;
constexpr int kMaxBits = 16;

/// §3 integer grid: sym signed [-2^(b-1), 2^(b-1)-1] (narrow: low+1); sym unsigned [0, 2^b-1]
/// (narrow: high-1); asym [0, 2^b-1] (narrow: [1, 2^b-1]).
void setGrid(QuantizerParameters& params) {
    const QuantizerConfig& config = params.qconfig;
    const int bits = config.numBits;
    if (config.mode == QuantizationMode::Symmetric && params.isSigned) {
        params.quantMin = -(1 << (bits - 1)) + (config.narrowRange ? 1 : 0);
        params.quantMax = (1 << (bits - 1)) - 1;
    } else if (config.mode == QuantizationMode::Symmetric) {
        params.quantMin = 0;
        params.quantMax = (1 << bits) - 1 - (config.narrowRange ? 1 : 0);
    } else {
        params.quantMin = config.narrowRange ? 1 : 0;
        params.quantMax = (1 << bits) - 1;
    }
}

/// Symmetric range: zero-filter fix, then lo from the signedness and the levels/(levels-2) factor
/// (128/127 at 8 bits) that puts hi on the last positive level of a full-range grid.
void symmetricRange(QuantizerParameters& params, std::span<const float> statMax) {
    const float largest = *std::max_element(statMax.begin(), statMax.end());
    const float threshold = std::max(largest * kZeroFilterRatio, kZeroFilterFloor);
    const auto levels = static_cast<float>(params.levels());
    const float lowFactor = params.qconfig.narrowRange ? 1.0F : levels / (levels - 2.0F);
    for (size_t c = 0; c < statMax.size(); ++c) {
        const float hi = std::max(statMax[c], threshold);
        params.inputHigh[c] = hi;
        params.inputLow[c] = params.isSigned ? -hi * lowFactor : 0.0F;
    }
}

/// NNCF's tune_range: moves one border so that zero falls on an integer level, keeping the option
/// with the wider range (the one that still covers [lo, hi]). L = 2^bits - 1 regardless of narrow
/// range, as in NNCF.
void snapZeroPoint(float& lo, float& hi, int bits) {
    const auto levelHigh = static_cast<float>((1 << bits) - 1);
    const float q0 = std::nearbyint(-lo * levelHigh / (hi - lo));
    const float keepHighLow = q0 < levelHigh ? q0 / (q0 - levelHigh) * hi : lo;
    const float keepLowHigh = q0 > 0.0F ? (q0 - levelHigh) / q0 * lo : hi;
    const float rangeKeepHigh = hi - keepHighLow;
    const float rangeKeepLow = keepLowHigh - lo;
    if (rangeKeepHigh > rangeKeepLow) {
        lo = keepHighLow;
    } else {
        hi = keepLowHigh;
    }
}

/// Asymmetric range: widen tiny ranges, include zero, snap the zero point.
void asymmetricRange(QuantizerParameters& params, std::span<const float> statMin,
                     std::span<const float> statMax) {
    for (size_t c = 0; c < statMin.size(); ++c) {
        float lo = statMin[c];
        float hi = statMax[c];
        if (hi - lo < kAsymMinRange) {
            lo -= kAsymMinRange;
            hi += kAsymMinRange;
        }
        lo = std::min(lo, 0.0F);
        hi = std::max(hi, 0.0F);
        snapZeroPoint(lo, hi, params.qconfig.numBits);
        params.inputLow[c] = lo;
        params.inputHigh[c] = hi;
    }
}

/// scale = (hi - lo) / (levels - 1) with a float-epsilon floor; zp = clip(qmin - round(lo/scale)).
void setScaleZeroPoint(QuantizerParameters& params) {
    const size_t count = params.inputLow.size();
    params.scale.resize(count);
    params.zeroPoint.resize(count);
    const auto steps = static_cast<float>(params.levels() - 1);
    for (size_t c = 0; c < count; ++c) {
        const float scale = std::max((params.inputHigh[c] - params.inputLow[c]) / steps,
                                     std::numeric_limits<float>::epsilon());
        const auto zp = static_cast<int32_t>(static_cast<float>(params.quantMin) -
                                             std::nearbyint(params.inputLow[c] / scale));
        params.scale[c] = scale;
        params.zeroPoint[c] = std::clamp(zp, params.quantMin, params.quantMax);
    }
}

Result<void> checkInputs(const QuantizerConfig& config, std::span<const float> statMin,
                         std::span<const float> statMax, std::optional<int> channelAxis) {
    if (config.numBits < kMinBits || config.numBits > kMaxBits) {
        return Error(Errc::InvalidArgument,
                     "unsupported bit width " + std::to_string(config.numBits) + " (2..16)");
    }
    if (statMin.empty() || statMin.size() != statMax.size()) {
        return Error(Errc::InvalidArgument,
                     "min/max statistics must be non-empty and of equal length (got " +
                         std::to_string(statMin.size()) + " and " + std::to_string(statMax.size()) +
                         ")");
    }
    if (config.perChannel != channelAxis.has_value()) {
        return Error(Errc::InvalidArgument, config.perChannel
                                                ? "per-channel config needs a channel axis"
                                                : "per-tensor config given a channel axis");
    }
    if (!channelAxis && statMin.size() != 1) {
        return Error(Errc::InvalidArgument, "per-tensor statistics must have one entry");
    }
    for (size_t c = 0; c < statMin.size(); ++c) {
        if (!std::isfinite(statMin[c]) || !std::isfinite(statMax[c]) || statMin[c] > statMax[c]) {
            return Error(Errc::InvalidArgument,
                         "invalid statistics at channel " + std::to_string(c) + ": min " +
                             std::to_string(statMin[c]) + ", max " + std::to_string(statMax[c]));
        }
    }
    return success();
}

} // namespace

Result<QuantizerParameters> parametersFromMinMax(const QuantizerConfig& config,
                                                 std::span<const float> statMin,
                                                 std::span<const float> statMax,
                                                 std::optional<int> channelAxis) {
    QS_TRY(checkInputs(config, statMin, statMax, channelAxis));
    QuantizerParameters params;
    params.qconfig = config;
    params.channelAxis = channelAxis;
    params.inputLow.resize(statMin.size());
    params.inputHigh.resize(statMin.size());
    if (config.mode == QuantizationMode::Symmetric) {
        const bool anyNegative =
            std::any_of(statMin.begin(), statMin.end(), [](float v) { return v < 0.0F; });
        // §3 / NNCF's symmetric_range: signed when forced signed OR any min < 0 — a forced
        // unsigned config still gets the signed grid on negative statistics.
        params.isSigned = config.signednessToForce == true || anyNegative;
        setGrid(params);
        symmetricRange(params, statMax);
    } else {
        params.isSigned = false; // the asymmetric grid is [0, 2^b - 1]; the zero point shifts it
        setGrid(params);
        asymmetricRange(params, statMin, statMax);
    }
    setScaleZeroPoint(params);
    return params;
}

nlohmann::json toJson(const QuantizerParameters& params) {
    nlohmann::json out;
    out["qconfig"] = toJson(params.qconfig);
    out["signed"] = params.isSigned;
    out["quant_min"] = params.quantMin;
    out["quant_max"] = params.quantMax;
    out["levels"] = params.levels();
    out["channel_axis"] =
        params.channelAxis ? nlohmann::json(*params.channelAxis) : nlohmann::json(nullptr);
    out["input_low"] = params.inputLow;
    out["input_high"] = params.inputHigh;
    out["scale"] = params.scale;
    out["zero_point"] = params.zeroPoint;
    return out;
}

nlohmann::json toJson(const SingleConfigQuantizerSetup& setup,
                      const QuantizerParametersMap& parameters) {
    std::map<int, int> groupOf;
    for (const auto& [gid, ids] : setup.unifiedScaleGroups) {
        for (const int id : ids) {
            groupOf[id] = gid;
        }
    }
    nlohmann::json points = nlohmann::json::object();
    for (const auto& [id, params] : parameters) {
        nlohmann::json entry = toJson(params);
        const auto point = setup.quantizationPoints.find(id);
        if (point != setup.quantizationPoints.end()) {
            const InsertionPoint& ip = point->second.insertionPoint;
            entry["insertion_point"] = ip.toString();
            entry["target_node_name"] = ip.targetNodeName;
            entry["is_weight"] = ip.isWeight;
            entry["input_port_id"] =
                ip.inputPortId ? nlohmann::json(*ip.inputPortId) : nlohmann::json(nullptr);
        }
        const auto group = groupOf.find(id);
        entry["unified_scale_group"] =
            group != groupOf.end() ? nlohmann::json(group->second) : nlohmann::json(nullptr);
        points[std::to_string(id)] = std::move(entry);
    }
    return nlohmann::json{
        {"format", "quantscope-encodings"}, {"version", 1}, {"quantizers", points}};
}

} // namespace qs::quantization
