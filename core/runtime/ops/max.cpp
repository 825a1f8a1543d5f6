// Max (ONNX since 8): element-wise maximum of the inputs (numpy broadcasting); VJP: dy to the input
// that holds the maximum.

#include "core/runtime/variadic.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        variadicForward(ctx, [](auto a, auto b) { return a > b ? a : b; }));
    if (ctx.node.opType == "Mean" && out[0].dtype() == graph::DataType::Float) {
        float* y = out[0].mutableData<float>();
        for (int64_t i = 0; i < out[0].numElements(); ++i) {
            y[i] /= static_cast<float>(ctx.numInputs());
        }
    }
    return out;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    [[maybe_unused]] const auto count = static_cast<float>(ctx.numInputs());
    return variadicVjp(
        ctx, outputs, outputGrads,
        [&]([[maybe_unused]] float x, [[maybe_unused]] float y) { return x == y ? 1.0F : 0.0F; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return variadicSamples(rng);
}

const OpDef kDef{.opType = "Max",
                 .domain = "",
                 .sinceVersion = 8,
                 .doc = "element-wise maximum of the inputs (numpy broadcasting); VJP: dy to the "
                        "input that holds the maximum",
                 .minInputs = 1,
                 .maxInputs = 1 << 16,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(max, kDef)
