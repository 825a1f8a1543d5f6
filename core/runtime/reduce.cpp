#include "core/runtime/reduce.h"

#include <algorithm>

namespace qs::runtime {

Result<ReducePlan> makeReducePlanForAxes(const Shape& shape, std::vector<int64_t> axes,
                                         bool keepDims) {
    const auto rank = static_cast<int64_t>(shape.size());
    std::vector<bool> reduced(shape.size(), false);
    for (int64_t axis : axes) {
        if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
            return Error(Errc::InvalidModel, "reduction axis " + std::to_string(axis) +
                                                 " is out of range for rank " +
                                                 std::to_string(rank));
        }
        if (rank > 0) {
            reduced[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = true;
        }
    }
    ReducePlan r;
    for (size_t d = 0; d < shape.size(); ++d) {
        r.keptShape.push_back(reduced[d] ? 1 : shape[d]);
        if (reduced[d]) {
            r.groupSize *= shape[d];
            if (keepDims) {
                r.outShape.push_back(1);
            }
        } else {
            r.outShape.push_back(shape[d]);
        }
    }
    QS_ASSIGN_OR_RETURN(r.plan, makeBroadcastPlan({shape, r.keptShape}));
    return r;
}

Result<ReducePlan> makeReducePlan(const OpContext& ctx, bool axesFromInput) {
    const Shape& shape = ctx.input(0).shape();
    std::vector<int64_t> axes =
        axesFromInput ? (ctx.has(1) ? toInt64Vector(ctx.input(1)) : std::vector<int64_t>{})
                      : ctx.intsAttr("axes");
    const bool keepDims = ctx.intAttr("keepdims", 1) != 0;
    if (axes.empty()) {
        if (ctx.intAttr("noop_with_empty_axes", 0) != 0) {
            return makeReducePlanForAxes(shape, {}, keepDims);
        }
        for (size_t d = 0; d < shape.size(); ++d) {
            axes.push_back(static_cast<int64_t>(d));
        }
    }
    auto plan = makeReducePlanForAxes(shape, std::move(axes), keepDims);
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    return plan;
}

} // namespace qs::runtime
