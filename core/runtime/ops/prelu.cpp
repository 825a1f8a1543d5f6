// PRelu (ONNX since 9): y = x for x >= 0, slope * x otherwise, slope broadcast to x
// (unidirectionally). VJP: dx = dy (1 or slope), dslope = dy x where x < 0.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    return broadcastForward<false>(ctx, [](auto x, auto slope) { return x >= 0 ? x : slope * x; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return broadcastVjp(
        ctx, outputs, outputGrads, [](float x, float slope, float) { return x > 0 ? 1.0F : slope; },
        [](float x, float, float) { return x > 0 ? 0.0F : x; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"per channel", {}, {randomAwayFromZero(rng, {2, 3, 4}), randomTensor(rng, {3, 1})}, {}}};
}

const OpDef kPRelu{.opType = "PRelu",
                   .domain = "",
                   .sinceVersion = 9,
                   .doc = "leaky relu with a learned slope",
                   .minInputs = 2,
                   .maxInputs = 2,
                   .forward = forward,
                   .reference = nullptr,
                   .vjp = vjp,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(prelu, kPRelu)
