// Gelu (ONNX since 20): approximate = "none": y = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2;
// approximate = "tanh": y = x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2 (Hendrycks and
// Gimpel, 2016). VJP: the derivative of the chosen form.

#include "core/runtime/elementwise.h"

#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>

namespace qs::runtime {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

bool useTanh(const OpContext& ctx) {
    return ctx.stringAttr("approximate", "none") == "tanh";
}

// Reference kernel: one scalar function per element, in double.
Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    if (useTanh(ctx)) {
        return unaryFloatForward(ctx, [](auto x) {
            const double v = static_cast<double>(x);
            return 0.5 * v * (1.0 + std::tanh(kSqrt2OverPi * (v + 0.044715 * v * v * v)));
        });
    }
    return unaryFloatForward(ctx, [](auto x) {
        const double v = static_cast<double>(x);
        return 0.5 * v * (1.0 + std::erf(v * kInvSqrt2));
    });
}

// Fast kernel (approximate = "none"): x (1 + erf(x / sqrt 2)) / 2 in float lanes with Eigen's
// vectorised erf, as the Erf op computes it; the executor runs PyTorch's decomposed GELU (Div,
// Erf, Add, Mul, Mul) through it (gelu_fusion.h).
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    if (useTanh(ctx)) {
        return reference(ctx);
    }
    return unaryEigenForward(
        ctx,
        [](const auto& m) {
            const auto inner = (m * static_cast<float>(kInvSqrt2)).erf().min(1.0F).max(-1.0F);
            return m * (inner + 1.0F) * 0.5F;
        },
        reference);
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    if (useTanh(ctx)) {
        return unaryFloatVjp(ctx, outputs, outputGrads, [](float x, float) {
            const double v = x;
            const double inner = kSqrt2OverPi * (v + 0.044715 * v * v * v);
            const double t = std::tanh(inner);
            const double dInner = kSqrt2OverPi * (1.0 + 3.0 * 0.044715 * v * v);
            return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * dInner;
        });
    }
    return unaryFloatVjp(ctx, outputs, outputGrads, [](float x, float) {
        const double v = x;
        return 0.5 * (1.0 + std::erf(v * kInvSqrt2)) + v * kInvSqrt2Pi * std::exp(-0.5 * v * v);
    });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"erf", {}, {randomTensor(rng, {2, 5}, -3.0F, 3.0F)}, {}},
            {"tanh",
             {stringAttribute("approximate", "tanh")},
             {randomTensor(rng, {2, 5}, -3.0F, 3.0F)},
             {}}};
}

const OpDef kGelu{.opType = "Gelu",
                  .domain = "",
                  .sinceVersion = 20,
                  .doc = "Gaussian error linear unit",
                  .minInputs = 1,
                  .maxInputs = 1,
                  .forward = forward,
                  .reference = reference,
                  .vjp = vjp,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(gelu, kGelu)
