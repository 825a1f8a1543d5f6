// Depthwise convolution with AVX-512 straight on NCHW planes (wide_rows.h): sixteen outputs of a
// row per vector, each input row loaded once per chunk of them and every kernel column a lane
// shift of it (at stride 2, of its even and odd columns), four output rows at a time. Neither a
// staged copy of each plane (the AVX2 3x3 path at stride 2) nor transposes into channel blocks
// (the blocked path on small planes): MobileNetV2's stride-2 layers spent more time on those than
// ONNX Runtime on the whole convolutions, which read its channel-blocked layout directly.
#pragma once

#include "core/runtime/conv_kernels.h"

namespace qs::runtime {

/// Runs depthwise `p` with the epilogue and its tail where this kernel suits it (dilation 1, a
/// square 3x3 or 5x5 kernel, equal strides: every stride-2 one; at stride 1 rows of 8 to 15
/// outputs, and 5x5 ones on longer rows; output planes of its own) and the AVX-512 kernels are on
/// (wideGemmKernelActive); false, leaving y alone, otherwise.
bool depthwiseConv2dWide(const Conv2d& p, const float* x, const float* w,
                         const ConvEpilogue& epilogue, float* y);

} // namespace qs::runtime
