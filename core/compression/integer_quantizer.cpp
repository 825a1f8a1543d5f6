#include "core/compression/integer_quantizer.h"

#include <algorithm>
#include <cmath>
#include <limits>

// The two hot kernels are built twice, for AVX2 and for the baseline, and picked at load time
// (GCC function multi-versioning); both do the same IEEE operations, so results are identical.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
#define QS_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define QS_MULTIVERSION
#endif

namespace qs::compression {

namespace {
/// numpy's finfo(float32).eps: NNCF's floor for |scale|.
constexpr float kScaleEps = std::numeric_limits<float>::epsilon();

/// 1.5 * 2^23: adding and subtracting it rounds a float with |x| < 2^22 to the nearest integer,
/// ties to even (the default rounding mode), as np.round does. Inputs are clamped first.
constexpr float kRoundMagic = 12582912.0F;

/// Column tile of the outer-grouped kernel: a group of 128 rows x 256 floats stays in L2, so
/// the quantize pass rereads it from cache.
constexpr int64_t kColumnTile = 256;

/// Bytes of one tile that should stay in L2 between the min/max and the quantize pass.
constexpr int64_t kCachedTileBytes = int64_t{1} << 20;

/// Narrowest column tile: 64 floats, four AVX2 vectors per row.
constexpr int64_t kMinColumnTile = 64;

inline float roundHalfEven(float x) {
    return (x + kRoundMagic) - kRoundMagic;
}

/// Quantization parameters of one group from its min and max (§5).
struct GroupParams {
    float scale = 1.0F;
    float zeroPoint = 0.0F; ///< as a float: the kernels add it before rounding
    uint8_t zeroPointCode = 0;
};

/// numpy's float32 -> int32 cast on x86-64: out-of-range values become INT32_MIN.
int32_t castToInt32LikeNumpy(float value) {
    if (!(value >= -2147483648.0F && value < 2147483648.0F)) {
        return std::numeric_limits<int32_t>::min();
    }
    return static_cast<int32_t>(value);
}

GroupParams asymmetricParams(float minValue, float maxValue, int32_t high) {
    GroupParams params;
    // scale = (max - min) / (levels - 1), then NNCF's epsilon floor.
    float scale = (maxValue - minValue) / static_cast<float>(high);
    if (std::fabs(scale) < kScaleEps) {
        scale = kScaleEps;
    }
    // zp = clip(int32(level_low - round(min / scale)), level_low, level_high), level_low = 0.
    const float shifted = 0.0F - std::nearbyint(minValue / scale);
    const int32_t zeroPoint = std::clamp(castToInt32LikeNumpy(shifted), 0, high);
    params.scale = scale;
    params.zeroPoint = static_cast<float>(zeroPoint);
    params.zeroPointCode = static_cast<uint8_t>(zeroPoint);
    return params;
}

GroupParams symmetricParams(float minValue, float maxValue, int bits) {
    // s = |min| if |min| >= max else -max; scale = s / 2^(b-1), |scale| < eps -> eps.
    const float absMin = std::fabs(minValue);
    float scale = absMin >= maxValue ? absMin : -maxValue;
    scale /= static_cast<float>(1 << (bits - 1));
    if (std::fabs(scale) < kScaleEps) {
        scale = kScaleEps;
    }
    GroupParams params;
    params.scale = scale;
    return params;
}

/// q = clip(round(w / scale + zp), low, high); clipping first to the integer bounds gives the
/// same result and keeps the magic-number rounding in range. The byte is the storage form.
inline uint8_t quantizeToCode(float weight, float scale, float zeroPoint, float low, float high) {
    const float shifted = std::clamp(weight / scale + zeroPoint, low, high);
    return static_cast<uint8_t>(static_cast<int32_t>(roundHalfEven(shifted)));
}

/// The grid and the parameter rule of one mode.
struct Quantizer {
    CompressionMode mode;
    int bits;
    float low;
    float high;
    bool symmetric;

    explicit Quantizer(CompressionMode m)
        : mode(m)
        , bits(modeBits(m))
        , low(static_cast<float>(integerRange(m).low))
        , high(static_cast<float>(integerRange(m).high))
        , symmetric(isSymmetric(m)) {}

    GroupParams params(float minValue, float maxValue) const {
        return symmetric ? symmetricParams(minValue, maxValue, bits)
                         : asymmetricParams(minValue, maxValue, static_cast<int32_t>(high));
    }

    uint8_t code(float weight, float scale, float zeroPoint) const {
        return quantizeToCode(weight, scale, zeroPoint, low, high);
    }
};

/// Writes a group's parameters at `index` of the output arrays.
void storeParams(QuantizedWeight& out, int64_t index, const GroupParams& params, bool symmetric) {
    out.scales[static_cast<size_t>(index)] = params.scale;
    if (!symmetric) {
        out.zeroPoints[static_cast<size_t>(index)] = params.zeroPointCode;
    }
}

/// Columns per tile so that a tile of `groupRows` rows stays within kCachedTileBytes and is
/// reread from cache by the quantize pass; at least kMinColumnTile (then strided rows of 64
/// floats, which the prefetcher follows), at most kColumnTile.
int64_t columnTileWidth(int64_t groupRows, int64_t cols) {
    const int64_t fitting = kCachedTileBytes / (groupRows * static_cast<int64_t>(sizeof(float)));
    const int64_t width =
        std::clamp(fitting / kMinColumnTile * kMinColumnTile, kMinColumnTile, kColumnTile);
    return std::min(width, cols);
}

/// One tile of a row group: `first` points at [groupRows, width] with row stride `cols`.
struct RowTile {
    const float* first;
    int64_t groupRows;
    int64_t width;
    int64_t cols;
};

/// Column-wise min and max over the tile's rows.
QS_MULTIVERSION void tileMinMax(const RowTile& tile, float* minValues, float* maxValues) {
    std::copy(tile.first, tile.first + tile.width, minValues);
    std::copy(tile.first, tile.first + tile.width, maxValues);
    for (int64_t row = 1; row < tile.groupRows; ++row) {
        const float* src = tile.first + row * tile.cols;
        for (int64_t col = 0; col < tile.width; ++col) {
            const float value = src[col];
            minValues[col] = value < minValues[col] ? value : minValues[col];
            maxValues[col] = value > maxValues[col] ? value : maxValues[col];
        }
    }
}

/// Codes of the tile's rows with per-column scales and zero points; `dst` has row stride `cols`.
/// The grid bounds are copied to locals and the pointers marked restrict: byte stores may alias
/// anything, which would otherwise force reloads and block vectorisation.
QS_MULTIVERSION void tileCodes(const RowTile& tile, const Quantizer& quantizer,
                               const float* __restrict scales, const float* __restrict zeroPoints,
                               uint8_t* dst) {
    const float low = quantizer.low;
    const float high = quantizer.high;
    const int64_t width = tile.width;
    for (int64_t row = 0; row < tile.groupRows; ++row) {
        const float* __restrict src = tile.first + row * tile.cols;
        uint8_t* __restrict out = dst + row * tile.cols;
        for (int64_t col = 0; col < width; ++col) {
            out[col] = quantizeToCode(src[col], scales[col], zeroPoints[col], low, high);
        }
    }
}

/// Weight [rows, cols] row-major, groups of `groupRows` rows per column (MatMul [K, N]);
/// scale [rows / groupRows, cols].
void quantizeOuterGrouped(const float* weight, int64_t rows, int64_t cols, int64_t groupRows,
                          const Quantizer& quantizer, QuantizedWeight& out) {
    const int64_t tileWidth = columnTileWidth(groupRows, cols);
    std::vector<float> minValues(static_cast<size_t>(tileWidth));
    std::vector<float> maxValues(static_cast<size_t>(tileWidth));
    std::vector<float> scales(static_cast<size_t>(tileWidth));
    std::vector<float> zeroPoints(static_cast<size_t>(tileWidth));
    for (int64_t group = 0; group < rows / groupRows; ++group) {
        const int64_t firstRow = group * groupRows;
        for (int64_t col0 = 0; col0 < cols; col0 += tileWidth) {
            const RowTile tile{weight + firstRow * cols + col0, groupRows,
                               std::min(tileWidth, cols - col0), cols};
            tileMinMax(tile, minValues.data(), maxValues.data());
            for (int64_t col = 0; col < tile.width; ++col) {
                const GroupParams params = quantizer.params(minValues[col], maxValues[col]);
                scales[col] = params.scale;
                zeroPoints[col] = params.zeroPoint;
                storeParams(out, group * cols + col0 + col, params, quantizer.symmetric);
            }
            tileCodes(tile, quantizer, scales.data(), zeroPoints.data(),
                      out.codes.data() + firstRow * cols + col0);
        }
    }
}

/// Weight [rows, cols] row-major, groups of `groupCols` contiguous elements per row
/// (Gemm transB [N, K], Conv [Cout, Cin*k*k], Embedding [V, D]); scale [rows, cols / groupCols].
QS_MULTIVERSION void quantizeInnerGrouped(const float* weight, int64_t rows, int64_t cols,
                                          int64_t groupCols, const Quantizer& quantizer,
                                          QuantizedWeight& out) {
    const int64_t groupsPerRow = cols / groupCols;
    const float low = quantizer.low;
    const float high = quantizer.high;
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t group = 0; group < groupsPerRow; ++group) {
            const int64_t offset = row * cols + group * groupCols;
            const float* src = weight + offset;
            float minValue = src[0];
            float maxValue = src[0];
            for (int64_t i = 1; i < groupCols; ++i) {
                minValue = src[i] < minValue ? src[i] : minValue;
                maxValue = src[i] > maxValue ? src[i] : maxValue;
            }
            const GroupParams params = quantizer.params(minValue, maxValue);
            storeParams(out, row * groupsPerRow + group, params, quantizer.symmetric);
            uint8_t* __restrict dst = out.codes.data() + offset;
            const float scale = params.scale;
            const float zeroPoint = params.zeroPoint;
            for (int64_t i = 0; i < groupCols; ++i) {
                dst[i] = quantizeToCode(src[i], scale, zeroPoint, low, high);
            }
        }
    }
}

/// Per channel with reduction axes on both sides of the channel axis (ConvTranspose, 3-D MatMul
/// weights): strided, rare, not tuned.
void quantizeStridedPerChannel(const float* weight, const WeightLayout& layout,
                               const Quantizer& quantizer, QuantizedWeight& out) {
    const int64_t channels = layout.channels;
    const int64_t inner = layout.inner;
    for (int64_t channel = 0; channel < channels; ++channel) {
        float minValue = std::numeric_limits<float>::infinity();
        float maxValue = -std::numeric_limits<float>::infinity();
        for (int64_t outer = 0; outer < layout.outer; ++outer) {
            const float* src = weight + (outer * channels + channel) * inner;
            for (int64_t i = 0; i < inner; ++i) {
                minValue = std::min(minValue, src[i]);
                maxValue = std::max(maxValue, src[i]);
            }
        }
        const GroupParams params = quantizer.params(minValue, maxValue);
        storeParams(out, channel, params, quantizer.symmetric);
        for (int64_t outer = 0; outer < layout.outer; ++outer) {
            const int64_t offset = (outer * channels + channel) * inner;
            for (int64_t i = 0; i < inner; ++i) {
                out.codes[static_cast<size_t>(offset + i)] =
                    quantizer.code(weight[offset + i], params.scale, params.zeroPoint);
            }
        }
    }
}

Result<void> checkGroupSize(const WeightLayout& layout, int64_t groupSize) {
    if (groupSize <= 0) {
        return success();
    }
    if (!layout.hasSingleReductionAxis()) {
        return Error(Errc::Unsupported,
                     "group-wise quantization needs a single reduction axis; the weight has rank " +
                         std::to_string(layout.rank));
    }
    const int64_t channel = layout.reductionSize();
    if (channel % groupSize != 0) {
        return Error(Errc::Usage, "Channel size " + std::to_string(channel) +
                                      " should be divisible by size of group " +
                                      std::to_string(groupSize));
    }
    return success();
}
} // namespace

Result<WeightLayout> makeWeightLayout(const std::vector<int64_t>& dims, int64_t channelAxis) {
    const auto rank = static_cast<int64_t>(dims.size());
    const int64_t axis = channelAxis < 0 ? channelAxis + rank : channelAxis;
    if (rank == 0 || axis < 0 || axis >= rank) {
        return Error(Errc::InvalidArgument, "channel axis " + std::to_string(channelAxis) +
                                                " is out of range for a rank-" +
                                                std::to_string(rank) + " weight");
    }
    WeightLayout layout;
    layout.rank = rank;
    layout.channelAxis = axis;
    for (int64_t i = 0; i < rank; ++i) {
        if (dims[static_cast<size_t>(i)] <= 0) {
            return Error(Errc::InvalidArgument, "weight has an empty dimension");
        }
        int64_t& target = i < axis ? layout.outer : (i == axis ? layout.channels : layout.inner);
        target *= dims[static_cast<size_t>(i)];
    }
    return layout;
}

int64_t QuantizedWeight::dequantizeAxis() const {
    if (groupSize > 0 && layout.inner == 1) {
        return 0;
    }
    if (groupSize > 0) {
        return layout.rank - 1;
    }
    return layout.channelAxis;
}

Result<QuantizedWeight> quantizeWeight(std::span<const float> weight, const WeightLayout& layout,
                                       CompressionMode mode, int64_t groupSize) {
    if (mode == CompressionMode::None) {
        return Error(Errc::InvalidArgument, "mode 'none' does not quantize");
    }
    if (static_cast<int64_t>(weight.size()) != layout.numElements()) {
        return Error(Errc::InvalidArgument, "weight size does not match its layout");
    }
    QS_TRY(checkGroupSize(layout, groupSize));
    const Quantizer quantizer(mode);
    QuantizedWeight out;
    out.mode = mode;
    out.layout = layout;
    out.groupSize = groupSize;
    out.codes.resize(weight.size());
    const bool outerGrouped = groupSize > 0 && layout.inner == 1;
    const bool innerGrouped = groupSize > 0 && !outerGrouped;
    if (outerGrouped) {
        out.scaleDims = {layout.outer / groupSize, layout.channels};
    } else if (innerGrouped) {
        out.scaleDims = {layout.channels, layout.inner / groupSize};
    } else {
        out.scaleDims = {layout.channels};
    }
    const auto scaleCount = static_cast<size_t>(
        out.scaleDims.size() == 1 ? out.scaleDims[0] : out.scaleDims[0] * out.scaleDims[1]);
    out.scales.resize(scaleCount);
    if (!quantizer.symmetric) {
        out.zeroPoints.resize(scaleCount);
    }
    if (outerGrouped) {
        quantizeOuterGrouped(weight.data(), layout.outer, layout.channels, groupSize, quantizer,
                             out);
    } else if (innerGrouped) {
        quantizeInnerGrouped(weight.data(), layout.channels, layout.inner, groupSize, quantizer,
                             out);
    } else if (layout.inner == 1) {
        quantizeOuterGrouped(weight.data(), layout.outer, layout.channels, layout.outer, quantizer,
                             out);
    } else if (layout.outer == 1) {
        quantizeInnerGrouped(weight.data(), layout.channels, layout.inner, layout.inner, quantizer,
                             out);
    } else {
        quantizeStridedPerChannel(weight.data(), layout, quantizer, out);
    }
    return out;
}

std::vector<float> dequantizeWeight(const QuantizedWeight& quantized) {
    const WeightLayout& layout = quantized.layout;
    const bool symmetric = isSymmetric(quantized.mode);
    std::vector<float> out(quantized.codes.size());
    const int64_t group = quantized.groupSize;
    for (int64_t outer = 0; outer < layout.outer; ++outer) {
        for (int64_t channel = 0; channel < layout.channels; ++channel) {
            for (int64_t inner = 0; inner < layout.inner; ++inner) {
                int64_t paramIndex = channel;
                if (group > 0 && layout.inner == 1) {
                    paramIndex = (outer / group) * layout.channels + channel;
                } else if (group > 0) {
                    paramIndex = channel * (layout.inner / group) + inner / group;
                }
                const auto index =
                    static_cast<size_t>((outer * layout.channels + channel) * layout.inner + inner);
                const uint8_t code = quantized.codes[index];
                const float value = symmetric ? static_cast<float>(static_cast<int8_t>(code))
                                              : static_cast<float>(code);
                const float zeroPoint =
                    symmetric ? 0.0F : static_cast<float>(quantized.zeroPoints[size_t(paramIndex)]);
                out[index] = (value - zeroPoint) * quantized.scales[size_t(paramIndex)];
            }
        }
    }
    return out;
}

Result<double> quantizationError(std::span<const float> weight, const WeightLayout& layout,
                                 CompressionMode mode, int64_t groupSize, ErrorMetric metric) {
    QS_ASSIGN_OR_RETURN(QuantizedWeight quantized, quantizeWeight(weight, layout, mode, groupSize));
    const std::vector<float> restored = dequantizeWeight(quantized);
    std::vector<double> channelSums(static_cast<size_t>(layout.channels), 0.0);
    double total = 0.0;
    for (int64_t outer = 0; outer < layout.outer; ++outer) {
        for (int64_t channel = 0; channel < layout.channels; ++channel) {
            const int64_t offset = (outer * layout.channels + channel) * layout.inner;
            double sum = 0.0;
            for (int64_t inner = 0; inner < layout.inner; ++inner) {
                const auto index = static_cast<size_t>(offset + inner);
                const float diff = restored[index] - weight[index];
                sum += static_cast<double>(diff) * static_cast<double>(diff);
            }
            channelSums[static_cast<size_t>(channel)] += sum;
            total += sum;
        }
    }
    if (metric == ErrorMetric::Frobenius) {
        return std::sqrt(total);
    }
    const double maxSum = *std::max_element(channelSums.begin(), channelSums.end());
    return maxSum / static_cast<double>(layout.reductionSize());
}

std::string packInt4(std::span<const uint8_t> codes) {
    std::string packed((codes.size() + 1) / 2, '\0');
    for (size_t i = 0; i + 1 < codes.size(); i += 2) {
        packed[i / 2] = static_cast<char>((codes[i] & 0x0F) | ((codes[i + 1] & 0x0F) << 4));
    }
    if (codes.size() % 2 == 1) {
        packed.back() = static_cast<char>(codes.back() & 0x0F);
    }
    return packed;
}

std::vector<uint8_t> unpackInt4(std::string_view packed, int64_t count, bool isSigned) {
    std::vector<uint8_t> codes(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        const auto byte = static_cast<uint8_t>(packed[static_cast<size_t>(i / 2)]);
        uint8_t nibble = (i % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
        if (isSigned && (nibble & 0x08) != 0) {
            nibble |= 0xF0;
        }
        codes[static_cast<size_t>(i)] = nibble;
    }
    return codes;
}

} // namespace qs::compression
