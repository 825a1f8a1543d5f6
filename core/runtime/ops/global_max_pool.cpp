// GlobalMaxPool (ONNX since 1): y[n, c, 1...] = max of x[n, c, ...]. VJP: dy to the first maximum.

#include "core/runtime/pooling.h"

#include <limits>

namespace qs::runtime {
namespace {

/// Offset of the first maximum of each plane.
std::vector<int64_t> argmaxPerPlane(const Tensor& x) {
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t inner = x.numElements() / std::max<int64_t>(planes, 1);
    const float* px = x.data<float>();
    std::vector<int64_t> where(static_cast<size_t>(planes));
    for (int64_t p = 0; p < planes; ++p) {
        int64_t best = 0;
        for (int64_t i = 1; i < inner; ++i) {
            if (px[p * inner + i] > px[p * inner + best]) {
                best = i;
            }
        }
        where[static_cast<size_t>(p)] = p * inner + best;
    }
    return where;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(Shape outShape, globalPoolShape(ctx));
    const std::vector<int64_t> where = argmaxPerPlane(ctx.input(0));
    Tensor y = allocateFloat(outShape);
    for (size_t p = 0; p < where.size(); ++p) {
        y.mutableData<float>()[p] = ctx.input(0).data<float>()[where[p]];
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    const std::vector<int64_t> where = argmaxPerPlane(ctx.input(0));
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    for (size_t p = 0; p < where.size(); ++p) {
        dx.mutableData<float>()[where[p]] = outputGrads[0].data<float>()[p];
    }
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4x5", {}, {randomDistinct(rng, {2, 3, 4, 5})}, {}}};
}

const OpDef kGlobalMaxPool{.opType = "GlobalMaxPool",
                           .domain = "",
                           .sinceVersion = 1,
                           .doc = "maximum over all spatial positions",
                           .minInputs = 1,
                           .maxInputs = 1,
                           .forward = forward,
                           .reference = nullptr,
                           .vjp = vjp,
                           .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(global_max_pool, kGlobalMaxPool)
