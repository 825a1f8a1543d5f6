// Mean (ONNX since 8): element-wise mean of the inputs (numpy broadcasting); VJP: dy / n to every
// input.

#include "core/runtime/variadic.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        variadicForward(ctx, [](auto a, auto b) { return a + b; }));
    Tensor& y = out[0];
    if (!graph::isFloatingPoint(y.dtype())) {
        return ctx.error(Errc::Unsupported, "Mean takes floating-point inputs, got " +
                                                std::string(graph::dataTypeName(y.dtype())));
    }
    const auto count = static_cast<double>(ctx.numInputs());
    dispatchAllTypes(y.dtype(), [&]<typename T>() {
        T* py = y.mutableData<T>();
        for (int64_t i = 0; i < y.numElements(); ++i) {
            py[i] = castValue<T>(castValue<double>(py[i]) / count);
        }
    });
    return out;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    const float weight = 1.0F / static_cast<float>(ctx.numInputs());
    return variadicVjp(ctx, outputs, outputGrads, [weight](float, float) { return weight; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return variadicSamples(rng);
}

const OpDef kDef{
    .opType = "Mean",
    .domain = "",
    .sinceVersion = 8,
    .doc = "element-wise mean of the inputs (numpy broadcasting); VJP: dy / n to every input",
    .minInputs = 1,
    .maxInputs = 1 << 16,
    .forward = forward,
    .reference = nullptr,
    .vjp = vjp,
    .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(mean, kDef)
