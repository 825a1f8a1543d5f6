// Reshape (ONNX since 5; allowzero since 14): a view with a new shape. In `shape`, 0 copies the
// input dim (unless allowzero) and one -1 is inferred. VJP: dy viewed with x's shape.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

// Shape rule: resolve 0 and -1 entries of the requested shape.
Result<Shape> inferShape(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    Shape shape = toInt64Vector(ctx.input(1));
    const bool allowZero = ctx.intAttr("allowzero", 0) != 0;
    int64_t known = 1;
    int inferred = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 0 && !allowZero) {
            if (d >= x.rank()) {
                return ctx.error(Errc::InvalidModel, "0 in shape refers past the input's rank");
            }
            shape[d] = x.shape()[d];
        }
        if (shape[d] == -1) {
            if (inferred >= 0) {
                return ctx.error(Errc::InvalidModel, "more than one -1 in the shape");
            }
            inferred = static_cast<int>(d);
        } else if (shape[d] < 0) {
            return ctx.error(Errc::InvalidModel, "negative dim in the shape");
        } else {
            known *= shape[d];
        }
    }
    if (inferred >= 0) {
        if (known == 0 || x.numElements() % known != 0) {
            return ctx.error(Errc::InvalidModel, "cannot infer the -1 dim");
        }
        shape[static_cast<size_t>(inferred)] = x.numElements() / known;
    }
    if (shapeNumElements(shape) != x.numElements()) {
        return ctx.error(Errc::InvalidModel, "cannot reshape " + shapeToString(x.shape()) + " to " +
                                                 shapeToString(shape));
    }
    return shape;
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
    return {{"2x3x4 to 0,-1", {}, {randomTensor(rng, {2, 3, 4}), int64Tensor<int>({0, -1})}, {0}}};
}

const OpDef kReshape{.opType = "Reshape",
                     .domain = "",
                     .sinceVersion = 5,
                     .doc = "view with a new shape",
                     .minInputs = 2,
                     .maxInputs = 2,
                     .forward = forward,
                     .reference = nullptr,
                     .vjp = vjp,
                     .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reshape, kReshape)
