// Softmax (ONNX since 1; per-axis since 13): y = exp(x - max) / sum exp(x - max) along the axis.
// VJP: dx = y * (dy - sum_j dy_j y_j).

#include "core/runtime/softmax_common.h"

#include <Eigen/Core>

#include <cmath>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const SoftmaxLayout l, softmaxLayout(ctx));
    if (l.inner != 1 || l.length == 0) {
        return softmaxForward(ctx,
                              [](float shifted, float sum) { return std::exp(shifted) / sum; });
    }
    // Contiguous rows (the attention case, axis -1): Eigen's vectorised exp, once per element
    // into y, then one scale. The strided loop calls std::exp twice per element.
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    const int64_t length = l.length;
    parallelFor(l.outer, minChunkForWork(4 * length, 8), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const Eigen::Map<const Eigen::ArrayXf> in(x + row * length, length);
            Eigen::Map<Eigen::ArrayXf> out(py + row * length, length);
            out = (in - in.maxCoeff()).exp();
            out *= 1.0F / out.sum();
        }
    });
    return std::vector<Tensor>{y};
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
