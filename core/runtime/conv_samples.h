// Conv's test samples, registered with the op (OpDef::samples).
#pragma once

#include "core/runtime/op.h"

#include <random>
#include <vector>

namespace qs::runtime {

/// Conv's reference kernel, which the fused samples use to place their residual.
using ConvReference = Result<std::vector<Tensor>> (*)(const OpContext&);

/// Every kernel path of Conv: plain, strided, grouped, 1-D, deep GEMM, depthwise phases,
/// Winograd tiles, im2col layouts and the executor's fused residual + clamp form.
std::vector<OpSample> convSamples(std::mt19937& rng, ConvReference reference);

} // namespace qs::runtime
