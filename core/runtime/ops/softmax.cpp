// Softmax (ONNX since 1; per-axis since 13): y = exp(x - max) / sum exp(x - max) along the axis.
// VJP: dx = y * (dy - sum_j dy_j y_j).

#include "core/runtime/softmax_common.h"

#include <cmath>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return softmaxForward(ctx, [](float shifted, float sum) { return std::exp(shifted) / sum; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return softmaxVjp(
        ctx, outputs, outputGrads, [](double dy, float y) { return dy * y; },
        [](float dy, float y, float dot) { return y * (dy - dot); });
}

const OpDef kDef{.opType = "Softmax",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "y = exp(x - max) / sum exp(x - max) along the axis",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = softmaxSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(softmax, kDef)
