// Relu (ONNX since 1): y = max(x, 0). VJP: dx = dy where x > 0.

#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Tensor& x = ctx.input(0);
    Tensor y = allocateFloat(x.shape());
    const float* src = x.data<float>();
    float* dst = y.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            dst[i] = src[i] > 0.0F ? src[i] : 0.0F;
        }
    });
    return std::vector<Tensor>{y};
}

// The mask from the output: y > 0 exactly where x > 0 (a NaN fails both), and the output is what
// Executor::forwardForBackward keeps of a fused Conv + Relu.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const Tensor& x = ctx.input(0);
    const Tensor& y = !outputs.empty() && outputs[0].rawData() != nullptr ? outputs[0] : x;
    Tensor dx = ctx.reusesOutputGrad(0) ? outputGrads[0] : allocateFloat(x.shape());
    const float* src = y.data<float>();
    const float* dy = outputGrads[0].data<float>();
    float* dst = dx.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            // dy read unconditionally: a load under the condition keeps GCC from vectorising.
            const float g = dy[i];
            dst[i] = src[i] > 0.0F ? g : 0.0F;
        }
    });
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {}, {randomAwayFromZero(rng, {2, 3, 4})}, {}}};
}

const OpDef kRelu{.opType = "Relu",
                  .domain = "",
                  .sinceVersion = 1,
                  .doc = "max(x, 0)",
                  .minInputs = 1,
                  .maxInputs = 1,
                  .forward = forward,
                  .reference = nullptr,
                  .vjp = vjp,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(relu, kRelu)
