// Pow (ONNX since 7; mixed base/exponent types since 12): y = a^b with numpy broadcasting; the
// exponent is converted to the base's type. VJP: da = b a^(b-1), db = y ln a (a > 0).

#include "core/runtime/elementwise.h"
#include "core/runtime/parallel.h"

#include <cmath>

namespace qs::runtime {
namespace {

/// y = x * x for a float x and a one-element exponent of 2 (a LayerNorm's variance, decomposed):
/// the same floats as pow in double (the square of a float is exact in double, so both round
/// once), without pow's cost per element. An empty tensor when the fast path does not apply.
Tensor squareOf(const Tensor& x, const Tensor& exponent) {
    if (x.dtype() != graph::DataType::Float || exponent.numElements() != 1 ||
        (exponent.dtype() != graph::DataType::Float &&
         exponent.dtype() != graph::DataType::Double) ||
        castTensor(exponent, graph::DataType::Double).data<double>()[0] != 2.0) {
        return {};
    }
    Tensor y = allocateFloat(x.shape());
    const float* src = x.data<float>();
    float* dst = y.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            dst[i] = src[i] * src[i];
        }
    });
    return y;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& a = ctx.input(0);
    // With a one-element exponent of no higher rank, the output has x's shape.
    if (ctx.input(1).rank() <= a.rank()) {
        if (Tensor square = squareOf(a, ctx.input(1)); square.defined()) {
            return std::vector<Tensor>{square};
        }
    }
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
