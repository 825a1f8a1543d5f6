// Element-wise kernel templates shared by the unary, binary and comparison op files: each op file
// supplies only its scalar function and its derivative. Unary float ops run on float and double;
// binary arithmetic follows numpy broadcasting on every numeric type.
#pragma once

#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"
#include "core/runtime/type_dispatch.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <vector>

namespace qs::runtime {

/// y = f(x) for float/double x; `f` is a generic lambda.
template <typename F>
Result<std::vector<Tensor>> unaryFloatForward(const OpContext& ctx, F f) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != graph::DataType::Float && x.dtype() != graph::DataType::Double) {
        return ctx.error(Errc::Unsupported, "needs float or double input, got " +
                                                std::string(graph::dataTypeName(x.dtype())));
    }
    Tensor y = Tensor::allocate(x.dtype(), x.shape());
    auto run = [&]<typename T>() {
        const T* src = x.data<T>();
        T* dst = y.mutableData<T>();
        parallelFor(x.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                dst[i] = static_cast<T>(f(src[i]));
            }
        });
    };
    if (x.dtype() == graph::DataType::Float) {
        run.template operator()<float>();
    } else {
        run.template operator()<double>();
    }
    return std::vector<Tensor>{y};
}

/// y = f(x) for float x through an Eigen array expression: `f` maps the Eigen::Map of a run of x
/// to the run of y (e.g. `m.exp()`), vectorised where Eigen vectorises it. Other dtypes go to
/// `reference`, the op's scalar kernel.
template <typename ArrayFn>
Result<std::vector<Tensor>>
unaryEigenForward(const OpContext& ctx, ArrayFn f,
                  Result<std::vector<Tensor>> (*reference)(const OpContext&)) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != graph::DataType::Float) {
        return reference(ctx);
    }
    Tensor y = allocateFloat(x.shape());
    const float* src = x.data<float>();
    float* dst = y.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
        const Eigen::Map<const Eigen::ArrayXf> m(src + begin, end - begin);
        Eigen::Map<Eigen::ArrayXf>(dst + begin, end - begin) = f(m);
    });
    return std::vector<Tensor>{y};
}

/// dx = dy * d(x, y) for a float unary op, where d is the derivative given input and output.
template <typename D>
Result<std::vector<Tensor>> unaryFloatVjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                          std::span<const Tensor> outputGrads, D d) {
    const Tensor& x = ctx.input(0);
    Tensor dx = allocateFloat(x.shape());
    const float* px = x.data<float>();
    const float* py = outputs[0].data<float>();
    const float* dy = outputGrads[0].data<float>();
    float* dst = dx.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            dst[i] = dy[i] * static_cast<float>(d(px[i], py[i]));
        }
    });
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

/// out = f(a, b) with numpy broadcasting; both inputs of one numeric type; R(T) gives the result
/// type (same as T for arithmetic, bool for comparisons).
template <bool kBoolResult, bool kAllowBool = false, typename F>
Result<std::vector<Tensor>> broadcastForward(const OpContext& ctx, F f) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype()) {
        return ctx.error(Errc::InvalidModel,
                         "input types differ: " + std::string(graph::dataTypeName(a.dtype())) +
                             " and " + std::string(graph::dataTypeName(b.dtype())));
    }
    auto plan = makeBroadcastPlan({a.shape(), b.shape()});
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    const graph::DataType outType = kBoolResult ? graph::DataType::Bool : a.dtype();
    Tensor out = Tensor::allocate(outType, plan->outShape);
    auto run = [&]<typename T>() {
        using R = std::conditional_t<kBoolResult, bool, T>;
        broadcastBinary(*plan, a.data<T>(), b.data<T>(), out.mutableData<R>(),
                        [&](T x, T y) { return static_cast<R>(f(x, y)); });
    };
    if constexpr (kAllowBool) {
        if (a.dtype() == graph::DataType::Bool) {
            run.template operator()<bool>();
            return std::vector<Tensor>{out};
        }
    }
    if (!dispatchNumeric(a.dtype(), run)) {
        return ctx.error(Errc::Unsupported,
                         "unsupported input type " + std::string(graph::dataTypeName(a.dtype())));
    }
    return std::vector<Tensor>{out};
}

/// One operand the output's shape, the other one value per plane: its dims (left-padded with
/// ones to the output's rank) the output's up to some axis and 1 after it (a squeeze-and-excitation
/// scale [N, C, 1, 1] on [N, C, H, W], a scalar on anything). `fullIsA` says which operand is
/// whole; the output is `outer` planes of `inner` values.
struct PlaneBroadcast {
    bool fullIsA = true;
    int64_t outer = 0;
    int64_t inner = 0;
};

inline std::optional<PlaneBroadcast> planeBroadcast(const Shape& a, const Shape& b,
                                                    const Shape& out) {
    if ((a == out) == (b == out)) {
        return std::nullopt;
    }
    const bool fullIsA = a == out;
    const Shape& given = fullIsA ? b : a;
    if (given.size() > out.size()) {
        return std::nullopt;
    }
    Shape other(out.size() - given.size(), 1);
    other.insert(other.end(), given.begin(), given.end());
    size_t axis = 0;
    while (axis < out.size() && other[axis] == out[axis]) {
        ++axis;
    }
    for (size_t d = axis; d < out.size(); ++d) {
        if (other[d] != 1) {
            return std::nullopt;
        }
    }
    return PlaneBroadcast{
        fullIsA, shapeNumElements(other),
        shapeNumElements(Shape(out.begin() + static_cast<std::ptrdiff_t>(axis), out.end()))};
}

/// broadcastVjp for a PlaneBroadcast, over the threads in pieces of a plane: each piece's share of
/// the per-plane operand's gradient is summed in double, and the pieces of a plane are added in
/// order, so the result does not depend on the thread count (a scalar's gradient is one plane of
/// the whole tensor, which one float running sum would also round badly).
template <typename FA, typename FB>
std::vector<Tensor> planeBroadcastVjp(const PlaneBroadcast& planes, const float* pa,
                                      const float* pb, const float* py, const float* dy,
                                      const Shape& aShape, const Shape& bShape, FA fa, FB fb) {
    Tensor da = allocateFloat(aShape);
    Tensor db = allocateFloat(bShape);
    float* pda = da.mutableData<float>();
    float* pdb = db.mutableData<float>();
    const int64_t inner = planes.inner;
    const bool fullIsA = planes.fullIsA;
    constexpr int64_t kPiece = int64_t{1} << 14;
    const int64_t piecesPerPlane = std::max<int64_t>(1, (inner + kPiece - 1) / kPiece);
    std::vector<double> partial(static_cast<size_t>(planes.outer * piecesPerPlane));
    parallelFor(planes.outer * piecesPerPlane,
                std::max<int64_t>(1, kPiece / std::max<int64_t>(inner, 1)),
                [&](int64_t begin, int64_t end) {
                    for (int64_t job = begin; job < end; ++job) {
                        const int64_t p = job / piecesPerPlane;
                        const int64_t first = p * inner + (job % piecesPerPlane) * kPiece;
                        const int64_t last = std::min(first + kPiece, (p + 1) * inner);
                        double sum = 0.0;
                        for (int64_t i = first; i < last; ++i) {
                            const float va = pa[fullIsA ? i : p];
                            const float vb = pb[fullIsA ? p : i];
                            const float ga = dy[i] * static_cast<float>(fa(va, vb, py[i]));
                            const float gb = dy[i] * static_cast<float>(fb(va, vb, py[i]));
                            if (fullIsA) {
                                pda[i] = ga;
                                sum += gb;
                            } else {
                                pdb[i] = gb;
                                sum += ga;
                            }
                        }
                        partial[static_cast<size_t>(job)] = sum;
                    }
                });
    float* perPlane = fullIsA ? pdb : pda;
    for (int64_t p = 0; p < planes.outer; ++p) {
        double sum = 0.0;
        for (int64_t q = 0; q < piecesPerPlane; ++q) {
            sum += partial[static_cast<size_t>(p * piecesPerPlane + q)];
        }
        perPlane[p] = static_cast<float>(sum);
    }
    return std::vector<Tensor>{da, db};
}

template <typename FA, typename FB>
Result<std::vector<Tensor>> broadcastVjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                         std::span<const Tensor> outputGrads, FA fa, FB fb) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    const float* py = outputs[0].data<float>();
    const float* dy = outputGrads[0].data<float>();
    if (a.shape() == b.shape() && a.shape() == outputs[0].shape()) {
        // No broadcasting (a residual Add, say): one flat loop the compiler vectorises.
        Tensor da = allocateFloat(a.shape());
        Tensor db = allocateFloat(b.shape());
        float* pda = da.mutableData<float>();
        float* pdb = db.mutableData<float>();
        parallelFor(a.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                pda[i] = dy[i] * static_cast<float>(fa(pa[i], pb[i], py[i]));
                pdb[i] = dy[i] * static_cast<float>(fb(pa[i], pb[i], py[i]));
            }
        });
        return std::vector<Tensor>{da, db};
    }
    if (const auto planes = planeBroadcast(a.shape(), b.shape(), outputs[0].shape())) {
        return planeBroadcastVjp(*planes, pa, pb, py, dy, a.shape(), b.shape(), fa, fb);
    }
    auto plan = makeBroadcastPlan({outputs[0].shape(), a.shape(), b.shape()});
    QS_CHECK(plan.ok(), "forward shapes broadcast, so the backward ones do");
    Tensor da = Tensor::zeros(graph::DataType::Float, a.shape());
    Tensor db = Tensor::zeros(graph::DataType::Float, b.shape());
    float* pda = da.mutableData<float>();
    float* pdb = db.mutableData<float>();
    forEachBroadcast(*plan, [&](int64_t, const int64_t* off) {
        const float g = dy[off[0]];
        const float va = pa[off[1]];
        const float vb = pb[off[2]];
        const float vy = py[off[0]];
        pda[off[1]] += g * static_cast<float>(fa(va, vb, vy));
        pdb[off[2]] += g * static_cast<float>(fb(va, vb, vy));
    });
    return std::vector<Tensor>{da, db};
}

/// Samples for a binary float op: equal shapes, a broadcast row, a scalar.
inline std::vector<OpSample> binarySamples(std::mt19937& rng, float lo = -1.0F, float hi = 1.0F) {
    return {
        {"same 2x3",
         {},
         {randomTensor(rng, {2, 3}, lo, hi), randomTensor(rng, {2, 3}, lo, hi)},
         {}},
        {"bcast 2x3x4 by 3x1",
         {},
         {randomTensor(rng, {2, 3, 4}, lo, hi), randomTensor(rng, {3, 1}, lo, hi)},
         {}},
        {"bcast 2x3x4x5 by 2x3x1x1 (one value per plane)",
         {},
         {randomTensor(rng, {2, 3, 4, 5}, lo, hi), randomTensor(rng, {2, 3, 1, 1}, lo, hi)},
         {}},
        {"bcast 2x3x1 by 2x3x4 (the plane operand first)",
         {},
         {randomTensor(rng, {2, 3, 1}, lo, hi), randomTensor(rng, {2, 3, 4}, lo, hi)},
         {}},
        {"bcast scalar by 2x2",
         {},
         {randomTensor(rng, {}, lo, hi), randomTensor(rng, {2, 2}, lo, hi)},
         {}},
    };
}

} // namespace qs::runtime
