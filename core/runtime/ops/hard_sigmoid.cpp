// HardSigmoid (ONNX since 6): y = max(0, min(1, alpha x + beta)) (alpha 0.2, beta 0.5).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const float alpha = ctx.floatAttr("alpha", 0.2F);
    const float beta = ctx.floatAttr("beta", 0.5F);
    return unaryFloatForward(ctx, [&](auto x) {
        return std::max(decltype(x)(0),
                        std::min(decltype(x)(1), decltype(x)(alpha) * x + decltype(x)(beta)));
    });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const float alpha = ctx.floatAttr("alpha", 0.2F);
    const float beta = ctx.floatAttr("beta", 0.5F);
    return unaryFloatVjp(
        ctx, outputs, outputGrads, [&]([[maybe_unused]] float x, [[maybe_unused]] float y) {
            return (alpha * x + beta > 0.0F && alpha * x + beta < 1.0F) ? alpha : 0.0F;
        });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "HardSigmoid",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = max(0, min(1, alpha x + beta)) (alpha 0.2, beta 0.5)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(hard_sigmoid, kDef)
