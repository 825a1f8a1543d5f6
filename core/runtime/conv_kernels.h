// Direct convolution kernels and the epilogue they share: a depthwise 2-D convolution (3x3 with
// stride 1 or 2 as one masked vector pass over whole output rows, other shapes over a zero-padded,
// stride-deinterleaved copy of each input plane, so every kernel tap is a contiguous, vectorisable
// run), the input gradient of the 3x3 stride-2 one, and the epilogue
// y = clamp(acc + bias + residual, lo, hi) that lets the executor fuse a following Relu/Clip (and a
// residual Add) into the convolution instead of running them as separate passes over memory.
#pragma once

#include "core/runtime/fused_tail.h"
#include "core/runtime/im2col.h"

#include <cstdint>
#include <limits>
#include <string_view>

namespace qs::runtime {

/// Attributes the executor sets on its private copy of a Conv node when it fuses a following
/// activation (Relu: min 0; Clip: its bounds). A fused residual Add arrives as input 3.
inline constexpr std::string_view kFusedMinAttr = "qs_fused_min";
inline constexpr std::string_view kFusedMaxAttr = "qs_fused_max";

/// What happens to each accumulated output value before it is stored.
struct ConvEpilogue {
    const float* bias = nullptr;     ///< per output channel, or nullptr
    const float* residual = nullptr; ///< same layout as the output, or nullptr
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    /// The executor's fused element-wise tail, run after the above on each finished piece of the
    /// output while it is in cache (nullptr or empty for none). The GEMM and depthwise paths run
    /// it; the caller runs it over the whole output after any other kernel.
    const FusedTail* tail = nullptr;
};

/// Whether `e` carries a tail with steps.
inline bool hasTail(const ConvEpilogue& e) {
    return e.tail != nullptr && !e.tail->empty();
}

/// Applies the epilogue in place to `rows` output channels starting at `channel0`, each holding
/// pixels [p0, p1) at `y + row * ld` (the residual uses the same offsets).
void applyEpilogue(const ConvEpilogue& epilogue, int64_t channel0, int64_t rows, int64_t ld,
                   int64_t p0, int64_t p1, float* y, const float* residual);

/// Depthwise convolution (one filter per channel) of every image and channel, epilogue (and its
/// tail, on each block of output planes) included; the AVX-512 row kernel (depthwise_wide.h) takes
/// the shapes it suits where the processor has it.
void depthwiseConv2d(const Conv2d& p, const float* x, const float* w, const ConvEpilogue& epilogue,
                     float* y);

/// dx of a 3x3, stride-2, dilation-1 depthwise convolution with begin pads of 0 or 1, written
/// over dx (y = conv(x) of p, dy of y's shape); false, leaving dx alone, for any other geometry.
bool depthwiseInputGradStride2(const Conv2d& p, const float* w, const float* dy, float* dx);

} // namespace qs::runtime
