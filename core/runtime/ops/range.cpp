// Range (ONNX since 11): [start, start + delta, ...) up to limit; count = max(ceil((limit -
// start) / delta), 0). Scalar inputs of one numeric type.

#include "core/runtime/op_util.h"
#include "core/runtime/type_dispatch.h"

#include <cmath>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const graph::DataType dtype = ctx.input(0).dtype();
    if (ctx.input(1).dtype() != dtype || ctx.input(2).dtype() != dtype ||
        ctx.input(0).numElements() != 1 || ctx.input(1).numElements() != 1 ||
        ctx.input(2).numElements() != 1 || ctx.input(2).elementAsDouble(0) == 0.0) {
        return ctx.error(Errc::InvalidModel, "needs three scalars of one numeric type, delta != 0");
    }
    Tensor out;
    const bool ok = dispatchNumeric(dtype, [&]<typename T>() {
        const T start = ctx.input(0).data<T>()[0];
        const T limit = ctx.input(1).data<T>()[0];
        const T delta = ctx.input(2).data<T>()[0];
        const double steps = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                       static_cast<double>(delta));
        const auto count = static_cast<int64_t>(std::max(0.0, steps));
        out = Tensor::allocate(dtype, {count});
        T* dst = out.mutableData<T>();
        for (int64_t i = 0; i < count; ++i) {
            dst[i] = static_cast<T>(start + static_cast<T>(i) * delta);
        }
    });
    if (!ok) {
        return ctx.error(Errc::Unsupported, "unsupported type");
    }
    return std::vector<Tensor>{out};
}

std::vector<OpSample> samples(std::mt19937&) {
    return {{"int64 1..10 by 3",
             {},
             {Tensor::scalar<int64_t>(1), Tensor::scalar<int64_t>(10), Tensor::scalar<int64_t>(3)},
             {}}};
}

const OpDef kRange{.opType = "Range",
                   .domain = "",
                   .sinceVersion = 11,
                   .doc = "arithmetic sequence",
                   .minInputs = 3,
                   .maxInputs = 3,
                   .forward = forward,
                   .reference = nullptr,
                   .vjp = nullptr,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(range, kRange)
