// Sum (ONNX since 8): element-wise sum of the inputs (numpy broadcasting); VJP: dy to every input.

#include "core/runtime/variadic.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return variadicForward(ctx, [](auto a, auto b) { return a + b; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return variadicVjp(ctx, outputs, outputGrads, [](float, float) { return 1.0F; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return variadicSamples(rng);
}

const OpDef kDef{.opType = "Sum",
                 .domain = "",
                 .sinceVersion = 8,
                 .doc =
                     "element-wise sum of the inputs (numpy broadcasting); VJP: dy to every input",
                 .minInputs = 1,
                 .maxInputs = 1 << 16,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(sum, kDef)
