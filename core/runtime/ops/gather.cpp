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

/// x seen as [outer, dim, inner] with dim the gathered axis; every index checked (even when there
/// is nothing to gather) and made non-negative.
struct GatherPlan {
    int64_t outer = 1;
    int64_t dim = 0;
    int64_t inner = 1;
    std::vector<int64_t> positions;
    Shape outShape;
};

Result<GatherPlan> planGather(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(ctx.intAttr("axis", 0), rank, ctx));
    GatherPlan g;
    g.dim = shape[static_cast<size_t>(axis)];
    for (int64_t d = 0; d < axis; ++d) {
        g.outer *= shape[static_cast<size_t>(d)];
    }
    g.inner = shapeNumElements(shape) / std::max<int64_t>(1, g.outer * g.dim);
    for (const int64_t raw : toInt64Vector(ctx.input(1))) {
        QS_ASSIGN_OR_RETURN(const int64_t i, checkedIndex(ctx, raw, g.dim));
        g.positions.push_back(i);
    }
    g.outShape.assign(shape.begin(), shape.begin() + axis);
    g.outShape.insert(g.outShape.end(), ctx.input(1).shape().begin(), ctx.input(1).shape().end());
    g.outShape.insert(g.outShape.end(), shape.begin() + axis + 1, shape.end());
    return g;
}

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    QS_ASSIGN_OR_RETURN(const GatherPlan g, planGather(ctx));
    outShape = g.outShape;
    std::vector<int64_t> index;
    index.reserve(static_cast<size_t>(shapeNumElements(outShape)));
    for (int64_t o = 0; o < g.outer; ++o) {
        for (const int64_t i : g.positions) {
            for (int64_t k = 0; k < g.inner; ++k) {
                index.push_back((o * g.dim + i) * g.inner + k);
            }
        }
    }
    return index;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const GatherPlan g, planGather(ctx));
    const Tensor& x = ctx.input(0);
    Tensor y = Tensor::allocate(x.dtype(), g.outShape);
    const size_t run = static_cast<size_t>(g.inner) * runtimeElementSize(x.dtype());
    const auto* src = static_cast<const std::byte*>(x.rawData());
    auto* dst = static_cast<std::byte*>(y.mutableRawData());
    for (int64_t o = 0; o < g.outer && run > 0; ++o) {
        for (const int64_t i : g.positions) {
            std::memcpy(dst, src + static_cast<size_t>(o * g.dim + i) * run, run);
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
