// MaxPool with AVX-512 straight on NCHW rows, for windows 2 or 3 wide at horizontal stride 2
// (ResNet's, SqueezeNet's and ShuffleNet's pools): per output row the window's input rows are
// folded into one row held in registers (up to 9 vectors: 64 outputs, longer rows in segments of
// 64), whose even, odd and next-even columns two permutes and a lane shift take. The AVX2 kernel
// stages the folded row in memory and reduces it in a second pass: SqueezeNet's pools took it 1.8
// to 2.7 times as long, with the input already in cache.
#pragma once

#include "core/runtime/pooling.h"

namespace qs::runtime {

/// Runs the 2-D max pool `s` of float x into y where this kernel suits it (windows 2 or 3 wide
/// at horizontal stride 2, no dilation, no negative pad; any height and vertical stride) and the
/// AVX-512 kernels are on (wideGemmKernelActive); false, leaving y alone, otherwise. A NaN never
/// wins a window, as in the reference's `x > best`.
bool maxPool2dWide(const PoolShape& s, const float* x, float* y);

} // namespace qs::runtime
