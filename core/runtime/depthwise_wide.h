// Depthwise convolution with AVX-512 straight on NCHW planes: sixteen outputs of a row per vector,
// each kernel tap one masked load (stride 2: two loads and one lane permute picking every other
// input) and one multiply-add, the padding and the row ends left to the load masks. Neither a
// staged copy of each plane (the AVX2 3x3 path) nor transposes into channel blocks (the blocked
// path): a MobileNetV2 forward spent more time on those than ONNX Runtime on its whole depthwise
// convolutions, which read its channel-blocked layout directly.
#pragma once

#include "core/runtime/conv_kernels.h"

namespace qs::runtime {

/// Runs depthwise `p` (one filter per channel, dilation 1, equal strides of 1 or 2, a kernel of at
/// most 7 x 7, output planes of its own) with the epilogue and its tail; false, leaving y alone,
/// for any other convolution or where the AVX-512 kernels are off (wideGemmKernelActive).
bool depthwiseConv2dWide(const Conv2d& p, const float* x, const float* w,
                         const ConvEpilogue& epilogue, float* y);

} // namespace qs::runtime
