// LeakyRelu (ONNX since 6): y = x for x >= 0, alpha x otherwise (alpha = 0.01).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const float alpha = ctx.floatAttr("alpha", 0.01F);
    return unaryFloatForward(ctx, [&](auto x) { return x >= 0 ? x : alpha * x; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const float alpha = ctx.floatAttr("alpha", 0.01F);
    return unaryFloatVjp(
        ctx, outputs, outputGrads,
        [&]([[maybe_unused]] float x, [[maybe_unused]] float y) { return x > 0 ? 1.0F : alpha; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomAwayFromZero(rng, {2, 3, 4})}, {}}};
}

const OpDef kDef{.opType = "LeakyRelu",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = x for x >= 0, alpha x otherwise (alpha = 0.01)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(leaky_relu, kDef)
