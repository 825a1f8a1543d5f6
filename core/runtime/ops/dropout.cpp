// Dropout (ONNX since 7, inference): y = x; the optional mask output is all true. training_mode
// (input 2) must be false unless the ratio is 0. VJP: dx = dy.

#include "core/runtime/op_util.h"

#include <cstring>

namespace qs::runtime {
namespace {

// The drop ratio: input 1 since opset 12, the `ratio` attribute before (default 0.5).
double dropRatio(const OpContext& ctx) {
    return ctx.has(1) ? ctx.input(1).elementAsDouble(0)
                      : static_cast<double>(ctx.floatAttr("ratio", 0.5F));
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const bool training = ctx.has(2) && ctx.input(2).elementAsDouble(0) != 0.0;
    // In training mode with ratio 0 nothing is dropped and the specification makes y = x exactly;
    // any other ratio draws a random mask, which an inference executor does not do.
    if (training && dropRatio(ctx) != 0.0) {
        return ctx.error(Errc::Unsupported,
                         "training_mode = true with ratio > 0 draws a random mask: inference only");
    }
    std::vector<Tensor> outputs{ctx.input(0)};
    if (ctx.node.outputs.size() > 1) {
        Tensor mask = Tensor::allocate(graph::DataType::Bool, ctx.input(0).shape());
        std::memset(mask.mutableRawData(), 1, mask.byteSize());
        outputs.push_back(mask);
    }
    return outputs;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    return viewVjp(ctx, outputGrads);
}

std::vector<OpSample> samples(std::mt19937& rng) {
    Tensor ratio = Tensor::scalar<float>(0.0F);
    Tensor training = Tensor::scalar<bool>(true);
    return {{"2x3", {}, {randomTensor(rng, {2, 3})}, {}},
            {"training with ratio 0", {}, {randomTensor(rng, {2, 3}), ratio, training}, {0}}};
}

const OpDef kDef{.opType = "Dropout",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "y = x",
                 .minInputs = 1,
                 .maxInputs = 3,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(dropout, kDef)
