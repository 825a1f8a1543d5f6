// Softmax and LogSoftmax share their layout: before opset 13 the input is coerced to 2-D at
// `axis` (default 1) and normalised over everything after it; from opset 13 on, over `axis`
// alone (default -1). Both views are [outer, length, inner] with the reduction over `length`.
#pragma once

#include "core/runtime/op_util.h"

namespace qs::runtime {

struct SoftmaxLayout {
    int64_t outer = 1;
    int64_t length = 1;
    int64_t inner = 1;
};

inline Result<SoftmaxLayout> softmaxLayout(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    const bool legacy = ctx.opset < 13;
    QS_ASSIGN_OR_RETURN(const int64_t axis,
                        normalizeAxis(ctx.intAttr("axis", legacy ? 1 : -1), rank, ctx));
    SoftmaxLayout layout;
    for (int64_t d = 0; d < rank; ++d) {
        if (d < axis) {
            layout.outer *= shape[static_cast<size_t>(d)];
        } else if (d == axis || legacy) {
            layout.length *= shape[static_cast<size_t>(d)];
        } else {
            layout.inner *= shape[static_cast<size_t>(d)];
        }
    }
    return layout;
}

} // namespace qs::runtime
