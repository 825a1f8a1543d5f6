// Reductions shared by the Reduce* ops, GlobalAveragePool/GlobalMaxPool and the norms: which axes
// (attribute before opset 13/18, input after), keepdims, noop_with_empty_axes, and a loop that
// visits every input element with the offset of the output element it reduces into. The Reduce*
// ops differ only in a ReduceKind (start value, fold, finish, element gradient); the forward
// kernel, the VJP and the test samples are shared here and run on float32 and float64.
#pragma once

#include "core/runtime/op_util.h"

namespace qs::runtime {

struct ReducePlan {
    Shape keptShape;       ///< input shape with reduced dims set to 1
    Shape outShape;        ///< keptShape, or without the reduced dims when keepdims = 0
    int64_t groupSize = 1; ///< input elements per output element
    BroadcastPlan plan;    ///< over {inputShape, keptShape}
};

/// Reads axes (attribute `axes`, or input 1 when `axesFromInput`), keepdims and
/// noop_with_empty_axes. Empty axes reduce everything unless noop_with_empty_axes is set.
Result<ReducePlan> makeReducePlan(const OpContext& ctx, bool axesFromInput);

/// Reduces the fixed `axes` of `shape` (for GlobalAveragePool: every axis from 2 on).
Result<ReducePlan> makeReducePlanForAxes(const Shape& shape, const std::vector<int64_t>& axes,
                                         bool keepDims);

/// Calls fn(inIndex, outIndex) for every input element.
template <typename Fn>
void forEachReduced(const ReducePlan& r, Fn&& fn) {
    forEachBroadcast(r.plan, [&](int64_t, const int64_t* off) { fn(off[0], off[1]); });
}

/// What one Reduce* op computes, in double precision whatever the tensor type:
/// y = finish(fold(init, x_1, ..., x_n), n), and dL/dx_i = grad(x_i, y, dL/dy, n).
struct ReduceKind {
    double init = 0.0;
    double (*fold)(double acc, double x) = nullptr;
    double (*finish)(double acc, double groupSize) = nullptr; ///< nullptr: y = acc
    /// nullptr: the op is an extremum (ReduceMax/Min) and dy goes to the first element equal to
    /// y, or (with `differentiable` false) the op has no VJP.
    double (*grad)(double x, double y, double dy, double groupSize) = nullptr;
    /// Fold x - max instead of x and add max back after finish, so exp never overflows
    /// (ReduceLogSumExp: lse = m + log(sum exp(x - m))).
    bool shiftByMax = false;
    /// fold is acc + x (ReduceSum, ReduceMean): contiguous runs are then summed inline, four
    /// runs at once, each still in the generic loop's order.
    bool plainSum = false;
    /// fold is std::max(acc, x) (+1: ReduceMax) or std::min(acc, x) (-1: ReduceMin): runs of floats
    /// then fold eight lanes at a time, and a few long runs split over the threads.
    int extremum = 0;
};

/// The plan of a Reduce* node: x is float32 or float64, axes from the attribute when present,
/// from input 1 otherwise (opset 13 for ReduceSum, 18 for the others).
Result<ReducePlan> makeReduceOpPlan(const OpContext& ctx);

/// Forward of a Reduce* node (also its reference: one plain pass, double accumulators).
Result<std::vector<Tensor>> reduceForward(const OpContext& ctx, const ReduceKind& kind);

/// VJP of a Reduce* node from `kind.grad`, or the extremum rule when it is null.
Result<std::vector<Tensor>> reduceVjp(const OpContext& ctx, const ReduceKind& kind,
                                      std::span<const Tensor> outputs,
                                      std::span<const Tensor> outputGrads);

/// The registry samples every Reduce* op offers: axes with keepdims, negative axes without, all
/// axes, axes as an input; values in [0.1, 1) (positive, for the logs).
std::vector<OpSample> reduceSamples(std::mt19937& rng);

/// The same with values kept apart, so max/min never swap winners under finite differences.
std::vector<OpSample> reduceSamplesDistinct(std::mt19937& rng);

/// An op file's forward and VJP entries for its ReduceKind: `.forward = reduceForwardOf<kKind>`.
template <const ReduceKind& Kind>
Result<std::vector<Tensor>> reduceForwardOf(const OpContext& ctx) {
    return reduceForward(ctx, Kind);
}

template <const ReduceKind& Kind>
Result<std::vector<Tensor>> reduceVjpOf(const OpContext& ctx, std::span<const Tensor> outputs,
                                        std::span<const Tensor> outputGrads) {
    return reduceVjp(ctx, Kind, outputs, outputGrads);
}

} // namespace qs::runtime
