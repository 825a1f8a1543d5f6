// Integer weight quantization of one float32 tensor: NNCF's INT8/INT4, symmetric/asymmetric,
// per output channel or group-wise (reference/nncf-quantization.md §5). The kernels are plain
// loops over contiguous memory that the compiler vectorises; every float operation is the one
// numpy does in NNCF's reference, in the same order, so codes and scales agree bit for bit
// (checked by tests/unit/compression/numpy_reference.py).
#pragma once

#include "core/compression/compression_mode.h"
#include "core/support/result.h"

#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace qs::compression {

/// A weight seen as [outer, channels, inner]: `channels` is the output-channel axis, statistics
/// are reduced over every other axis (§5 "Reduction axes"). A MatMul weight [K, N] is
/// {K, N, 1}; a Conv weight [Cout, Cin, kh, kw] is {1, Cout, Cin*kh*kw}.
struct WeightLayout {
    int64_t outer = 1;
    int64_t channels = 1;
    int64_t inner = 1;
    int64_t rank = 2;        ///< rank of the original tensor
    int64_t channelAxis = 0; ///< output-channel axis in the original tensor (non-negative)

    int64_t numElements() const { return outer * channels * inner; }

    /// Length of the reduction: every axis but the channel axis, flattened.
    int64_t reductionSize() const { return outer * inner; }

    /// Group-wise quantization needs exactly one reduction axis, i.e. a rank-2 weight.
    bool hasSingleReductionAxis() const { return rank == 2; }
};

/// The layout of a tensor with `dims` whose output channels run along `channelAxis` (negative
/// counts from the end). InvalidArgument when the axis is out of range or a dim is not positive.
Result<WeightLayout> makeWeightLayout(const std::vector<int64_t>& dims, int64_t channelAxis);

/// An allocator that leaves new elements uninitialised: the kernels write every code, so the
/// zero fill std::vector would do is a wasted pass over the output.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
    template <typename U>
    struct rebind { // NOLINT(readability-identifier-naming): the allocator protocol's name
        using other = UninitializedAllocator<U>;
    };

    UninitializedAllocator() = default;

    template <typename U>
    UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}

    template <typename U>
    void construct(U* place) noexcept {
        ::new (static_cast<void*>(place)) U;
    }

    template <typename U, typename... Args>
    void construct(U* place, Args&&... args) {
        ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
    }
};

/// One byte per weight element.
using CodeBuffer = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

/// Codes, scales and zero points of one quantized weight.
struct QuantizedWeight {
    CompressionMode mode = CompressionMode::None;
    WeightLayout layout;
    int64_t groupSize = -1; ///< -1: per channel
    /// One code per element in the weight's own order, as the storage byte: two's complement
    /// for the signed modes (int4 codes in [-8, 7] sign-extended to a byte).
    CodeBuffer codes;
    /// Scales in DequantizeLinear's layout: [channels] per channel; [outer/g, channels] when
    /// grouping along the outer axis (MatMul [K, N]); [channels, inner/g] along the inner one.
    std::vector<float> scales;
    std::vector<int64_t> scaleDims;
    std::vector<uint8_t> zeroPoints; ///< asymmetric modes only; same layout as `scales`

    /// Axis of the original tensor along which DequantizeLinear's scale varies per block or
    /// per channel: the grouped axis for group-wise, the channel axis otherwise.
    int64_t dequantizeAxis() const;
};

/// Quantizes `weight` (layout.numElements() floats) in `mode` (not None) with `groupSize`
/// (-1 = per channel). Group-wise needs a single reduction axis whose length the group size
/// divides; otherwise InvalidArgument with NNCF's message. §5 "INT asymmetric":
///   scale = max(eps, (max - min) / (2^b - 1)), zp = clip(-round(min / scale), 0, 2^b - 1),
///   q = clip(round(w / scale + zp), 0, 2^b - 1);
/// §5 "INT symmetric": s = |min| if |min| >= max else -max, scale = s / 2^(b-1) (|scale| < eps
/// becomes eps), q = clip(round(w / scale), -2^(b-1), 2^(b-1) - 1). round is half-to-even.
Result<QuantizedWeight> quantizeWeight(std::span<const float> weight, const WeightLayout& layout,
                                       CompressionMode mode, int64_t groupSize);

/// (q - zp) * scale in float32, in the weight's own order: what DequantizeLinear computes.
std::vector<float> dequantizeWeight(const QuantizedWeight& quantized);

/// §5 "Error measures" between `weight` and its quantize-dequantize in `mode`: MaxMean = max over
/// output channels of mean((dq - w)^2) over the reduction axes; Frobenius = ||dq - w||_F.
/// Accumulates in double.
Result<double> quantizationError(std::span<const float> weight, const WeightLayout& layout,
                                 CompressionMode mode, int64_t groupSize, ErrorMetric metric);

/// Packs 4-bit codes two per byte, low nibble first (ONNX int4/uint4 storage); an odd count
/// leaves the last high nibble zero.
std::string packInt4(std::span<const uint8_t> codes);

/// Inverse of packInt4 for `count` codes; signed codes are sign-extended.
std::vector<uint8_t> unpackInt4(std::string_view packed, int64_t count, bool isSigned);

} // namespace qs::compression
