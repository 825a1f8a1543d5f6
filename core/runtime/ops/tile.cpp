// Tile (ONNX since 6): y repeats x `repeats[d]` times along each dim d. The forward is one strided
// copy: output dim d splits into (repeat, index) axes, the repeat axis reading the input with
// stride 0, so runs along the innermost dim are memcpy and no per-element table is built (the
// index map took 400 ms and 230 MB of indices for a 115 MB output). VJP: the tiles of dy summed
// into dx, through the index map.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

/// The output shape, or an error for repeats that do not fit x.
Result<Shape> tiledShape(const OpContext& ctx, const std::vector<int64_t>& repeats) {
    const Shape& shape = ctx.input(0).shape();
    if (repeats.size() != shape.size()) {
        return ctx.error(Errc::InvalidModel, "repeats must have one entry per dim");
    }
    Shape out = shape;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (repeats[d] < 0) {
            return ctx.error(Errc::InvalidModel, "negative repeat");
        }
        out[d] *= repeats[d];
    }
    return out;
}

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    QS_ASSIGN_OR_RETURN(outShape, tiledShape(ctx, toInt64Vector(ctx.input(1))));
    const std::vector<int64_t> strides = stridesOf(shape);
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.size(); ++d) {
            offset += (c[d] % shape[d]) * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> repeats = toInt64Vector(ctx.input(1));
    QS_ASSIGN_OR_RETURN(Shape outShape, tiledShape(ctx, repeats));
    const std::vector<int64_t> inStrides = stridesOf(x.shape());
    const std::vector<int64_t> outStrides = stridesOf(outShape);
    StridedCopy copy;
    for (size_t d = 0; d < repeats.size(); ++d) {
        const int64_t extent = x.shape()[d];
        copy.dims.insert(copy.dims.end(), {repeats[d], extent});
        copy.srcStrides.insert(copy.srcStrides.end(), {0, inStrides[d]});
        copy.dstStrides.insert(copy.dstStrides.end(), {extent * outStrides[d], outStrides[d]});
    }
    Tensor y = Tensor::allocate(x.dtype(), std::move(outShape));
    copyStrided(x.rawData(), y.mutableRawData(), runtimeElementSize(x.dtype()), copy);
    return std::vector<Tensor>{y};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3 by 2,3", {}, {randomTensor(rng, {2, 3}), int64Tensor<int>({2, 3})}, {0}},
            {"2x1x3 by 1,4,2 (a repeat of a size-1 dim)",
             {},
             {randomTensor(rng, {2, 1, 3}), int64Tensor<int>({1, 4, 2})},
             {0}},
            {"3x5 by 2,1", {}, {randomTensor(rng, {3, 5}), int64Tensor<int>({2, 1})}, {0}},
            {"4 by 0 (empty)", {}, {randomTensor(rng, {4}), int64Tensor<int>({0})}, {0}}};
}

const OpDef kTile{.opType = "Tile",
                  .domain = "",
                  .sinceVersion = 6,
                  .doc = "repeat along each dim",
                  .minInputs = 2,
                  .maxInputs = 2,
                  .forward = forward,
                  .reference = gatherForward<indexMap>,
                  .vjp = gatherVjp<indexMap>,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(tile, kTile)
