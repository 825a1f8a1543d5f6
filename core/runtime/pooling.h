// Sliding-window pooling shared by MaxPool and AveragePool: N-d windows over [N, C, D...] with the
// geometry of conv_geometry.h, visiting each output position's in-bounds input offsets; and the
// shape rule of GlobalAveragePool/GlobalMaxPool.
#pragma once

#include "core/runtime/conv_geometry.h"
#include "core/runtime/op_util.h"

namespace qs::runtime {

struct PoolShape {
    ConvGeometry geo;
    int64_t planes = 0; ///< N * C
    int64_t inSize = 0;
    int64_t outSize = 0;
    Shape outShape;
};

/// Shape rule: x [N, C, D...] and kernel_shape -> y [N, C, O...].
Result<PoolShape> poolShape(const OpContext& ctx);

/// Shape rule of the global pools: float x [N, C, D...] -> y [N, C, 1...].
Result<Shape> globalPoolShape(const OpContext& ctx);

/// Calls fn(outIndex, inOffset, insidePadding) for every kernel position of output `outIndex` of
/// one plane; inOffset is -1 for positions in the padding, which `insidePadding` says count for
/// count_include_pad (positions past the padding, from ceil_mode, never count).
template <typename Fn>
void forEachWindowPosition(const PoolShape& s, int64_t outIndex, Fn&& fn) {
    const ConvGeometry& g = s.geo;
    const size_t rank = g.rank();
    const int64_t kSize = shapeNumElements(g.kernel);
    int64_t outCoord[8];
    int64_t rem = outIndex;
    for (size_t d = rank; d-- > 0;) {
        outCoord[d] = rem % g.output[d];
        rem /= g.output[d];
    }
    for (int64_t k = 0; k < kSize; ++k) {
        int64_t krem = k;
        int64_t offset = 0;
        bool inside = true;
        bool inPadded = true;
        int64_t stride = 1;
        for (size_t d = rank; d-- > 0;) {
            const int64_t kd = krem % g.kernel[d];
            krem /= g.kernel[d];
            const int64_t pos = outCoord[d] * g.strides[d] + kd * g.dilations[d] - g.padsBegin[d];
            inside = inside && pos >= 0 && pos < g.input[d];
            inPadded = inPadded && pos < g.input[d] + g.padsEnd[d];
            offset += pos * stride;
            stride *= g.input[d];
        }
        fn(inside ? offset : int64_t{-1}, inPadded);
    }
}

} // namespace qs::runtime
