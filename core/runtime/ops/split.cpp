// Split (ONNX since 2; split as an input since 13, num_outputs since 18): cuts x along `axis`
// into the given sizes, or into equal parts (the last one smaller when it does not divide).
// VJP: the output gradients concatenated (missing ones as zeros).

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

struct SplitShape {
    int64_t axis = 0;
    std::vector<int64_t> sizes;
};

// Shape rule: the sizes along axis sum to x's dim.
Result<SplitShape> inferShape(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    SplitShape s;
    QS_ASSIGN_OR_RETURN(
        s.axis, normalizeAxis(ctx.intAttr("axis", 0), static_cast<int64_t>(shape.size()), ctx));
    const int64_t dim = shape[static_cast<size_t>(s.axis)];
    s.sizes = ctx.has(1) ? toInt64Vector(ctx.input(1)) : ctx.intsAttr("split");
    const auto parts = static_cast<int64_t>(ctx.node.outputs.size());
    if (s.sizes.empty()) {
        const int64_t chunk = (dim + parts - 1) / std::max<int64_t>(parts, 1);
        for (int64_t p = 0; p < parts; ++p) {
            s.sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - p * chunk)));
        }
    }
    int64_t total = 0;
    for (const int64_t size : s.sizes) {
        total += size;
    }
    if (total != dim || static_cast<int64_t>(s.sizes.size()) != parts) {
        return ctx.error(Errc::InvalidModel, "split sizes do not add up to the dim");
    }
    return s;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(SplitShape s, inferShape(ctx));
    const Shape& shape = ctx.input(0).shape();
    const std::vector<int64_t> strides = stridesOf(shape);
    std::vector<Tensor> outputs;
    int64_t begin = 0;
    for (const int64_t size : s.sizes) {
        Shape outShape = shape;
        outShape[static_cast<size_t>(s.axis)] = size;
        std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
        forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
            int64_t offset = 0;
            for (size_t d = 0; d < c.size(); ++d) {
                offset += (c[d] + (static_cast<int64_t>(d) == s.axis ? begin : 0)) * strides[d];
            }
            index[static_cast<size_t>(flat)] = offset;
        });
        outputs.push_back(gatherByIndex(ctx.input(0), outShape, index));
        begin += size;
    }
    return outputs;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(SplitShape s, inferShape(ctx));
    const Shape& shape = ctx.input(0).shape();
    Tensor dx = Tensor::zeros(graph::DataType::Float, shape);
    float* pdx = dx.mutableData<float>();
    const std::vector<int64_t> strides = stridesOf(shape);
    int64_t begin = 0;
    for (size_t p = 0; p < s.sizes.size(); ++p) {
        Shape outShape = shape;
        outShape[static_cast<size_t>(s.axis)] = s.sizes[p];
        if (p < outputGrads.size() && outputGrads[p].defined()) {
            const float* g = outputGrads[p].data<float>();
            forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
                int64_t offset = 0;
                for (size_t d = 0; d < c.size(); ++d) {
                    offset += (c[d] + (static_cast<int64_t>(d) == s.axis ? begin : 0)) * strides[d];
                }
                pdx[offset] += g[flat];
            });
        }
        begin += s.sizes[p];
    }
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"axis 1 sizes 1,3",
             {intAttribute("axis", 1)},
             {randomTensor(rng, {2, 4}), int64Tensor<int>({1, 3})},
             {0},
             2},
            {"equal parts", {}, {randomTensor(rng, {5, 2})}, {0}, 3}};
}

const OpDef kSplit{.opType = "Split",
                   .domain = "",
                   .sinceVersion = 2,
                   .doc = "cut along an axis",
                   .minInputs = 1,
                   .maxInputs = 2,
                   .forward = forward,
                   .reference = nullptr,
                   .vjp = vjp,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(split, kSplit)
