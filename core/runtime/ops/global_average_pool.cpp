// GlobalAveragePool (ONNX since 1): y[n, c, 1...] = mean of x[n, c, ...], summed in double
// (sumInDouble's partial sums). VJP: dy / (H W ...) to every input position.

#include "core/runtime/parallel.h"
#include "core/runtime/pooling.h"
#include "core/runtime/sum_of_squares.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(Shape outShape, globalPoolShape(ctx));
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t inner = x.numElements() / std::max<int64_t>(planes, 1);
    Tensor y = allocateFloat(outShape);
    const float* px = x.data<float>();
    float* py = y.mutableData<float>();
    parallelFor(planes, 16, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            py[p] =
                static_cast<float>(sumInDouble(px + p * inner, inner) / static_cast<double>(inner));
        }
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1);
    const int64_t inner = x.numElements() / std::max<int64_t>(planes, 1);
    Tensor dx = allocateFloat(x.shape());
    const float* dy = outputGrads[0].data<float>();
    float* pdx = dx.mutableData<float>();
    for (int64_t p = 0; p < planes; ++p) {
        const float share = dy[p] / static_cast<float>(inner);
        for (int64_t i = 0; i < inner; ++i) {
            pdx[p * inner + i] = share;
        }
    }
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4x5", {}, {randomTensor(rng, {2, 3, 4, 5})}, {}}};
}

const OpDef kGlobalAveragePool{.opType = "GlobalAveragePool",
                               .domain = "",
                               .sinceVersion = 1,
                               .doc = "mean over all spatial positions",
                               .minInputs = 1,
                               .maxInputs = 1,
                               .forward = forward,
                               .reference = nullptr,
                               .vjp = vjp,
                               .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(global_average_pool, kGlobalAveragePool)
