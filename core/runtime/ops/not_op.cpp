// Not (ONNX since 1): logical negation of a bool tensor.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != graph::DataType::Bool) {
        return ctx.error(Errc::InvalidModel, "needs a bool input");
    }
    Tensor y = Tensor::allocate(graph::DataType::Bool, x.shape());
    for (int64_t i = 0; i < x.numElements(); ++i) {
        y.mutableData<bool>()[i] = !x.data<bool>()[i];
    }
    return std::vector<Tensor>{y};
}

std::vector<OpSample> samples(std::mt19937&) {
    Tensor x = Tensor::zeros(graph::DataType::Bool, {4});
    x.mutableData<bool>()[1] = true;
    return {{"4", {}, {x}, {}}};
}

const OpDef kNot{.opType = "Not",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "logical not",
                 .minInputs = 1,
                 .maxInputs = 1,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = nullptr,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(not_op, kNot)
