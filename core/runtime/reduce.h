// Reductions shared by the Reduce* ops, GlobalAveragePool/GlobalMaxPool and the norms: which axes
// (attribute before opset 13/18, input after), keepdims, noop_with_empty_axes, and a loop that
// visits every input element with the offset of the output element it reduces into.
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
Result<ReducePlan> makeReducePlanForAxes(const Shape& shape, std::vector<int64_t> axes,
                                         bool keepDims);

/// Calls fn(inIndex, outIndex) for every input element.
template <typename Fn>
void forEachReduced(const ReducePlan& r, Fn&& fn) {
    forEachBroadcast(r.plan, [&](int64_t, const int64_t* off) { fn(off[0], off[1]); });
}

} // namespace qs::runtime
