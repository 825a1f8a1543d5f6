// LayerNormalization (ONNX since 17): normalises over the dims from `axis` (default -1) to the
// end, then y = xhat * scale + bias with scale/bias over those dims. Optional outputs Mean and
// InvStdDev have the reduced dims kept as 1. See normalization.h for the VJP.

#include "core/runtime/normalization.h"
#include "core/runtime/parallel.h"
#include "core/runtime/sum_of_squares.h"

#include <algorithm>
#include <cmath>

namespace qs::runtime {
namespace {

Result<NormLayout> layout(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    if (ctx.has(2)) {
        QS_TRY(requireFloat(ctx, 2));
    }
    const Shape& shape = ctx.input(0).shape();
    QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(ctx.intAttr("axis", -1),
                                                          static_cast<int64_t>(shape.size()), ctx));
    NormLayout l;
    l.groupSize = 1;
    for (size_t d = static_cast<size_t>(axis); d < shape.size(); ++d) {
        l.groupSize *= shape[d];
    }
    l.groups = ctx.input(0).numElements() / std::max<int64_t>(l.groupSize, 1);
    const int64_t scaleSize = ctx.input(1).numElements();
    if (scaleSize != l.groupSize && scaleSize != 1) {
        return ctx.error(Errc::Unsupported, "scale must cover the normalised dims exactly");
    }
    l.paramIndex = [scaleSize](int64_t, int64_t i) { return scaleSize == 1 ? 0 : i; };
    return l;
}

/// normalizeForward for groups of contiguous elements with scale and bias (when given) of the
/// group's size or of one element: the mean and the variance about it in double lanes
/// (sum_of_squares.h), y in float lanes, groups on the threads. normalizeForward's one chain of
/// dependent double adds per element and a std::function call per parameter made a
/// [32, 128] LayerNormalization cost as much as the nine ops of its decomposed form.
void normalizeGroups(const NormLayout& l, const float* x, const float* scale, int64_t scaleSize,
                     const float* bias, float eps, float* y, float* meanOut, float* invStdOut) {
    const int64_t n = l.groupSize;
    parallelFor(l.groups, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)),
                [&](int64_t begin, int64_t end) {
                    for (int64_t g = begin; g < end; ++g) {
                        const float* xg = x + g * n;
                        const double mean = sumInDouble(xg, n) / static_cast<double>(n);
                        const double variance =
                            sumOfSquaredDeviations(xg, n, mean) / static_cast<double>(n);
                        const double invStd = 1.0 / std::sqrt(variance + eps);
                        if (meanOut != nullptr) {
                            meanOut[g] = static_cast<float>(mean);
                            invStdOut[g] = static_cast<float>(invStd);
                        }
                        const auto m = static_cast<float>(mean);
                        const auto r = static_cast<float>(invStd);
                        float* yg = y + g * n;
                        if (scaleSize == n && bias != nullptr) {
                            for (int64_t i = 0; i < n; ++i) {
                                yg[i] = (xg[i] - m) * r * scale[i] + bias[i];
                            }
                            continue;
                        }
                        for (int64_t i = 0; i < n; ++i) {
                            const int64_t p = scaleSize == n ? i : 0;
                            yg[i] = (xg[i] - m) * r * scale[p] + (bias != nullptr ? bias[p] : 0.0F);
                        }
                    }
                });
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(NormLayout l, layout(ctx));
    const Shape& shape = ctx.input(0).shape();
    Tensor y = allocateFloat(shape);
    Shape statShape = shape;
    const auto axis = static_cast<size_t>(
        normalizeAxis(ctx.intAttr("axis", -1), static_cast<int64_t>(shape.size()), ctx).value());
    std::fill(statShape.begin() + static_cast<std::ptrdiff_t>(axis), statShape.end(), 1);
    // Mean and InvStdDev only when the node declares them (the VJP covers Y alone).
    const bool stats = ctx.node.outputs.size() > 1;
    Tensor mean = stats ? allocateFloat(statShape) : Tensor();
    Tensor invStd = stats ? allocateFloat(statShape) : Tensor();
    const bool biasFits = !ctx.has(2) || ctx.input(2).numElements() == ctx.input(1).numElements();
    if (!biasFits) {
        return ctx.error(Errc::Unsupported, "bias must have the scale's size");
    }
    normalizeGroups(l, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                    ctx.input(1).numElements(), ctx.has(2) ? ctx.input(2).data<float>() : nullptr,
                    ctx.floatAttr("epsilon", 1e-5F), y.mutableData<float>(),
                    stats ? mean.mutableData<float>() : nullptr,
                    stats ? invStd.mutableData<float>() : nullptr);
    std::vector<Tensor> outputs{y, mean, invStd};
    outputs.resize(std::clamp<size_t>(ctx.node.outputs.size(), 1, 3));
    return outputs;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(NormLayout l, layout(ctx));
    Tensor dx = allocateFloat(ctx.input(0).shape());
    Tensor dscale = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    Tensor dbias = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    normalizeBackward(l, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                      ctx.floatAttr("epsilon", 1e-5F), outputGrads[0].data<float>(),
                      dx.mutableData<float>(), dscale.mutableData<float>(),
                      dbias.mutableData<float>());
    std::vector<Tensor> grads{dx, dscale};
    if (ctx.has(2)) {
        grads.push_back(dbias.reshaped(ctx.input(2).shape()));
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"axis -1",
             {},
             {randomTensor(rng, {2, 3, 4}), randomTensor(rng, {4}), randomTensor(rng, {4})},
             {}},
            {"axis 1",
             {intAttribute("axis", 1)},
             {randomTensor(rng, {2, 3, 2}), randomTensor(rng, {3, 2}), randomTensor(rng, {3, 2})},
             {}}};
}

const OpDef kLayerNormalization{.opType = "LayerNormalization",
                                .domain = "",
                                .sinceVersion = 17,
                                .doc = "normalise over the trailing dims",
                                .minInputs = 2,
                                .maxInputs = 3,
                                .forward = forward,
                                .reference = nullptr,
                                .vjp = vjp,
                                .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(layer_normalization, kLayerNormalization)
