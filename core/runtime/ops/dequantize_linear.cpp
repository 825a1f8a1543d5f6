// DequantizeLinear (ONNX since 10; per-axis since 13, blocked since 21): y = (x - zero_point) *
// scale, with int8/uint8/int16/uint16/int32 (and int4/uint4, unpacked on load) inputs. VJP: exact
// in x and scale (see vjp), so with QuantizeLinear's straight-through VJP gradients flow through
// fake-quantized (QDQ) graphs.

#include "core/runtime/quant_params.h"

namespace qs::runtime {
namespace {

/// The integer codes, the scales as float, each element's scale index and the zero points.
struct DequantizeSetup {
    std::vector<int64_t> codes;
    Tensor scale;
    std::vector<int64_t> index;
    std::vector<int64_t> zeroPoint;
};

Result<DequantizeSetup> makeSetup(const OpContext& ctx) {
    DequantizeSetup d;
    d.scale = castTensor(ctx.input(1), graph::DataType::Float);
    QS_ASSIGN_OR_RETURN(d.index, quantParamIndex(ctx, ctx.input(0), d.scale));
    d.zeroPoint = ctx.has(2) ? toInt64Vector(ctx.input(2))
                             : std::vector<int64_t>(static_cast<size_t>(d.scale.numElements()), 0);
    if (d.zeroPoint.size() != static_cast<size_t>(d.scale.numElements())) {
        return ctx.error(Errc::InvalidModel, "zero point and scale differ in size");
    }
    d.codes = toInt64Vector(ctx.input(0));
    return d;
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const DequantizeSetup d, makeSetup(ctx));
    Tensor y = allocateFloat(ctx.input(0).shape());
    const float* s = d.scale.data<float>();
    float* py = y.mutableData<float>();
    for (size_t i = 0; i < d.codes.size(); ++i) {
        const auto p = static_cast<size_t>(d.index[i]);
        py[i] = static_cast<float>(d.codes[i] - d.zeroPoint[p]) * s[p];
    }
    if (ctx.input(1).dtype() != graph::DataType::Float &&
        ctx.input(1).dtype() != graph::DataType::Double) {
        y = castTensor(y, ctx.input(1).dtype());
    }
    return std::vector<Tensor>{y};
}

// y is linear in the code and in the scale: dx = dy * scale (the straight-through half of a fake
// quantizer; QuantizeLinear's VJP supplies the clip mask) and dscale = sum dy * (x - zero_point)
// over the elements each scale serves. The zero point gets no gradient (it is an integer).
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const DequantizeSetup d, makeSetup(ctx));
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    Tensor dscale = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    if (outputGrads[0].defined()) {
        const Tensor dy = castTensor(outputGrads[0], graph::DataType::Float);
        const float* pdy = dy.data<float>();
        const float* s = d.scale.data<float>();
        float* pdx = dx.mutableData<float>();
        float* pds = dscale.mutableData<float>();
        for (size_t i = 0; i < d.codes.size(); ++i) {
            const auto p = static_cast<size_t>(d.index[i]);
            pdx[i] = pdy[i] * s[p];
            pds[p] += pdy[i] * static_cast<float>(d.codes[i] - d.zeroPoint[p]);
        }
    }
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    grads[1] = dscale;
    return grads;
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
                              .vjp = vjp,
                              .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(dequantize_linear, kDequantizeLinear)
