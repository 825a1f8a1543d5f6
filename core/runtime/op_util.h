// Helpers shared by the op files: numpy broadcasting (a plan that collapses dims so inner loops
// run long and contiguous), reducing a broadcast gradient back to an input's shape, axis
// normalisation, and random tensors and attributes for the ops' test samples.
#pragma once

#include "core/graph/attribute.h"
#include "core/runtime/op.h"
#include "core/runtime/tensor.h"

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

/// Fast two-input broadcast: the innermost collapsed dim runs as a tight loop.
template <typename A, typename B, typename R, typename Op>
void broadcastBinary(const BroadcastPlan& plan, const A* a, const B* b, R* out, Op op) {
    const size_t rank = plan.dims.size();
    const int64_t inner = plan.dims.back();
    const int64_t sa = plan.strides[0].back();
    const int64_t sb = plan.strides[1].back();
    const int64_t outer = shapeNumElements(plan.outShape) / std::max<int64_t>(inner, 1);
    std::vector<int64_t> counter(rank, 0);
    int64_t offA = 0;
    int64_t offB = 0;
    for (int64_t o = 0; o < outer; ++o) {
        R* dst = out + o * inner;
        const A* pa = a + offA;
        const B* pb = b + offB;
        if (sa == 1 && sb == 1) {
            for (int64_t i = 0; i < inner; ++i) {
                dst[i] = op(pa[i], pb[i]);
            }
        } else if (sa == 1) {
            const B vb = pb[0];
            for (int64_t i = 0; i < inner; ++i) {
                dst[i] = op(pa[i], vb);
            }
        } else if (sb == 1) {
            const A va = pa[0];
            for (int64_t i = 0; i < inner; ++i) {
                dst[i] = op(va, pb[i]);
            }
        } else {
            const R value = op(pa[0], pb[0]);
            for (int64_t i = 0; i < inner; ++i) {
                dst[i] = value;
            }
        }
        for (size_t d = rank - 1; d-- > 0;) {
            offA += plan.strides[0][d];
            offB += plan.strides[1][d];
            if (++counter[d] < plan.dims[d]) {
                break;
            }
            offA -= plan.strides[0][d] * plan.dims[d];
            offB -= plan.strides[1][d] * plan.dims[d];
            counter[d] = 0;
        }
    }
}

/// Sums a gradient of the broadcast output shape down to `shape` (float).
Tensor reduceToShape(const Tensor& grad, const Shape& shape);

/// Maps a possibly negative axis into [0, rank); fails when out of range.
Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const OpContext& ctx);

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const Shape& shape);

/// Uniform random float tensor in [lo, hi).
Tensor randomTensor(std::mt19937& rng, Shape shape, float lo = -1.0F, float hi = 1.0F);

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
