// Transpose (ONNX since 1): y[i_perm] = x[i]; out dim d = in dim perm[d] (default: reversed).
// VJP: dy transposed back by the inverse permutation.

#include "core/runtime/index_map.h"

namespace qs::runtime {
namespace {

/// The transpose as a strided view of x: output dim d walks x with stride strides[d].
struct TransposeView {
    Shape outShape;
    std::vector<int64_t> strides;
};

Result<TransposeView> transposeView(const OpContext& ctx) {
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
    std::vector<bool> seen(shape.size(), false);
    TransposeView view;
    for (const int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(shape.size()) || seen[static_cast<size_t>(p)]) {
            return ctx.error(Errc::InvalidModel, "perm is not a permutation");
        }
        seen[static_cast<size_t>(p)] = true;
        view.outShape.push_back(shape[static_cast<size_t>(p)]);
        view.strides.push_back(inStrides[static_cast<size_t>(p)]);
    }
    return view;
}

// The reference: output coords c map to input offset sum_d c[d] * stride[perm[d]].
Result<std::vector<int64_t>> indexMap(const OpContext& ctx, Shape& outShape) {
    QS_ASSIGN_OR_RETURN(const TransposeView view, transposeView(ctx));
    outShape = view.outShape;
    std::vector<int64_t> index(static_cast<size_t>(shapeNumElements(outShape)));
    forEachCoordinate(outShape, [&](int64_t flat, const std::vector<int64_t>& c) {
        int64_t offset = 0;
        for (size_t d = 0; d < c.size(); ++d) {
            offset += c[d] * view.strides[d];
        }
        index[static_cast<size_t>(flat)] = offset;
    });
    return index;
}

// Axes that stay neighbours collapse into one (a channel shuffle keeps H x W, so it copies runs
// of H x W elements); a permutation that moves the last axis copies square tiles.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const TransposeView view, transposeView(ctx));
    const Tensor& x = ctx.input(0);
    Tensor y = Tensor::allocate(x.dtype(), view.outShape);
    copyStrided(x.rawData(), y.mutableRawData(), runtimeElementSize(x.dtype()),
                {view.outShape, view.strides, stridesOf(view.outShape)});
    return std::vector<Tensor>{std::move(y)};
}

// dx = dy transposed by the inverse permutation: the same view, written instead of read.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const TransposeView view, transposeView(ctx));
    std::vector<Tensor> grads(ctx.numInputs());
    // Integer data (a permuted shape) is not differentiable.
    if (ctx.input(0).dtype() != graph::DataType::Float) {
        return grads;
    }
    if (!outputGrads[0].defined()) {
        grads[0] = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
        return grads;
    }
    Tensor dx = allocateFloat(ctx.input(0).shape());
    copyStrided(outputGrads[0].data<float>(), dx.mutableData<float>(), sizeof(float),
                {view.outShape, stridesOf(view.outShape), view.strides});
    grads[0] = std::move(dx);
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    const auto transpose = [](std::string label, std::vector<int64_t> perm, Tensor x) {
        std::vector<graph::Attribute> attributes;
        if (!perm.empty()) {
            attributes.push_back(intsAttribute("perm", std::move(perm)));
        }
        return OpSample{std::move(label), std::move(attributes), {std::move(x)}, {}};
    };
    return {
        transpose("perm 0,2,3,1", {0, 2, 3, 1}, randomTensor(rng, {2, 3, 4, 2})),
        transpose("default", {}, randomTensor(rng, {2, 3})),
        // ShuffleNet's channel shuffle: H x W stays one run.
        transpose("channel shuffle", {0, 2, 1, 3, 4}, randomTensor(rng, {2, 2, 3, 4, 5})),
        transpose("rank 1", {}, randomTensor(rng, {7})),
        // Larger than one tile with partial tiles at both edges.
        transpose("batched 2-D, 17 x 19", {0, 2, 1}, randomTensor(rng, {2, 17, 19})),
        transpose("perm 3,1,2,0", {3, 1, 2, 0}, randomTensor(rng, {3, 2, 4, 5})),
        transpose("rank 5 reversed", {4, 3, 2, 1, 0}, randomTensor(rng, {2, 3, 2, 3, 2})),
        transpose("unit dims", {1, 3, 0, 2, 4}, randomTensor(rng, {2, 1, 5, 1, 3})),
        transpose("identity", {0, 1, 2}, randomTensor(rng, {2, 3, 4})),
        transpose("int64, perm 2,0,1", {2, 0, 1},
                  Tensor::fromVector<int64_t>({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})),
        transpose("int64, keeps last", {1, 0, 2},
                  Tensor::fromVector<int64_t>({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}))};
}

const OpDef kTranspose{.opType = "Transpose",
                       .domain = "",
                       .sinceVersion = 1,
                       .doc = "permute dims",
                       .minInputs = 1,
                       .maxInputs = 1,
                       .forward = forward,
                       .reference = gatherForward<indexMap>,
                       .vjp = vjp,
                       .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(transpose, kTranspose)
