// Slice (ONNX since 1; starts/ends/axes/steps as inputs since 10): y = x[starts:ends:steps] along
// the listed axes, with numpy clamping (negative indices count from the end; INT64_MAX means "to
// the end"). VJP: dy scattered back into a zero dx.

#include "core/runtime/index_map.h"

#include <algorithm>

namespace qs::runtime {
namespace {

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    const bool legacy = ctx.opset < 10 && ctx.hasAttr("starts");
    const std::vector<int64_t> starts =
        legacy ? ctx.intsAttr("starts") : toInt64Vector(ctx.input(1));
    const std::vector<int64_t> ends = legacy ? ctx.intsAttr("ends") : toInt64Vector(ctx.input(2));
    std::vector<int64_t> axes =
        legacy ? ctx.intsAttr("axes")
               : (ctx.has(3) ? toInt64Vector(ctx.input(3)) : std::vector<int64_t>{});
    std::vector<int64_t> steps =
        !legacy && ctx.has(4) ? toInt64Vector(ctx.input(4)) : std::vector<int64_t>{};
    if (axes.empty()) {
        for (size_t i = 0; i < starts.size(); ++i) {
            axes.push_back(static_cast<int64_t>(i));
        }
    }
    if (steps.empty()) {
        steps.assign(starts.size(), 1);
    }
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
        return ctx.error(Errc::InvalidModel, "starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> begin(shape.size(), 0);
    std::vector<int64_t> step(shape.size(), 1);
    outShape = shape;
    for (size_t i = 0; i < axes.size(); ++i) {
        QS_ASSIGN_OR_RETURN(const int64_t a, normalizeAxis(axes[i], rank, ctx));
        const int64_t dim = shape[static_cast<size_t>(a)];
        const int64_t s = steps[i];
        if (s == 0) {
            return ctx.error(Errc::InvalidModel, "step 0");
        }
        int64_t lo = starts[i];
        int64_t hi = ends[i];
        lo = lo < 0 ? lo + dim : lo;
        hi = hi < 0 ? std::max<int64_t>(hi, -dim - 1) + dim : hi;
        if (s > 0) {
            lo = std::clamp<int64_t>(lo, 0, dim);
            hi = std::clamp<int64_t>(hi, 0, dim);
        } else {
            lo = std::clamp<int64_t>(lo, 0, dim - 1);
            hi = std::clamp<int64_t>(hi, -1, dim - 1);
        }
        const int64_t count = s > 0 ? std::max<int64_t>(0, (hi - lo + s - 1) / s)
                                    : std::max<int64_t>(0, (lo - hi + (-s) - 1) / (-s));
        begin[static_cast<size_t>(a)] = lo;
        step[static_cast<size_t>(a)] = s;
        outShape[static_cast<size_t>(a)] = count;
    }
    const std::vector<int64_t> strides = stridesOf(shape);
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.size(); ++d) {
            offset += (begin[d] + c[d] * step[d]) * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"axis 1 and -1 step -2",
             {},
             {randomTensor(rng, {2, 5, 6}), int64Tensor<int>({1, -1}), int64Tensor<int>({4, 0}),
              int64Tensor<int>({1, -1}), int64Tensor<int>({1, -2})},
             {0}}};
}

const OpDef kSlice{.opType = "Slice",
                   .domain = "",
                   .sinceVersion = 1,
                   .doc = "numpy-style strided slice",
                   .minInputs = 1,
                   .maxInputs = 5,
                   .forward = gatherForward<indexMap>,
                   .reference = nullptr,
                   .vjp = gatherVjp<indexMap>,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(slice, kSlice)
