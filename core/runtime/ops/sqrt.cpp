// Sqrt (ONNX since 6): y = sqrt(x); dy/dx = 1 / (2 y).

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) { return std::sqrt(x); });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(
        ctx, outputs, outputGrads,
        [&]([[maybe_unused]] float x, [[maybe_unused]] float y) { return 0.5F / y; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, 0.5F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "Sqrt",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = sqrt(x); dy/dx = 1 / (2 y)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(sqrt, kDef)
