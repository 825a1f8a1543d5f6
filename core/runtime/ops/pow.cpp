// Pow (ONNX since 7; mixed base/exponent types since 12): y = a^b with numpy broadcasting; the
// exponent is converted to the base's type. VJP: da = b a^(b-1), db = y ln a (a > 0).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor b = castTensor(ctx.input(1), a.dtype());
    std::vector<Tensor> inputs{a, b};
    const OpContext same{ctx.node, inputs, ctx.opset, ctx.gradMask};
    return broadcastForward<false>(same, [](auto x, auto y) {
        return static_cast<decltype(x)>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return broadcastVjp(
        ctx, outputs, outputGrads,
        [](float a, float b, float) { return b * std::pow(a, b - 1.0F); },
        [](float a, float, float y) { return a > 0.0F ? y * std::log(a) : 0.0F; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return binarySamples(rng, 0.5F, 2.0F);
}

const OpDef kPow{.opType = "Pow",
                 .domain = "",
                 .sinceVersion = 7,
                 .doc = "a^b with broadcasting",
                 .minInputs = 2,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(pow, kPow)
