// Pad (ONNX since 2; pads/constant_value as inputs since 11, axes since 18): pads [begin...,
// end...] per dim (negative pads crop) in mode constant (value), reflect (mirror without the edge)
// or edge (repeat the edge). VJP: dy gathered back through the same index map.

#include "core/runtime/index_map.h"

#include <algorithm>

namespace qs::runtime {
namespace {

/// The pads of every dim (begin and the output shape) and the mode.
struct PadPlan {
    std::vector<int64_t> begin;
    Shape outShape;
    std::string mode;
};

/// The padded axes: input 3 (opset 18), every axis otherwise.
std::vector<int64_t> paddedAxes(const OpContext& ctx, bool legacy, size_t rank) {
    if (!legacy && ctx.has(3)) {
        return toInt64Vector(ctx.input(3));
    }
    std::vector<int64_t> axes(rank);
    for (size_t d = 0; d < rank; ++d) {
        axes[d] = static_cast<int64_t>(d);
    }
    return axes;
}

Result<PadPlan> readPads(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const size_t rank = shape.size();
    const bool legacy = ctx.hasAttr("pads");
    const std::vector<int64_t> given = legacy ? ctx.intsAttr("pads") : toInt64Vector(ctx.input(1));
    const std::vector<int64_t> axes = paddedAxes(ctx, legacy, rank);
    if (given.size() != 2 * axes.size()) {
        return ctx.error(Errc::InvalidModel, "pads must have two entries per padded axis");
    }
    PadPlan plan;
    plan.begin.assign(rank, 0);
    plan.outShape = shape;
    for (size_t i = 0; i < axes.size(); ++i) {
        QS_ASSIGN_OR_RETURN(const int64_t axis,
                            normalizeAxis(axes[i], static_cast<int64_t>(rank), ctx));
        const auto a = static_cast<size_t>(axis);
        plan.begin[a] = given[i];
        plan.outShape[a] = shape[a] + given[i] + given[i + axes.size()];
        if (plan.outShape[a] < 0) {
            return ctx.error(Errc::InvalidModel, "pads crop more than the dim");
        }
    }
    plan.mode = ctx.stringAttr("mode", "constant");
    if (plan.mode != "constant" && plan.mode != "reflect" && plan.mode != "edge") {
        return ctx.error(Errc::Unsupported, "pad mode '" + plan.mode + "'");
    }
    return plan;
}

/// The input position a padded position `pos` (relative to the input's start) reads along a dim
/// of size `dim`, or -1 for the constant value.
int64_t sourcePosition(int64_t pos, int64_t dim, const std::string& mode) {
    if (pos >= 0 && pos < dim) {
        return pos;
    }
    if (mode == "constant") {
        return -1;
    }
    if (mode == "edge") {
        return pos < 0 ? 0 : dim - 1;
    }
    // reflect: mirror around the edges without repeating them (period 2 (dim - 1)).
    if (dim == 1) {
        return 0;
    }
    const int64_t period = 2 * (dim - 1);
    pos = ((pos % period) + period) % period;
    return pos >= dim ? period - pos : pos;
}

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    QS_ASSIGN_OR_RETURN(const PadPlan plan, readPads(ctx));
    const Shape& shape = ctx.input(0).shape();
    // An empty dim has nothing to reflect or repeat (unless the output is empty too).
    if (plan.mode != "constant" && shapeNumElements(plan.outShape) > 0 &&
        std::find(shape.begin(), shape.end(), 0) != shape.end()) {
        return ctx.error(Errc::InvalidModel, "cannot reflect or edge-pad an empty dim");
    }
    outShape = plan.outShape;
    const std::vector<int64_t> strides = stridesOf(shape);
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
            const int64_t pos = sourcePosition(c[d] - plan.begin[d], shape[d], plan.mode);
            if (pos < 0) {
                offset = -1;
                break;
            }
            offset += pos * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    Shape outShape;
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, indexMap(ctx, outShape));
    Tensor fill;
    if (ctx.hasAttr("value")) {
        fill =
            castTensor(Tensor::scalar<float>(ctx.floatAttr("value", 0.0F)), ctx.input(0).dtype());
    } else if (ctx.has(2) && ctx.input(2).numElements() > 0) {
        fill = castTensor(ctx.input(2), ctx.input(0).dtype());
    }
    return std::vector<Tensor>{gatherByIndex(ctx.input(0), outShape, index, &fill)};
}

/// Zero pads (PyTorch's exports put them before pools) pass the gradient through untouched;
/// anything else goes back through the index map.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const PadPlan plan, readPads(ctx));
    const bool identity =
        plan.outShape == ctx.input(0).shape() &&
        std::all_of(plan.begin.begin(), plan.begin.end(), [](int64_t pad) { return pad == 0; });
    if (identity && outputGrads[0].defined()) {
        std::vector<Tensor> grads(ctx.numInputs());
        grads[0] = outputGrads[0];
        return grads;
    }
    return gatherVjp<indexMap>(ctx, outputs, outputGrads);
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"constant",
         {},
         {randomTensor(rng, {2, 3}), int64Tensor<int>({1, 0, 0, 2}), Tensor::scalar<float>(0.5F)},
         {0}},
        {"reflect",
         {stringAttribute("mode", "reflect")},
         {randomTensor(rng, {1, 4}), int64Tensor<int>({0, 2, 0, 3})},
         {0}},
        {"edge",
         {stringAttribute("mode", "edge")},
         {randomTensor(rng, {2, 3}), int64Tensor<int>({1, 1, 1, 1})},
         {0}},
        {"zero pads", {}, {randomTensor(rng, {2, 3}), int64Tensor<int>({0, 0, 0, 0})}, {0}}};
}

const OpDef kPad{.opType = "Pad",
                 .domain = "",
                 .sinceVersion = 2,
                 .doc = "constant, reflect or edge padding",
                 .minInputs = 1,
                 .maxInputs = 4,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(pad, kPad)
