// Transpose (ONNX since 1): y[i_perm] = x[i]; out dim d = in dim perm[d] (default: reversed).
// VJP: dy transposed back through the same index map.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

// Shape rule and index map: output coords c map to input offset sum_d c[d] * stride[perm[d]].
Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    const Shape& shape = ctx.input(0).shape();
    std::vector<int64_t> perm = ctx.intsAttr("perm");
    if (perm.empty()) {
        for (size_t d = shape.size(); d-- > 0;) {
            perm.push_back(static_cast<int64_t>(d));
        }
    }
    if (perm.size() != shape.size()) {
        return ctx.error(Errc::InvalidModel, "perm does not match the rank");
    }
    const std::vector<int64_t> inStrides = stridesOf(shape);
    std::vector<int64_t> strides;
    outShape.clear();
    for (const int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(shape.size())) {
            return ctx.error(Errc::InvalidModel, "perm entry out of range");
        }
        outShape.push_back(shape[static_cast<size_t>(p)]);
        strides.push_back(inStrides[static_cast<size_t>(p)]);
    }
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.size(); ++d) {
            offset += c[d] * strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"perm 0,2,3,1",
             {intsAttribute("perm", {0, 2, 3, 1})},
             {randomTensor(rng, {2, 3, 4, 2})},
             {}},
            {"default", {}, {randomTensor(rng, {2, 3})}, {}}};
}

const OpDef kTranspose{.opType = "Transpose",
                       .domain = "",
                       .sinceVersion = 1,
                       .doc = "permute dims",
                       .minInputs = 1,
                       .maxInputs = 1,
                       .forward = gatherForward<indexMap>,
                       .reference = nullptr,
                       .vjp = gatherVjp<indexMap>,
                       .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(transpose, kTranspose)
