// Min (ONNX since 8): element-wise minimum of the inputs (numpy broadcasting); VJP: dy to the input
// that holds the minimum.

#include "core/runtime/variadic.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return variadicForward(ctx, [](auto a, auto b) { return a < b ? a : b; });
}

// dy goes to every input that holds the extremum.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return variadicVjp(ctx, outputs, outputGrads,
                       [](float x, float y) { return x == y ? 1.0F : 0.0F; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return variadicSamples(rng);
}

const OpDef kDef{.opType = "Min",
                 .domain = "",
                 .sinceVersion = 8,
                 .doc = "element-wise minimum of the inputs (numpy broadcasting); VJP: dy to the "
                        "input that holds the minimum",
                 .minInputs = 1,
                 .maxInputs = 1 << 16,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(min, kDef)
