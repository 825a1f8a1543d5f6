// Helpers shared by the op files: numpy broadcasting (a plan that collapses dims so inner loops
// run long and contiguous), reducing a broadcast gradient back to an input's shape, axis
// normalisation, and random tensors and attributes for the ops' test samples.
#pragma once

#include "core/graph/attribute.h"
#include "core/runtime/op.h"
#include "core/runtime/parallel.h"
#include "core/runtime/tensor.h"

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <vector>

namespace qs::runtime {

/// Numpy broadcasting of several shapes, with runs of dims that broadcast alike merged into one.
struct BroadcastPlan {
    Shape outShape;
    std::vector<int64_t> dims;                 ///< collapsed output dims (never empty)
    std::vector<std::vector<int64_t>> strides; ///< per input, per collapsed dim (0 = broadcast)
};

/// Fails when the shapes do not broadcast (numpy rules: trailing dims equal or 1).
Result<BroadcastPlan> makeBroadcastPlan(const std::vector<Shape>& shapes);

/// Calls fn(outIndex, offsets) for every output element, offsets[k] indexing input k.
template <typename Fn>
void forEachBroadcast(const BroadcastPlan& plan, Fn&& fn) {
    const size_t rank = plan.dims.size();
    const size_t inputs = plan.strides.size();
    std::vector<int64_t> counter(rank, 0);
    std::vector<int64_t> offsets(inputs, 0);
    const int64_t total = shapeNumElements(plan.outShape);
    for (int64_t out = 0; out < total; ++out) {
        fn(out, offsets.data());
        for (size_t d = rank; d-- > 0;) {
            for (size_t k = 0; k < inputs; ++k) {
                offsets[k] += plan.strides[k][d];
            }
            if (++counter[d] < plan.dims[d]) {
                break;
            }
            for (size_t k = 0; k < inputs; ++k) {
                offsets[k] -= plan.strides[k][d] * plan.dims[d];
            }
            counter[d] = 0;
        }
    }
}

/// Where one row (innermost collapsed dim) of a broadcast starts in each of two inputs, advanced
/// row by row as an odometer over the outer dims.
struct BroadcastRowCursor {
    const BroadcastPlan& plan;
    std::vector<int64_t> counter;
    int64_t offA = 0;
    int64_t offB = 0;

    /// The cursor at row `row`: its index over the outer dims, unravelled.
    BroadcastRowCursor(const BroadcastPlan& broadcast, int64_t row)
        : plan(broadcast)
        , counter(broadcast.dims.size(), 0) {
        auto rest = static_cast<size_t>(row);
        for (size_t d = plan.dims.size() - 1; d-- > 0;) {
            const auto dim = static_cast<size_t>(plan.dims[d]);
            counter[d] = static_cast<int64_t>(rest % dim);
            rest /= dim;
            offA += counter[d] * plan.strides[0][d];
            offB += counter[d] * plan.strides[1][d];
        }
    }

    void next() {
        for (size_t d = plan.dims.size() - 1; d-- > 0;) {
            offA += plan.strides[0][d];
            offB += plan.strides[1][d];
            if (++counter[d] < plan.dims[d]) {
                return;
            }
            offA -= plan.strides[0][d] * plan.dims[d];
            offB -= plan.strides[1][d] * plan.dims[d];
            counter[d] = 0;
        }
    }
};

/// dst[i] = op(a, b) for i in [first, last) of one row; sa and sb are the inputs' strides along
/// the row (1, or 0 for a broadcast input).
template <typename A, typename B, typename R, typename Op>
void broadcastRow(R* dst, const A* pa, const B* pb, int64_t sa, int64_t sb, int64_t first,
                  int64_t last, Op& op) {
    if (sa == 1 && sb == 1) {
        for (int64_t i = first; i < last; ++i) {
            dst[i] = op(pa[i], pb[i]);
        }
    } else if (sa == 1) {
        const B vb = pb[0];
        for (int64_t i = first; i < last; ++i) {
            dst[i] = op(pa[i], vb);
        }
    } else if (sb == 1) {
        const A va = pa[0];
        for (int64_t i = first; i < last; ++i) {
            dst[i] = op(va, pb[i]);
        }
    } else {
        const R value = op(pa[0], pb[0]);
        for (int64_t i = first; i < last; ++i) {
            dst[i] = value;
        }
    }
}

/// Fast two-input broadcast: the innermost collapsed dim runs as a tight loop, and the threads
/// split the output into contiguous element ranges (a flat Mul of two equal shapes is one row, so
/// rows alone would leave it on one thread).
template <typename A, typename B, typename R, typename Op>
void broadcastBinary(const BroadcastPlan& plan, const A* a, const B* b, R* out, Op op) {
    const int64_t inner = std::max<int64_t>(plan.dims.back(), 1);
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    const int64_t total = shapeNumElements(plan.outShape);
    parallelFor(total, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
        int64_t row = begin / inner;
        BroadcastRowCursor cursor(plan, row);
        int64_t first = begin % inner;
        while (begin < end) {
            const int64_t last = std::min(inner, first + (end - begin));
            broadcastRow(out + row * inner, a + cursor.offA, b + cursor.offB, sa, sb, first, last,
                         op);
            begin += last - first;
            first = 0;
            ++row;
            cursor.next();
        }
    });
}

/// Sums a gradient of the broadcast output shape down to `shape` (float).
Tensor reduceToShape(const Tensor& grad, const Shape& shape);

/// Maps a possibly negative axis into [0, rank); fails when out of range.
Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const OpContext& ctx);

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const Shape& shape);

/// Uniform random float tensor in [lo, hi).
Tensor randomTensor(std::mt19937& rng, Shape shape, float lo = -1.0F, float hi = 1.0F);

/// sqrt(mean(x^2)) over the elements of `t` (0 when it has none): the scale of
/// OpDef::roundingOfRms.
double rootMeanSquare(const Tensor& t);

/// Random float tensor whose values stay at least `gap` away from each other and from zero-ish
/// kinks is hard; this one keeps |x| >= margin so finite differences do not cross a kink at 0.
Tensor randomAwayFromZero(std::mt19937& rng, Shape shape, float margin = 0.05F);

/// Float tensor of distinct values at least 0.05 apart, shuffled: finite differences of max/min
/// style ops then never swap the winner.
Tensor randomDistinct(std::mt19937& rng, Shape shape);

/// Bool tensor of fair coin flips.
Tensor randomBools(std::mt19937& rng, Shape shape);

template <typename T>
Tensor int64Tensor(const std::vector<T>& values) {
    std::vector<int64_t> converted(values.begin(), values.end());
    return Tensor::fromVector<int64_t>({static_cast<int64_t>(converted.size())}, converted);
}

inline graph::Attribute intAttribute(std::string name, int64_t value) {
    return graph::Attribute{std::move(name), value, {}};
}

inline graph::Attribute floatAttribute(std::string name, float value) {
    return graph::Attribute{std::move(name), value, {}};
}

inline graph::Attribute intsAttribute(std::string name, std::vector<int64_t> values) {
    return graph::Attribute{std::move(name), std::move(values), {}};
}

inline graph::Attribute stringAttribute(std::string name, std::string value) {
    return graph::Attribute{std::move(name), std::move(value), {}};
}

/// A float output of the same shape as `like`.
inline Tensor allocateFloat(const Shape& shape) {
    return Tensor::allocate(graph::DataType::Float, shape);
}

/// VJP of ops that only re-view their first input (Reshape, Flatten, Squeeze, Identity, ...):
/// dx = dy with x's shape; no gradient for the other inputs.
std::vector<Tensor> viewVjp(const OpContext& ctx, std::span<const Tensor> outputGrads);

/// Fails unless input `index` is float32.
Result<void> requireFloat(const OpContext& ctx, size_t index);

} // namespace qs::runtime
