// HardSwish (ONNX since 14): y = x max(0, min(1, x / 6 + 1 / 2)) (MobileNetV3's h-swish).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) {
        return x * std::max(decltype(x)(0),
                            std::min(decltype(x)(1), x / decltype(x)(6) + decltype(x)(0.5)));
    });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         [&]([[maybe_unused]] float x, [[maybe_unused]] float y) {
                             return x < -3.0F ? 0.0F : (x > 3.0F ? 1.0F : (2.0F * x + 3.0F) / 6.0F);
                         });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, -5.0F, 5.0F)}, {}}};
}

const OpDef kDef{.opType = "HardSwish",
                 .domain = "",
                 .sinceVersion = 14,
                 .doc = "y = x max(0, min(1, x / 6 + 1 / 2)) (MobileNetV3's h-swish)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(hard_swish, kDef)
