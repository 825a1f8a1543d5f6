// Flatten (ONNX since 1; negative axis since 11): a view as a matrix [prod(dims < axis),
// prod(dims >= axis)]. VJP: dy viewed with x's shape.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

// Shape rule: [d0..dn] -> [d0 * .. * d(axis-1), d(axis) * .. * dn].
Result<Shape> inferShape(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t axis = ctx.intAttr("axis", 1);
    if (axis < 0) {
        axis += rank;
    }
    if (axis < 0 || axis > rank) {
        return ctx.error(Errc::InvalidModel, "axis out of range");
    }
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) {
        outer *= shape[static_cast<size_t>(d)];
    }
    return Shape{outer, outer == 0 ? 0 : ctx.input(0).numElements() / outer};
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
    return {{"axis 2", {intAttribute("axis", 2)}, {randomTensor(rng, {2, 3, 4})}, {}}};
}

const OpDef kFlatten{.opType = "Flatten",
                     .domain = "",
                     .sinceVersion = 1,
                     .doc = "view as a matrix split at axis",
                     .minInputs = 1,
                     .maxInputs = 1,
                     .forward = forward,
                     .reference = nullptr,
                     .vjp = vjp,
                     .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(flatten, kFlatten)
