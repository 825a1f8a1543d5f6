// DequantizeLinear (ONNX since 10; per-axis since 13, blocked since 21): y = (x - zero_point) *
// scale, with int8/uint8/int16/uint16/int32 (and int4/uint4, unpacked on load) inputs. Not
// differentiable here: fake quantization gradients (straight-through) belong to the simulation.

#include "core/runtime/quant_params.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor scale = castTensor(ctx.input(1), graph::DataType::Float);
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, quantParamIndex(ctx, x, scale));
    const std::vector<int64_t> zeroPoint =
        ctx.has(2) ? toInt64Vector(ctx.input(2))
                   : std::vector<int64_t>(static_cast<size_t>(scale.numElements()), 0);
    if (zeroPoint.size() != static_cast<size_t>(scale.numElements())) {
        return ctx.error(Errc::InvalidModel, "zero point and scale differ in size");
    }
    const std::vector<int64_t> values = toInt64Vector(x);
    Tensor y = allocateFloat(x.shape());
    const float* s = scale.data<float>();
    float* py = y.mutableData<float>();
    for (size_t i = 0; i < values.size(); ++i) {
        const int64_t p = index[i];
        py[i] = static_cast<float>(values[i] - zeroPoint[static_cast<size_t>(p)]) * s[p];
    }
    if (ctx.input(1).dtype() != graph::DataType::Float &&
        ctx.input(1).dtype() != graph::DataType::Double) {
        y = castTensor(y, ctx.input(1).dtype());
    }
    return std::vector<Tensor>{y};
}

std::vector<OpSample> samples(std::mt19937&) {
    Tensor x = Tensor::fromVector<int64_t>({2, 3}, {0, 3, 128, 255, 7, 9});
    return {
        {"per axis uint8-like",
         {intAttribute("axis", 1)},
         {castTensor(x, graph::DataType::UInt8), Tensor::fromVector<float>({3}, {0.5F, 1.0F, 2.0F}),
          castTensor(Tensor::fromVector<int64_t>({3}, {0, 128, 3}), graph::DataType::UInt8)},
         {}}};
}

const OpDef kDequantizeLinear{.opType = "DequantizeLinear",
                              .domain = "",
                              .sinceVersion = 10,
                              .doc = "(x - zero_point) * scale",
                              .minInputs = 2,
                              .maxInputs = 3,
                              .forward = forward,
                              .reference = nullptr,
                              .vjp = nullptr,
                              .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(dequantize_linear, kDequantizeLinear)
