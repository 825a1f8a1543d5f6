// Gather (ONNX since 1): y = x indexed along `axis` by `indices` (negative indices count from the
// end); out shape = x[:axis] + indices.shape + x[axis+1:]. Works on any element type (shape
// arithmetic runs on int64). Fast kernel: one copy per index of the `inner` contiguous elements
// it selects (an embedding lookup copies rows); reference: the index map. VJP: dy scatter-added
// into dx.

#include "core/runtime/index_map.h"

#include <cstddef>
#include <cstring>

namespace qs::runtime {
namespace {

/// Index i along an axis of size dim, negative counting from the end, or an error.
Result<int64_t> checkedIndex(const OpContext& ctx, int64_t i, int64_t dim) {
    if (i < -dim || i >= dim) {
        return ctx.error(Errc::InvalidModel, "index " + std::to_string(i) +
                                                 " is out of range for size " +
                                                 std::to_string(dim));
    }
    return i < 0 ? i + dim : i;
}

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(ctx.intAttr("axis", 0), rank, ctx));
    const std::vector<int64_t> indices = toInt64Vector(ctx.input(1));
    const int64_t dim = shape[static_cast<size_t>(axis)];
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) {
        outer *= shape[static_cast<size_t>(d)];
    }
    const int64_t inner = shapeNumElements(shape) / std::max<int64_t>(1, outer * dim);
    outShape.assign(shape.begin(), shape.begin() + axis);
    outShape.insert(outShape.end(), ctx.input(1).shape().begin(), ctx.input(1).shape().end());
    outShape.insert(outShape.end(), shape.begin() + axis + 1, shape.end());
    // Every index is checked, even when there is nothing to gather (the fast kernel does too).
    std::vector<int64_t> positions;
    for (const int64_t raw : indices) {
        QS_ASSIGN_OR_RETURN(const int64_t i, checkedIndex(ctx, raw, dim));
        positions.push_back(i);
    }
    std::vector<int64_t> index;
    index.reserve(static_cast<size_t>(shapeNumElements(outShape)));
    for (int64_t o = 0; o < outer; ++o) {
        for (const int64_t i : positions) {
            for (int64_t k = 0; k < inner; ++k) {
                index.push_back((o * dim + i) * inner + k);
            }
        }
    }
    return index;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const auto rank = static_cast<int64_t>(shape.size());
    QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(ctx.intAttr("axis", 0), rank, ctx));
    std::vector<int64_t> indices = toInt64Vector(ctx.input(1));
    const int64_t dim = shape[static_cast<size_t>(axis)];
    for (int64_t& i : indices) {
        QS_ASSIGN_OR_RETURN(i, checkedIndex(ctx, i, dim));
    }
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) {
        outer *= shape[static_cast<size_t>(d)];
    }
    const int64_t inner = shapeNumElements(shape) / std::max<int64_t>(1, outer * dim);
    Shape outShape(shape.begin(), shape.begin() + axis);
    outShape.insert(outShape.end(), ctx.input(1).shape().begin(), ctx.input(1).shape().end());
    outShape.insert(outShape.end(), shape.begin() + axis + 1, shape.end());
    Tensor y = Tensor::allocate(x.dtype(), outShape);
    const size_t element =
        x.numElements() > 0 ? x.byteSize() / static_cast<size_t>(x.numElements()) : 0;
    const size_t run = static_cast<size_t>(inner) * element;
    const auto* src = static_cast<const std::byte*>(x.rawData());
    auto* dst = static_cast<std::byte*>(y.mutableRawData());
    for (int64_t o = 0; o < outer && run > 0; ++o) {
        for (const int64_t i : indices) {
            std::memcpy(dst, src + static_cast<size_t>(o * dim + i) * run, run);
            dst += run;
        }
    }
    return std::vector<Tensor>{y};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"axis 1 repeated",
             {intAttribute("axis", 1)},
             {randomTensor(rng, {2, 4, 3}), Tensor::fromVector<int64_t>({2, 2}, {0, -1, 2, 0})},
             {0}},
            {"scalar index", {}, {randomTensor(rng, {3, 2}), Tensor::scalar<int64_t>(1)}, {0}},
            {"rows of a table (an embedding)",
             {},
             {randomTensor(rng, {5, 4}), Tensor::fromVector<int64_t>({2, 3}, {4, 0, 0, -2, 1, 3})},
             {0}}};
}

const OpDef kGather{.opType = "Gather",
                    .domain = "",
                    .sinceVersion = 1,
                    .doc = "take entries along an axis",
                    .minInputs = 2,
                    .maxInputs = 2,
                    .forward = forward,
                    .reference = gatherForward<indexMap>,
                    .vjp = gatherVjp<indexMap>,
                    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(gather, kGather)
