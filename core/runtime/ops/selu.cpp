// Selu (ONNX since 6): y = gamma (x for x > 0, alpha (e^x - 1) otherwise).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const float alpha = ctx.floatAttr("alpha", 1.67326319217681884765625F);
    const float gamma = ctx.floatAttr("gamma", 1.05070102214813232421875F);
    return unaryFloatForward(ctx, [&](auto x) {
        return x > 0 ? decltype(x)(gamma) * x
                     : decltype(x)(gamma * alpha) * (std::exp(x) - decltype(x)(1));
    });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const float alpha = ctx.floatAttr("alpha", 1.67326319217681884765625F);
    const float gamma = ctx.floatAttr("gamma", 1.05070102214813232421875F);
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         [&]([[maybe_unused]] float x, [[maybe_unused]] float y) {
                             return x > 0 ? gamma : y + gamma * alpha;
                         });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomAwayFromZero(rng, {2, 3, 4})}, {}}};
}

const OpDef kDef{.opType = "Selu",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = gamma (x for x > 0, alpha (e^x - 1) otherwise)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(selu, kDef)
