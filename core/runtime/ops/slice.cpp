// Slice (ONNX since 1; starts/ends/axes/steps as inputs since 10): y = x[starts:ends:steps] along
// the listed axes, with numpy clamping (negative indices count from the end; INT64_MAX means "to
// the end"). VJP: dy scattered back into a zero dx.

#include "core/runtime/index_map.h"

#include <algorithm>
#include <climits>

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

/// The slice as a strided view of x: the offset of its first element and, per dim, the stride in
/// x of one step along the output.
struct SliceView {
    Shape outShape;
    int64_t offset = 0;
    std::vector<int64_t> strides;
};

Result<SliceView> sliceView(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    QS_ASSIGN_OR_RETURN(const SliceArgs args, readSliceArgs(ctx));
    SliceView view{shape, 0, stridesOf(shape)};
    const std::vector<int64_t> inStrides = view.strides;
    std::vector<int64_t> begin(shape.size(), 0);
    for (size_t i = 0; i < args.axes.size(); ++i) {
        QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(args.axes[i], rank, ctx));
        const auto a = static_cast<size_t>(axis);
        if (args.steps[i] == 0) {
            return ctx.error(Errc::InvalidModel, "step 0");
        }
        const auto [first, count] =
            clampedRange(args.starts[i], args.ends[i], args.steps[i], shape[a]);
        view.outShape[a] = count;
        view.strides[a] = args.steps[i] * inStrides[a];
        begin[a] = first;
    }
    if (shapeNumElements(view.outShape) > 0) {
        for (size_t d = 0; d < shape.size(); ++d) {
            view.offset += begin[d] * inStrides[d];
        }
    }
    return view;
}

// The reference: the offset of every output element, one coordinate at a time.
Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    QS_ASSIGN_OR_RETURN(const SliceView view, sliceView(ctx));
    outShape = view.outShape;
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = view.offset;
        for (size_t d = 0; d < c.size(); ++d) {
            offset += c[d] * view.strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

// y is x's strided view copied out: runs that stay contiguous (all of H x W in a channel slice of
// NCHW) become one memcpy each.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const SliceView view, sliceView(ctx));
    const Tensor& x = ctx.input(0);
    Tensor y = Tensor::allocate(x.dtype(), view.outShape);
    const size_t size = runtimeElementSize(x.dtype());
    if (y.numElements() > 0) {
        copyStrided(static_cast<const std::byte*>(x.rawData()) + view.offset * size,
                    y.mutableRawData(), size,
                    {view.outShape, view.strides, stridesOf(view.outShape)});
    }
    return std::vector<Tensor>{std::move(y)};
}

// dx is zero but for the sliced elements, which the same view receives dy into (a slice never
// reads an element twice, so nothing accumulates).
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const SliceView view, sliceView(ctx));
    std::vector<Tensor> grads(ctx.numInputs());
    // Integer data (a slice of a shape) is not differentiable.
    if (ctx.input(0).dtype() != graph::DataType::Float) {
        return grads;
    }
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    if (outputGrads[0].defined() && outputGrads[0].numElements() > 0) {
        copyStrided(outputGrads[0].data<float>(), dx.mutableData<float>() + view.offset,
                    sizeof(float), {view.outShape, stridesOf(view.outShape), view.strides});
    }
    grads[0] = std::move(dx);
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    const auto slice = [](std::string label, Tensor x, const std::vector<int64_t>& starts,
                          const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                          const std::vector<int64_t>& steps) {
        // Integer data (shapes) has no gradient to probe.
        std::vector<int> gradInputs;
        if (x.dtype() == graph::DataType::Float) {
            gradInputs.push_back(0);
        }
        return OpSample{std::move(label),
                        {},
                        {std::move(x), int64Tensor(starts), int64Tensor(ends), int64Tensor(axes),
                         int64Tensor(steps)},
                        std::move(gradInputs)};
    };
    constexpr int64_t kEnd = INT64_MAX;
    return {
        slice("axis 1 and -1 step -2", randomTensor(rng, {2, 5, 6}), {1, -1}, {4, 0}, {1, -1},
              {1, -2}),
        // Channel splits of NCHW (ShuffleNet): one contiguous run per image.
        slice("channel split, second half", randomTensor(rng, {2, 6, 3, 5}), {3}, {kEnd}, {1}, {1}),
        slice("channel split, first half, axis -3", randomTensor(rng, {2, 6, 3, 5}), {0}, {3}, {-3},
              {1}),
        slice("batch 1 of 2, one run", randomTensor(rng, {2, 3, 4, 5}), {1}, {2}, {0}, {1}),
        slice("rank 1, negative start and end", randomTensor(rng, {9}), {-7}, {-1}, {0}, {1}),
        slice("rank 2, inner step 3", randomTensor(rng, {3, 10}), {1}, {10}, {1}, {3}),
        slice("rank 5, outer step 2, inner runs", randomTensor(rng, {2, 5, 2, 3, 4}), {0, 1},
              {kEnd, 3}, {1, 3}, {2, 1}),
        slice("rank 4, steps -1 on channels and W", randomTensor(rng, {2, 4, 3, 5}), {-1, kEnd},
              {-kEnd, -kEnd}, {1, 3}, {-1, -1}),
        slice("empty range", randomTensor(rng, {2, 4}), {3}, {1}, {1}, {1}),
        slice("int64 shape, dims 2 to 3", int64Tensor<int64_t>({2, 116, 28, 28}), {2}, {kEnd}, {0},
              {1}),
        slice("int64 matrix, every other column",
              Tensor::fromVector<int64_t>({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), {0}, {5}, {1},
              {2})};
}

const OpDef kSlice{.opType = "Slice",
                   .domain = "",
                   .sinceVersion = 1,
                   .doc = "numpy-style strided slice",
                   .minInputs = 1,
                   .maxInputs = 5,
                   .forward = forward,
                   .reference = gatherForward<indexMap>,
                   .vjp = vjp,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(slice, kSlice)
