// Squeeze (ONNX since 1; axes as an input since 13): removes size-1 dims (the listed ones, or all
// when none are listed). VJP: dy viewed with x's shape.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

// Shape rule: drop the listed (or every) size-1 dim.
Result<Shape> inferShape(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> axes = ctx.has(1) ? toInt64Vector(ctx.input(1)) : ctx.intsAttr("axes");
    std::vector<bool> drop(shape.size(), false);
    if (axes.empty()) {
        for (size_t d = 0; d < shape.size(); ++d) {
            drop[d] = shape[d] == 1;
        }
    }
    for (const int64_t axis : axes) {
        QS_ASSIGN_OR_RETURN(const int64_t a, normalizeAxis(axis, rank, ctx));
        if (shape[static_cast<size_t>(a)] != 1) {
            return ctx.error(Errc::InvalidModel, "cannot squeeze a dim of size " +
                                                     std::to_string(shape[static_cast<size_t>(a)]));
        }
        drop[static_cast<size_t>(a)] = true;
    }
    Shape out;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!drop[d]) {
            out.push_back(shape[d]);
        }
    }
    return out;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(Shape shape, inferShape(ctx));
    return std::vector<Tensor>{ctx.input(0).reshaped(std::move(shape))};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    return viewVjp(ctx, outputGrads);
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"axes input", {}, {randomTensor(rng, {2, 1, 3, 1}), int64Tensor<int>({1, -1})}, {0}},
            {"all", {}, {randomTensor(rng, {1, 3, 1})}, {}}};
}

const OpDef kSqueeze{.opType = "Squeeze",
                     .domain = "",
                     .sinceVersion = 1,
                     .doc = "remove size-1 dims",
                     .minInputs = 1,
                     .maxInputs = 2,
                     .forward = forward,
                     .reference = nullptr,
                     .vjp = vjp,
                     .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(squeeze, kSqueeze)
