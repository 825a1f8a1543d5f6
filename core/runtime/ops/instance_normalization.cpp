// InstanceNormalization (ONNX since 6): normalises each (n, c) plane over its spatial positions,
// then y = xhat * scale[c] + bias[c]. See normalization.h for the VJP.

#include "core/runtime/normalization.h"

namespace qs::runtime {
namespace {

Result<NormLayout> layout(const OpContext& ctx) {
    for (size_t i = 0; i < 3; ++i) {
        QS_TRY(requireFloat(ctx, i));
    }
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3 || ctx.input(1).numElements() != x.dim(1) ||
        ctx.input(2).numElements() != x.dim(1)) {
        return ctx.error(Errc::InvalidModel, "needs x [N, C, ...] with scale and bias of size C");
    }
    NormLayout l;
    const int64_t channels = x.dim(1);
    l.groups = x.dim(0) * channels;
    l.groupSize = x.numElements() / std::max<int64_t>(l.groups, 1);
    l.paramIndex = [channels](int64_t g, int64_t) { return g % channels; };
    return l;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(NormLayout l, layout(ctx));
    Tensor y = allocateFloat(ctx.input(0).shape());
    normalizeForward(l, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                     ctx.input(2).data<float>(), ctx.floatAttr("epsilon", 1e-5F),
                     y.mutableData<float>(), nullptr, nullptr);
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(NormLayout l, layout(ctx));
    Tensor dx = allocateFloat(ctx.input(0).shape());
    Tensor dscale = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    Tensor dbias = Tensor::zeros(graph::DataType::Float, ctx.input(2).shape());
    normalizeBackward(l, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                      ctx.floatAttr("epsilon", 1e-5F), outputGrads[0].data<float>(),
                      dx.mutableData<float>(), dscale.mutableData<float>(),
                      dbias.mutableData<float>());
    return std::vector<Tensor>{dx, dscale, dbias};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4",
             {},
             {randomTensor(rng, {2, 3, 4}), randomTensor(rng, {3}), randomTensor(rng, {3})},
             {}}};
}

const OpDef kInstanceNormalization{.opType = "InstanceNormalization",
                                   .domain = "",
                                   .sinceVersion = 6,
                                   .doc = "normalise each channel plane",
                                   .minInputs = 3,
                                   .maxInputs = 3,
                                   .forward = forward,
                                   .reference = nullptr,
                                   .vjp = vjp,
                                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(instance_normalization, kInstanceNormalization)
