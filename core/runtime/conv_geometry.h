// Window geometry shared by Conv, ConvTranspose, MaxPool and AveragePool: kernel size, strides,
// dilations and pads per spatial axis, resolving auto_pad (SAME_UPPER/SAME_LOWER/VALID) and
// ceil_mode as the ONNX operator specification defines them.
#pragma once

#include "core/runtime/op.h"

#include <vector>

namespace qs::runtime {

struct ConvGeometry {
    std::vector<int64_t> input;  ///< spatial input sizes
    std::vector<int64_t> kernel; ///< spatial kernel sizes
    std::vector<int64_t> strides;
    std::vector<int64_t> dilations;
    std::vector<int64_t> padsBegin;
    std::vector<int64_t> padsEnd;
    std::vector<int64_t> output; ///< spatial output sizes

    size_t rank() const { return input.size(); }
};

/// Geometry of a sliding window over `inputSpatial` with `kernel` (from the weight or from
/// kernel_shape). Reads strides, dilations, pads and auto_pad from the node; ceil_mode applies to
/// pooling: out = ceil((in + pads - dk) / s) + 1, dropping a last window that would start in the
/// end padding (the rule PyTorch and ONNX Runtime use).
Result<ConvGeometry> convGeometry(const OpContext& ctx, const std::vector<int64_t>& inputSpatial,
                                  const std::vector<int64_t>& kernel, bool ceilMode = false);

} // namespace qs::runtime
