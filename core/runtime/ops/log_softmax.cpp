// LogSoftmax (ONNX since 1; per-axis since 13): y = x - max - log sum exp(x - max) along the axis.
// VJP: dx = dy - exp(y) * sum_j dy_j.

#include "core/runtime/softmax_common.h"

#include <cmath>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return softmaxForward(ctx, [](float shifted, float sum) { return shifted - std::log(sum); });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return softmaxVjp(
        ctx, outputs, outputGrads, [](double dy, float) { return dy; },
        [](float dy, float y, float dot) { return dy - std::exp(y) * dot; });
}

const OpDef kDef{.opType = "LogSoftmax",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "y = x - max - log sum exp(x - max) along the axis",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = softmaxSamples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(log_softmax, kDef)
