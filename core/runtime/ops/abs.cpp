// Abs (ONNX since 6): y = |x|; dy/dx = sign(x), on every signed numeric type.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor y = Tensor::allocate(x.dtype(), x.shape());
    const bool ok = dispatchNumeric(x.dtype(), [&]<typename T>() {
        const T* src = x.data<T>();
        T* dst = y.mutableData<T>();
        for (int64_t i = 0; i < x.numElements(); ++i) {
            const T v = src[i];
            dst[i] = v < T(0) ? static_cast<T>(-v) : v;
        }
    });
    if (!ok) {
        return ctx.error(Errc::Unsupported, "unsupported input type");
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return unaryFloatVjp(ctx, outputs, outputGrads,
                         []([[maybe_unused]] float x, float) { return x > 0 ? 1.0F : -1.0F; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"3x4", {}, {randomAwayFromZero(rng, {3, 4})}, {}}};
}

const OpDef kDef{.opType = "Abs",
                 .domain = "",
                 .sinceVersion = 6,
                 .doc = "y = |x|; dy/dx = sign(x)",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(abs, kDef)
