// Unsqueeze (ONNX since 1; axes as an input since 13): inserts size-1 dims at the listed axes of
// the output. VJP: dy viewed with x's shape.

#include "core/runtime/op_util.h"

#include <algorithm>

namespace qs::runtime {
namespace {

// Shape rule: output rank = rank + |axes|; listed output axes are 1, the rest copy x's dims.
Result<Shape> inferShape(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    std::vector<int64_t> axes = ctx.has(1) ? toInt64Vector(ctx.input(1)) : ctx.intsAttr("axes");
    const auto outRank = static_cast<int64_t>(shape.size() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(outRank), false);
    for (const int64_t axis : axes) {
        QS_ASSIGN_OR_RETURN(const int64_t a, normalizeAxis(axis, outRank, ctx));
        if (inserted[static_cast<size_t>(a)]) {
            return ctx.error(Errc::InvalidModel, "repeated axis");
        }
        inserted[static_cast<size_t>(a)] = true;
    }
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < outRank; ++d) {
        out.push_back(inserted[static_cast<size_t>(d)] ? 1 : shape[next++]);
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
    return {{"axes 0,-1", {}, {randomTensor(rng, {2, 3}), int64Tensor<int>({0, -1})}, {0}}};
}

const OpDef kUnsqueeze{.opType = "Unsqueeze",
                       .domain = "",
                       .sinceVersion = 1,
                       .doc = "insert size-1 dims",
                       .minInputs = 1,
                       .maxInputs = 2,
                       .forward = forward,
                       .reference = nullptr,
                       .vjp = vjp,
                       .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(unsqueeze, kUnsqueeze)
