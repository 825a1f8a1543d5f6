// Identity (ONNX since 1): y = x, sharing storage. VJP: dx = dy.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return std::vector<Tensor>{ctx.input(0)};
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
