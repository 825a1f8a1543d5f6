// Softmax (ONNX since 1; per-axis since 13): y = exp(x - max) / sum exp(x - max) along the axis.
// VJP: dx = y * (dy - sum_j dy_j y_j).

#include "core/runtime/parallel.h"
#include "core/runtime/softmax_common.h"

#include <cmath>
#include <limits>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(SoftmaxLayout l, softmaxLayout(ctx));
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    parallelFor(l.outer * l.inner, 8, [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const int64_t base = (row / l.inner) * l.length * l.inner + row % l.inner;
            float maxValue = -std::numeric_limits<float>::infinity();
            for (int64_t i = 0; i < l.length; ++i) {
                maxValue = std::max(maxValue, x[base + i * l.inner]);
            }
            float sum = 0.0F;
            for (int64_t i = 0; i < l.length; ++i) {
                sum += std::exp(x[base + i * l.inner] - maxValue);
            }
            for (int64_t i = 0; i < l.length; ++i) {
                const float v = x[base + i * l.inner];
                py[base + i * l.inner] = std::exp(v - maxValue) / sum;
            }
        }
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(SoftmaxLayout l, softmaxLayout(ctx));
    const float* y = outputs[0].data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = allocateFloat(ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    for (int64_t row = 0; row < l.outer * l.inner; ++row) {
        const int64_t base = (row / l.inner) * l.length * l.inner + row % l.inner;
        double dot = 0.0;
        for (int64_t i = 0; i < l.length; ++i) {
            const int64_t at = base + i * l.inner;
            dot += static_cast<double>(dy[at]) * y[at];
        }
        for (int64_t i = 0; i < l.length; ++i) {
            const int64_t at = base + i * l.inner;
            pdx[at] = y[at] * (dy[at] - static_cast<float>(dot));
        }
    }
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"last axis", {intAttribute("axis", -1)}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}},
        {"axis 1", {intAttribute("axis", 1)}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}},
    };
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
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(softmax, kDef)
