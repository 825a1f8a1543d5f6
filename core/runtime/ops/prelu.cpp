// PRelu (ONNX since 6): y = x for x >= 0, slope * x otherwise, slope broadcast to x
// (unidirectionally; before opset 7 a [C] slope is per channel, axis 1). VJP: dx = dy (1 or slope),
// dslope = dy x where x < 0.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

// Before opset 7 PRelu named no broadcasting rule, and exporters (PyTorch) wrote a per-channel
// slope of shape [C] for x of shape [N, C, ...]: it applies along axis 1, so it is viewed as
// [C, 1, ...] for numpy broadcasting.
std::vector<Tensor> broadcastableInputs(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& slope = ctx.input(1);
    if (ctx.opset < 7 && slope.rank() == 1 && x.rank() > 2 && slope.dim(0) == x.dim(1)) {
        Shape perChannel(x.rank() - 1, 1);
        perChannel[0] = slope.dim(0);
        return {x, slope.reshaped(perChannel)};
    }
    return {x, slope};
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    const std::vector<Tensor> inputs = broadcastableInputs(ctx);
    const OpContext view{ctx.node, inputs, ctx.opset, ctx.gradMask};
    return broadcastForward<false>(view, [](auto x, auto slope) { return x >= 0 ? x : slope * x; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const std::vector<Tensor> inputs = broadcastableInputs(ctx);
    const OpContext view{ctx.node, inputs, ctx.opset, ctx.gradMask};
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> grads,
                        broadcastVjp(
                            view, outputs, outputGrads,
                            [](float x, float slope, float) { return x > 0 ? 1.0F : slope; },
                            [](float x, float, float) { return x > 0 ? 0.0F : x; }));
    grads[1] = grads[1].reshaped(ctx.input(1).shape());
    return grads;
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
