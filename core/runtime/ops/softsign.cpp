// Softsign (ONNX since 1): y = x / (1 + |x|); dy/dx = 1 / (1 + |x|)^2.

#include "core/runtime/elementwise.h"

#include <cmath>

namespace qs::runtime {
namespace {

// Reference kernel: one scalar function per element.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return unaryFloatForward(ctx, [&](auto x) { return x / (decltype(x)(1) + std::abs(x)); });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         [&]([[maybe_unused]] float x, [[maybe_unused]] float y) {
                             return 1.0F / ((1.0F + std::abs(x)) * (1.0F + std::abs(x)));
                         });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}}};
}

const OpDef kDef{.opType = "Softsign",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "y = x / (1 + |x|); dy/dx = 1 / (1 + |x|)^2",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(softsign, kDef)
