// Pad (ONNX since 2; pads/constant_value as inputs since 11, axes since 18): pads [begin...,
// end...] per dim (negative pads crop) in mode constant (value), reflect (mirror without the edge)
// or edge (repeat the edge). VJP: dy gathered back through the same index map.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    const size_t rank = shape.size();
    const bool legacy = ctx.hasAttr("pads");
    std::vector<int64_t> given = legacy ? ctx.intsAttr("pads") : toInt64Vector(ctx.input(1));
    std::vector<int64_t> axes;
    if (!legacy && ctx.has(3)) {
        axes = toInt64Vector(ctx.input(3));
    } else {
        for (size_t d = 0; d < rank; ++d) {
            axes.push_back(static_cast<int64_t>(d));
        }
    }
    if (given.size() != 2 * axes.size()) {
        return ctx.error(Errc::InvalidModel, "pads must have two entries per padded axis");
    }
    std::vector<int64_t> begin(rank, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        QS_ASSIGN_OR_RETURN(const int64_t a,
                            normalizeAxis(axes[i], static_cast<int64_t>(rank), ctx));
        begin[static_cast<size_t>(a)] = given[i];
        outShape = shape;
    }
    outShape = shape;
    for (size_t i = 0; i < axes.size(); ++i) {
        const auto a =
            static_cast<size_t>(axes[i] < 0 ? axes[i] + static_cast<int64_t>(rank) : axes[i]);
        outShape[a] = shape[a] + given[i] + given[i + axes.size()];
        if (outShape[a] < 0) {
            return ctx.error(Errc::InvalidModel, "pads crop more than the dim");
        }
    }
    const std::string mode = ctx.stringAttr("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
        return ctx.error(Errc::Unsupported, "pad mode '" + mode + "'");
    }
    const std::vector<int64_t> strides = stridesOf(shape);
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    bool bad = false;
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < rank && offset >= 0; ++d) {
            int64_t pos = c[d] - begin[d];
            const int64_t dim = shape[d];
            if (pos < 0 || pos >= dim) {
                if (mode == "constant") {
                    offset = -1;
                    break;
                }
                if (mode == "edge") {
                    pos = pos < 0 ? 0 : dim - 1;
                } else {
                    // reflect: mirror around the edges without repeating them (period 2 (dim-1)).
                    if (dim == 1) {
                        pos = 0;
                    } else {
                        const int64_t period = 2 * (dim - 1);
                        pos = ((pos % period) + period) % period;
                        pos = pos >= dim ? period - pos : pos;
                    }
                }
            }
            bad = bad || dim == 0;
            offset += pos * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    if (bad && mode != "constant") {
        return ctx.error(Errc::InvalidModel, "cannot reflect or edge-pad an empty dim");
    }
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

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    Shape outShape;
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, indexMap(ctx, outShape));
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = scatterAddByIndex(outputGrads[0], ctx.input(0).shape(), index);
    return grads;
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
         {0}}};
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
