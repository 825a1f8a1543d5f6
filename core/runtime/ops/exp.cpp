// Exp (ONNX since 6): y = e^x; dy/dx = y.

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) { return std::exp(x); });
}

// Fast kernel: Eigen's vectorised array expression.
Result<std::vector<Tensor>> forwardEigen(const OpContext& ctx) {
    return unaryEigenForward(
        ctx, [](const auto& m) { return m.exp(); }, forward);
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         [&]([[maybe_unused]] float x, [[maybe_unused]] float y) { return y; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "Exp",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = e^x; dy/dx = y",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forwardEigen,
                 .reference = forward,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(exp, kDef)
