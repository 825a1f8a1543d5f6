// Identity (ONNX since 1): y = x, sharing storage. VJP: dx = dy.

#include "core/runtime/op_util.h"

#include <cstring>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    std::vector<Tensor> outputs{ctx.input(0)};
    if (ctx.node.opType == "Dropout") {
        if (ctx.has(2) && ctx.input(2).elementAsDouble(0) != 0.0) {
            return ctx.error(Errc::Unsupported, "training_mode = true is not supported");
        }
        if (ctx.node.outputs.size() > 1) {
            Tensor mask = Tensor::allocate(graph::DataType::Bool, ctx.input(0).shape());
            std::memset(mask.mutableRawData(), 1, mask.byteSize());
            outputs.push_back(mask);
        }
    }
    return outputs;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    return viewVjp(ctx, outputGrads);
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3", {}, {randomTensor(rng, {2, 3})}, {}}};
}

const OpDef kDef{.opType = "Identity",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "y = x",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(identity, kDef)
