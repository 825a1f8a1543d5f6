// Tile (ONNX since 6): y repeats x `repeats[d]` times along each dim d. VJP: the tiles of dy
// summed into dx.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    const std::vector<int64_t> repeats = toInt64Vector(ctx.input(1));
    if (repeats.size() != shape.size()) {
        return ctx.error(Errc::InvalidModel, "repeats must have one entry per dim");
    }
    outShape = shape;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (repeats[d] < 0) {
            return ctx.error(Errc::InvalidModel, "negative repeat");
        }
        outShape[d] *= repeats[d];
    }
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

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3 by 2,3", {}, {randomTensor(rng, {2, 3}), int64Tensor<int>({2, 3})}, {0}}};
}

const OpDef kTile{.opType = "Tile",
                  .domain = "",
                  .sinceVersion = 6,
                  .doc = "repeat along each dim",
                  .minInputs = 2,
                  .maxInputs = 2,
                  .forward = gatherForward<indexMap>,
                  .reference = nullptr,
                  .vjp = gatherVjp<indexMap>,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(tile, kTile)
