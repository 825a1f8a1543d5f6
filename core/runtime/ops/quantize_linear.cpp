// QuantizeLinear (ONNX since 10; per-axis since 13, blocked and output_dtype since 21):
// y = saturate(round_half_to_even(x / scale) + zero_point), y of the zero point's type (uint8
// without one) or output_dtype. int8/uint8/int16/uint16 outputs, and int4/uint4 (output_dtype
// 22/21) saturated to [-8, 7] / [0, 15] and stored unpacked, one per byte, as the runtime holds
// them. VJP: the straight-through estimator (see vjp below).

#include "core/runtime/quant_params.h"
#include "core/runtime/type_dispatch.h"

#include <cmath>
#include <limits>

namespace qs::runtime {
namespace {

/// Everything forward and VJP share: x and scale as float, each element's scale index, the zero
/// points, the output type and the integer range it saturates to.
struct QuantizeSetup {
    Tensor x;
    Tensor scale;
    std::vector<int64_t> index;
    std::vector<int64_t> zeroPoint;
    graph::DataType outType = graph::DataType::UInt8;
    graph::DataType storageType = graph::DataType::UInt8; ///< int4/uint4 live unpacked in bytes
    double lo = 0.0;
    double hi = 255.0;
};

Result<void> setRange(const OpContext& ctx, QuantizeSetup& q) {
    using graph::DataType;
    q.storageType = q.outType;
    switch (q.outType) {
    case DataType::UInt8:
        q.lo = 0, q.hi = 255;
        return success();
    case DataType::Int8:
        q.lo = -128, q.hi = 127;
        return success();
    case DataType::UInt16:
        q.lo = 0, q.hi = 65535;
        return success();
    case DataType::Int16:
        q.lo = -32768, q.hi = 32767;
        return success();
    case DataType::UInt4:
        q.lo = 0, q.hi = 15, q.storageType = DataType::UInt8;
        return success();
    case DataType::Int4:
        q.lo = -8, q.hi = 7, q.storageType = DataType::Int8;
        return success();
    default:
        return ctx.error(Errc::Unsupported, "quantizing to " +
                                                std::string(graph::dataTypeName(q.outType)) +
                                                " is not supported");
    }
}

Result<QuantizeSetup> makeSetup(const OpContext& ctx) {
    QuantizeSetup q;
    q.x = castTensor(ctx.input(0), graph::DataType::Float);
    q.scale = castTensor(ctx.input(1), graph::DataType::Float);
    QS_ASSIGN_OR_RETURN(q.index, quantParamIndex(ctx, q.x, q.scale));
    q.outType = ctx.has(2) ? ctx.input(2).dtype() : graph::DataType::UInt8;
    if (const int64_t requested = ctx.intAttr("output_dtype", 0); requested != 0) {
        q.outType = static_cast<graph::DataType>(requested);
    }
    q.zeroPoint = ctx.has(2) ? toInt64Vector(ctx.input(2))
                             : std::vector<int64_t>(static_cast<size_t>(q.scale.numElements()), 0);
    if (q.zeroPoint.size() != static_cast<size_t>(q.scale.numElements())) {
        return ctx.error(Errc::InvalidModel, "zero point and scale differ in size");
    }
    QS_TRY(setRange(ctx, q));
    return q;
}

/// round_half_to_even(x_i / scale) + zero_point, before saturation. nearbyint rounds half to even
/// in the default rounding mode, as ONNX specifies.
double unclamped(const QuantizeSetup& q, int64_t i) {
    const auto p = static_cast<size_t>(q.index[static_cast<size_t>(i)]);
    return std::nearbyint(static_cast<double>(q.x.data<float>()[i]) /
                          static_cast<double>(q.scale.data<float>()[p])) +
           static_cast<double>(q.zeroPoint[p]);
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const QuantizeSetup q, makeSetup(ctx));
    Tensor y = Tensor::allocate(q.storageType, q.x.shape());
    dispatchAllTypes(q.storageType, [&]<typename T>() {
        T* py = y.mutableData<T>();
        for (int64_t i = 0; i < q.x.numElements(); ++i) {
            py[i] = static_cast<T>(std::clamp(unclamped(q, i), q.lo, q.hi));
        }
    });
    return std::vector<Tensor>{y};
}

// Straight-through estimator (Bengio et al. 2013, "Estimating or propagating gradients through
// stochastic neurons"; the clipped form of Jacob et al. 2018 for fake quantization): rounding is
// treated as the identity, so dq/dx = 1 / scale where the unclamped code lies in [lo, hi] and 0
// where saturation clips it. With DequantizeLinear's dx = dy * scale a Q -> DQ pair passes dy
// unchanged inside the range and blocks it outside. Scale and zero point get no gradient.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const QuantizeSetup q, makeSetup(ctx));
    std::vector<Tensor> grads(ctx.numInputs());
    Tensor dx = Tensor::zeros(graph::DataType::Float, q.x.shape());
    if (outputGrads[0].defined()) {
        const Tensor dq = castTensor(outputGrads[0], graph::DataType::Float);
        const float* pdq = dq.data<float>();
        const float* s = q.scale.data<float>();
        float* pdx = dx.mutableData<float>();
        for (int64_t i = 0; i < q.x.numElements(); ++i) {
            const double code = unclamped(q, i);
            if (code >= q.lo && code <= q.hi) {
                pdx[i] = pdq[i] / s[q.index[static_cast<size_t>(i)]];
            }
        }
    }
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    // The outputs are integers, so the registry's finite-difference check sees no float output;
    // op_kernels_test checks the straight-through gradient against its definition.
    return {{"per tensor int8",
             {},
             {randomTensor(rng, {2, 3}, -2.0F, 2.0F), Tensor::scalar<float>(0.02F),
              castTensor(Tensor::scalar<int64_t>(3), graph::DataType::Int8)},
             {0}},
            {"int4 output",
             {intAttribute("output_dtype", static_cast<int64_t>(graph::DataType::Int4))},
             {randomTensor(rng, {2, 3}, -2.0F, 2.0F), Tensor::scalar<float>(0.5F)},
             {0}}};
}

const OpDef kQuantizeLinear{.opType = "QuantizeLinear",
                            .domain = "",
                            .sinceVersion = 10,
                            .doc = "saturate(round(x / scale) + zero_point)",
                            .minInputs = 2,
                            .maxInputs = 3,
                            .forward = forward,
                            .reference = nullptr,
                            .vjp = vjp,
                            .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(quantize_linear, kQuantizeLinear)
