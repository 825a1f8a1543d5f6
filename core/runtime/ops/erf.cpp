// Erf (ONNX since 9): y = erf(x); dy/dx = 2/sqrt(pi) exp(-x^2).

#include "core/runtime/elementwise.h"

#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) { return std::erf(x); });
}

// Fast kernel: Eigen's vectorised erf (a rational approximation, within 4e-7); GELU
// runs it on every hidden activation of a transformer.
Result<std::vector<Tensor>> forwardEigen(const OpContext& ctx) {
    // Clamped: near |x| = 4 the approximation overshoots 1 by two ulps.
    return unaryEigenForward(
        ctx, [](const auto& m) { return m.erf().min(1.0F).max(-1.0F); }, forward);
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         [&]([[maybe_unused]] float x, [[maybe_unused]] float y) {
                             return 1.1283791670955126F * std::exp(-x * x);
                         });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "Erf",
                 .domain = "",
                 .sinceVersion = 9,
                 .doc = "y = erf(x); dy/dx = 2/sqrt(pi) exp(-x^2)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forwardEigen,
                 .reference = forward,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(erf, kDef)
