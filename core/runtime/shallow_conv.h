// Convolutions of shallow depth (few input channels times kernel taps: a network's stem,
// SqueezeNet's first 3 x 3 expand layers) straight from im2col's padded copy of the image, without
// the packed GEMM's strips or Winograd's transforms: sixteen output pixels per vector (of one
// output row, or at stride 1 sweeping across rows and dropping the padding columns between them),
// a block of six output channels times four vectors summed in registers over the im2col rows,
// each weight broadcast once per block. At such depths packing strips or transforming tiles
// weighs against few multiply-adds per output: on one thread ResNet-18's 7 x 7 stem took 1.70
// instead of 1.97 ms, MobileNetV2's 3 x 3 stride-2 stem 0.28 instead of 0.34 (ONNX Runtime runs
// such layers as direct convolutions too).
#pragma once

#include "core/runtime/conv_kernels.h"
#include "core/runtime/im2col.h"

namespace qs::runtime {

/// Whether shallowConv2d runs `p`: one group, a kernel of more than one tap, at most
/// kShallowConvMaxDepth im2col rows (input channels x taps), and the AVX-512 kernels on
/// (wideGemmKernelActive). Decided from the weights' shape and the attributes alone, as the
/// executor's weight packing decides.
bool shallowConvApplies(const Conv2d& p);

/// Im2col rows up to which shallowConvApplies.
inline constexpr int64_t kShallowConvMaxDepth = 160;

/// Runs `p` on images x (n x c x h x w) with weights w (m x colRows(), as the model holds them),
/// the epilogue and its tail included, into y (p.yImageStride honoured). Only where
/// shallowConvApplies.
void shallowConv2d(const Conv2d& p, const float* x, const float* w, const ConvEpilogue& epilogue,
                   float* y);

} // namespace qs::runtime
