#include "core/runtime/pooling.h"

#include <algorithm>

namespace qs::runtime {

Result<Shape> globalPoolShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    if (ctx.input(0).rank() < 2) {
        return ctx.error(Errc::InvalidModel, "x must have rank >= 2");
    }
    Shape out = ctx.input(0).shape();
    std::fill(out.begin() + 2, out.end(), 1);
    return out;
}

Result<PoolShape> poolShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3 || x.rank() > 10) {
        return ctx.error(Errc::InvalidModel, "x must have rank 3 to 10");
    }
    const std::vector<int64_t> kernel = ctx.intsAttr("kernel_shape");
    const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
    PoolShape s;
    QS_ASSIGN_OR_RETURN(s.geo,
                        convGeometry(ctx, spatial, kernel, ctx.intAttr("ceil_mode", 0) != 0));
    s.planes = x.dim(0) * x.dim(1);
    s.inSize = shapeNumElements(spatial);
    s.outSize = shapeNumElements(s.geo.output);
    s.outShape = {x.dim(0), x.dim(1)};
    s.outShape.insert(s.outShape.end(), s.geo.output.begin(), s.geo.output.end());
    return s;
}

} // namespace qs::runtime
