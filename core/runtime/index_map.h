// Data movement as an index map: Transpose, Slice, Tile, Expand, Pad and Gather each compute, for
// every output element, the flat index of the input element it copies (-1: a padding value). The
// forward pass gathers through the map for any element type; the VJP scatter-adds the output
// gradient back through the same map, so each op states its indexing once.
#pragma once

#include "core/runtime/op_util.h"

namespace qs::runtime {

/// out[i] = src[index[i]], or `fill` (an element of src's type, or zero) where index[i] < 0.
Tensor gatherByIndex(const Tensor& src, Shape outShape, const std::vector<int64_t>& index,
                     const Tensor* fill = nullptr);

/// d_src[index[i]] += grad[i] (float).
Tensor scatterAddByIndex(const Tensor& grad, const Shape& srcShape,
                         const std::vector<int64_t>& index);

/// A copy between two strided views of one shape: dst[sum_d c_d * dstStrides_d] =
/// src[sum_d c_d * srcStrides_d] for every coordinate c of `dims` (strides in elements). Slice,
/// Transpose and their VJPs are such copies with one side contiguous; unlike an index map it needs
/// no per-element table, and runs of elements that stay contiguous on both sides become memcpy.
struct StridedCopy {
    Shape dims;
    std::vector<int64_t> srcStrides;
    std::vector<int64_t> dstStrides;
};

/// Performs `copy` for elements of `elementSize` bytes; src and dst point at coordinate 0.
void copyStrided(const void* src, void* dst, size_t elementSize, const StridedCopy& copy);

/// A data-movement op's index map: fills `outShape` and returns, per output element, the offset
/// of the input element it copies.
using IndexMapFn = Result<std::vector<int64_t>> (*)(const OpContext& ctx, Shape& outShape);

/// Forward of an op that only moves data (Gather, Slice, Tile, Transpose, Expand): y = x through
/// Map. An op file writes `.forward = gatherForward<indexMap>`.
template <IndexMapFn Map>
Result<std::vector<Tensor>> gatherForward(const OpContext& ctx) {
    Shape outShape;
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, Map(ctx, outShape));
    return std::vector<Tensor>{gatherByIndex(ctx.input(0), outShape, index)};
}

/// Its VJP: dy scattered back through Map into x's shape; the other inputs (indices, shapes) get
/// no gradient.
template <IndexMapFn Map>
Result<std::vector<Tensor>> gatherVjp(const OpContext& ctx, std::span<const Tensor>,
                                      std::span<const Tensor> outputGrads) {
    Shape outShape;
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, Map(ctx, outShape));
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = scatterAddByIndex(outputGrads[0], ctx.input(0).shape(), index);
    return grads;
}

/// Calls fn(outFlat, coords) for each element of `shape` in row-major order.
template <typename Fn>
void forEachCoordinate(const Shape& shape, Fn&& fn) {
    const int64_t total = shapeNumElements(shape);
    std::vector<int64_t> coords(shape.size(), 0);
    for (int64_t flat = 0; flat < total; ++flat) {
        fn(flat, coords);
        for (size_t d = shape.size(); d-- > 0;) {
            if (++coords[d] < shape[d]) {
                break;
            }
            coords[d] = 0;
        }
    }
}

} // namespace qs::runtime
