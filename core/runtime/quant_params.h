// Scale/zero-point addressing shared by QuantizeLinear and DequantizeLinear: per-tensor (one
// scale), per-axis (one scale per index of `axis`, default 1) and blocked (opset 21: scale has
// x's rank with dim(axis) = ceil(x.dim(axis) / block_size)). Maps each element of x to the index
// of its scale and zero point.
#pragma once

#include "core/runtime/index_map.h"

namespace qs::runtime {

inline Result<std::vector<int64_t>> quantParamIndex(const OpContext& ctx, const Tensor& x,
                                                    const Tensor& scale) {
    std::vector<int64_t> index(static_cast<size_t>(x.numElements()), 0);
    if (scale.numElements() == 1 && scale.rank() <= 1) {
        return index;
    }
    const auto rank = static_cast<int64_t>(x.rank());
    QS_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(ctx.intAttr("axis", 1), rank, ctx));
    const int64_t block = ctx.intAttr("block_size", 0);
    if (block <= 0) {
        if (scale.rank() != 1 || scale.numElements() != x.dim(axis)) {
            return ctx.error(Errc::InvalidModel, "per-axis scale must have x.dim(axis) elements");
        }
        forEachCoordinate(x.shape(), [&](int64_t flat, const std::vector<int64_t>& c) {
            index[static_cast<size_t>(flat)] = c[static_cast<size_t>(axis)];
        });
        return index;
    }
    if (scale.rank() != x.rank()) {
        return ctx.error(Errc::InvalidModel, "blocked scale must have x's rank");
    }
    const std::vector<int64_t> strides = stridesOf(scale.shape());
    bool fits = true;
    forEachCoordinate(x.shape(), [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.size(); ++d) {
            const int64_t pos = static_cast<int64_t>(d) == axis ? c[d] / block : c[d];
            fits = fits && pos < scale.shape()[d];
            offset += pos * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    if (!fits) {
        return ctx.error(Errc::InvalidModel, "blocked scale does not cover x");
    }
    return index;
}

} // namespace qs::runtime
