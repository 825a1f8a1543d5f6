// Concat (ONNX since 4): joins the inputs along `axis`; all other dims must agree. Any element
// type. VJP: dy split back into the inputs' extents.

#include "core/runtime/op_util.h"

#include <cstring>

namespace qs::runtime {
namespace {

struct ConcatShape {
    int64_t axis = 0;
    int64_t outer = 1;
    int64_t inner = 1; ///< elements per unit of the concat axis
    Shape outShape;
};

// Shape rule: sum of the inputs' sizes along axis.
Result<ConcatShape> inferShape(const OpContext& ctx) {
    const Shape& first = ctx.input(0).shape();
    ConcatShape s;
    QS_ASSIGN_OR_RETURN(
        s.axis, normalizeAxis(ctx.intAttr("axis", 0), static_cast<int64_t>(first.size()), ctx));
    s.outShape = first;
    s.outShape[static_cast<size_t>(s.axis)] = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        const Shape& shape = ctx.input(i).shape();
        bool fits = shape.size() == first.size() && ctx.input(i).dtype() == ctx.input(0).dtype();
        for (size_t d = 0; fits && d < shape.size(); ++d) {
            fits = static_cast<int64_t>(d) == s.axis || shape[d] == first[d];
        }
        if (!fits) {
            return ctx.error(Errc::InvalidModel, "input " + std::to_string(i) + " " +
                                                     shapeToString(shape) + " does not fit " +
                                                     shapeToString(first));
        }
        s.outShape[static_cast<size_t>(s.axis)] += shape[static_cast<size_t>(s.axis)];
    }
    for (int64_t d = 0; d < s.axis; ++d) {
        s.outer *= first[static_cast<size_t>(d)];
    }
    for (size_t d = static_cast<size_t>(s.axis) + 1; d < first.size(); ++d) {
        s.inner *= first[d];
    }
    return s;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    Tensor y = Tensor::allocate(ctx.input(0).dtype(), s.outShape);
    const size_t elem = runtimeElementSize(y.dtype());
    auto* dst = static_cast<std::byte*>(y.mutableRawData());
    const int64_t outRow = s.outShape[static_cast<size_t>(s.axis)] * s.inner;
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        const Tensor& x = ctx.input(i);
        const int64_t row = x.shape()[static_cast<size_t>(s.axis)] * s.inner;
        const auto* src = static_cast<const std::byte*>(x.rawData());
        for (int64_t o = 0; o < s.outer && row > 0; ++o) {
            std::memcpy(dst + static_cast<size_t>(o * outRow + offset) * elem,
                        src + static_cast<size_t>(o * row) * elem, static_cast<size_t>(row) * elem);
        }
        offset += row;
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConcatShape s, inferShape(ctx));
    const float* dy = outputGrads[0].data<float>();
    const int64_t outRow = s.outShape[static_cast<size_t>(s.axis)] * s.inner;
    std::vector<Tensor> grads;
    int64_t offset = 0;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        Tensor dx = allocateFloat(ctx.input(i).shape());
        const int64_t row = ctx.input(i).shape()[static_cast<size_t>(s.axis)] * s.inner;
        for (int64_t o = 0; o < s.outer; ++o) {
            std::copy(dy + o * outRow + offset, dy + o * outRow + offset + row,
                      dx.mutableData<float>() + o * row);
        }
        offset += row;
        grads.push_back(dx);
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"axis 1",
         {intAttribute("axis", 1)},
         {randomTensor(rng, {2, 1, 3}), randomTensor(rng, {2, 3, 3}), randomTensor(rng, {2, 2, 3})},
         {}}};
}

const OpDef kConcat{.opType = "Concat",
                    .domain = "",
                    .sinceVersion = 4,
                    .doc = "join along an axis",
                    .minInputs = 1,
                    .maxInputs = 1 << 16,
                    .forward = forward,
                    .reference = nullptr,
                    .vjp = vjp,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(concat, kConcat)
