// Add (ONNX since 7): a + b with numpy broadcasting.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

// One broadcasting loop serves as both reference and kernel: the inner loop is contiguous and
// the compiler vectorises it.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return broadcastForward<false>(ctx, [](auto a, auto b) { return a + b; });
}

// VJP: both inputs get dy, summed over the axes they were broadcast along; an input of the
// output's shape shares dy itself (a residual Add passes megabytes through unchanged).
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    const Tensor& dy = outputGrads[0];
    if (dy.dtype() != graph::DataType::Float) {
        return ctx.error(Errc::Unsupported, "gradients need float values");
    }
    std::vector<Tensor> grads(ctx.numInputs());
    for (size_t i = 0; i < 2; ++i) {
        if (!ctx.wantsGrad(i)) {
            continue;
        }
        grads[i] = reduceToShape(dy, ctx.input(i).shape());
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return binarySamples(rng, -1.0F, 1.0F);
}

const OpDef kDef{.opType = "Add",
                 .domain = "",
                 .sinceVersion = 7,
                 .doc = "a + b with numpy broadcasting",
                 .minInputs = 2,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(add, kDef)
