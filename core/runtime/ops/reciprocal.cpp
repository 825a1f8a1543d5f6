// Reciprocal (ONNX since 6): y = 1 / x; dy/dx = -y^2.

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) { return decltype(x)(1) / x; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(
        ctx, outputs, outputGrads,
        [&]([[maybe_unused]] float x, [[maybe_unused]] float y) { return -y * y; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, 0.5F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "Reciprocal",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = 1 / x; dy/dx = -y^2",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reciprocal, kDef)
