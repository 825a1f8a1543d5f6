// QuantizeLinear (ONNX since 10; per-axis since 13, blocked and output_dtype since 21):
// y = saturate(round_half_to_even(x / scale) + zero_point), y of the zero point's type (uint8
// without one). int8/uint8/int16/uint16 outputs; int4/uint4 when `output_dtype` names them (an
// int4 zero point is unpacked to a byte on load, so its type alone does not tell), held unpacked
// in int8/uint8 as runtime tensors hold sub-byte types.

#include "core/runtime/quant_params.h"
#include "core/runtime/type_dispatch.h"

#include <cmath>
#include <limits>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor x = castTensor(ctx.input(0), graph::DataType::Float);
    const Tensor scale = castTensor(ctx.input(1), graph::DataType::Float);
    QS_ASSIGN_OR_RETURN(std::vector<int64_t> index, quantParamIndex(ctx, x, scale));
    graph::DataType outType = ctx.has(2) ? ctx.input(2).dtype() : graph::DataType::UInt8;
    if (const int64_t requested = ctx.intAttr("output_dtype", 0); requested != 0) {
        outType = static_cast<graph::DataType>(requested);
    }
    const std::vector<int64_t> zeroPoint =
        ctx.has(2) ? toInt64Vector(ctx.input(2))
                   : std::vector<int64_t>(static_cast<size_t>(scale.numElements()), 0);
    const bool int4 = outType == graph::DataType::Int4;
    const bool uint4 = outType == graph::DataType::UInt4;
    graph::DataType storedType = outType;
    if (int4 || uint4) {
        storedType = int4 ? graph::DataType::Int8 : graph::DataType::UInt8;
    }
    Tensor y = Tensor::allocate(storedType, x.shape());
    const float* px = x.data<float>();
    const float* s = scale.data<float>();
    bool supported = false;
    auto quantizeTo = [&]<typename T>(double lo, double hi) {
        supported = true;
        T* py = y.mutableData<T>();
        for (int64_t i = 0; i < x.numElements(); ++i) {
            const int64_t p = index[static_cast<size_t>(i)];
            // nearbyint rounds half to even in the default rounding mode, as ONNX specifies.
            const double q = std::nearbyint(static_cast<double>(px[i]) / s[p]) +
                             static_cast<double>(zeroPoint[static_cast<size_t>(p)]);
            py[i] = static_cast<T>(std::clamp(q, lo, hi));
        }
    };
    auto quantize = [&]<typename T>() {
        quantizeTo.template operator()<T>(static_cast<double>(std::numeric_limits<T>::min()),
                                          static_cast<double>(std::numeric_limits<T>::max()));
    };
    constexpr double kInt4Min = -8.0;
    constexpr double kInt4Max = 7.0;
    constexpr double kUInt4Max = 15.0;
    if (int4) {
        quantizeTo.template operator()<int8_t>(kInt4Min, kInt4Max);
    } else if (uint4) {
        quantizeTo.template operator()<uint8_t>(0.0, kUInt4Max);
    }
    switch (supported ? graph::DataType::Undefined : outType) {
    case graph::DataType::UInt8:
        quantize.template operator()<uint8_t>();
        break;
    case graph::DataType::Int8:
        quantize.template operator()<int8_t>();
        break;
    case graph::DataType::UInt16:
        quantize.template operator()<uint16_t>();
        break;
    case graph::DataType::Int16:
        quantize.template operator()<int16_t>();
        break;
    default:
        break;
    }
    if (!supported) {
        return ctx.error(Errc::Unsupported, "quantizing to " +
                                                std::string(graph::dataTypeName(outType)) +
                                                " is not supported");
    }
    return std::vector<Tensor>{y};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"per tensor int8",
             {},
             {randomTensor(rng, {2, 3}, -2.0F, 2.0F), Tensor::scalar<float>(0.02F),
              castTensor(Tensor::scalar<int64_t>(3), graph::DataType::Int8)},
             {}}};
}

const OpDef kQuantizeLinear{.opType = "QuantizeLinear",
                            .domain = "",
                            .sinceVersion = 10,
                            .doc = "saturate(round(x / scale) + zero_point)",
                            .minInputs = 2,
                            .maxInputs = 3,
                            .forward = forward,
                            .reference = nullptr,
                            .vjp = nullptr,
                            .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(quantize_linear, kQuantizeLinear)
