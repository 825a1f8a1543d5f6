// Expand (ONNX since 8): broadcast x to broadcast(x.shape, shape) (numpy rules, either side may
// be 1). The forward is one strided copy, broadcast axes read with stride 0 (as Tile); the index
// map is its reference. VJP: dy summed back to x's shape.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    auto plan = makeBroadcastPlan({ctx.input(0).shape(), toInt64Vector(ctx.input(1))});
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    outShape = plan->outShape;
    auto full = makeBroadcastPlan({outShape, ctx.input(0).shape()});
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachBroadcast(
        *full, [&](int64_t i, const int64_t* off) { index[static_cast<size_t>(i)] = off[1]; });
    return index;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    auto plan = makeBroadcastPlan({x.shape(), toInt64Vector(ctx.input(1))});
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    const Shape& outShape = plan->outShape;
    StridedCopy copy{outShape, std::vector<int64_t>(outShape.size(), 0), stridesOf(outShape)};
    // x's dims align with the output's last ones; a dim of 1 (or a missing one) repeats.
    const std::vector<int64_t> inStrides = stridesOf(x.shape());
    const size_t lead = outShape.size() - x.shape().size();
    for (size_t d = 0; d < x.shape().size(); ++d) {
        if (x.shape()[d] != 1) {
            copy.srcStrides[lead + d] = inStrides[d];
        }
    }
    Tensor y = Tensor::allocate(x.dtype(), outShape);
    copyStrided(x.rawData(), y.mutableRawData(), runtimeElementSize(x.dtype()), copy);
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    return std::vector<Tensor>{reduceToShape(outputGrads[0], ctx.input(0).shape()), Tensor()};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"3x1 to 2x3x4", {}, {randomTensor(rng, {3, 1}), int64Tensor<int>({2, 1, 4})}, {0}},
            {"2x1x5 to 3x2x4x5 (shape smaller than x along dim 0)",
             {},
             {randomTensor(rng, {2, 1, 5}), int64Tensor<int>({3, 1, 4, 1})},
             {0}}};
}

const OpDef kExpand{.opType = "Expand",
                    .domain = "",
                    .sinceVersion = 8,
                    .doc = "broadcast to a shape",
                    .minInputs = 2,
                    .maxInputs = 2,
                    .forward = forward,
                    .reference = gatherForward<indexMap>,
                    .vjp = vjp,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(expand, kExpand)
