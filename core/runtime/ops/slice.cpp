// Slice (ONNX since 1; starts/ends/axes/steps as inputs since 10): y = x[starts:ends:steps] along
// the listed axes, with numpy clamping (negative indices count from the end; INT64_MAX means "to
// the end"). VJP: dy scattered back into a zero dx.

#include "core/runtime/index_map.h"

#include <algorithm>

namespace qs::runtime {
namespace {

/// starts, ends, axes and steps, from attributes (before opset 10) or inputs 1 to 4.
struct SliceArgs {
    std::vector<int64_t> starts;
    std::vector<int64_t> ends;
    std::vector<int64_t> axes;
    std::vector<int64_t> steps;
};

Result<SliceArgs> readSliceArgs(const OpContext& ctx) {
    const bool legacy = ctx.opset < 10 && ctx.hasAttr("starts");
    SliceArgs a;
    a.starts = legacy ? ctx.intsAttr("starts") : toInt64Vector(ctx.input(1));
    a.ends = legacy ? ctx.intsAttr("ends") : toInt64Vector(ctx.input(2));
    if (legacy) {
        a.axes = ctx.intsAttr("axes");
    } else if (ctx.has(3)) {
        a.axes = toInt64Vector(ctx.input(3));
    }
    if (!legacy && ctx.has(4)) {
        a.steps = toInt64Vector(ctx.input(4));
    }
    if (a.axes.empty()) {
        for (size_t i = 0; i < a.starts.size(); ++i) {
            a.axes.push_back(static_cast<int64_t>(i));
        }
    }
    if (a.steps.empty()) {
        a.steps.assign(a.starts.size(), 1);
    }
    if (a.ends.size() != a.starts.size() || a.axes.size() != a.starts.size() ||
        a.steps.size() != a.starts.size()) {
        return ctx.error(Errc::InvalidModel, "starts, ends, axes and steps differ in length");
    }
    return a;
}

/// The first index and the element count of start:end:step along a dim of size `dim`, clamped as
/// numpy does (step != 0).
std::pair<int64_t, int64_t> clampedRange(int64_t start, int64_t end, int64_t step, int64_t dim) {
    int64_t lo = start < 0 ? start + dim : start;
    int64_t hi = end < 0 ? std::max<int64_t>(end, -dim - 1) + dim : end;
    if (step > 0) {
        lo = std::clamp<int64_t>(lo, 0, dim);
        hi = std::clamp<int64_t>(hi, 0, dim);
        return {lo, std::max<int64_t>(0, (hi - lo + step - 1) / step)};
    }
    lo = std::clamp<int64_t>(lo, 0, dim - 1);
    hi = std::clamp<int64_t>(hi, -1, dim - 1);
    return {lo, std::max<int64_t>(0, (lo - hi - step - 1) / (-step))};
}

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    QS_ASSIGN_OR_RETURN(const SliceArgs args, readSliceArgs(ctx));
    std::vector<int64_t> begin(shape.size(), 0);
    std::vector<int64_t> step(shape.size(), 1);
    outShape = shape;
    for (size_t i = 0; i < args.axes.size(); ++i) {
        QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(args.axes[i], rank, ctx));
        const auto a = static_cast<size_t>(axis);
        if (args.steps[i] == 0) {
            return ctx.error(Errc::InvalidModel, "step 0");
        }
        const auto [first, count] =
            clampedRange(args.starts[i], args.ends[i], args.steps[i], shape[a]);
        begin[a] = first;
        step[a] = args.steps[i];
        outShape[a] = count;
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
