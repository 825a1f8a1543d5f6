// ConstantOfShape (ONNX since 9): a tensor of the given int64 shape filled with `value` (a
// one-element tensor attribute; default float 0).

#include "core/runtime/op_util.h"
#include "core/runtime/type_dispatch.h"

#include <cstring>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    Tensor value = Tensor::scalar<float>(0.0F);
    if (const auto* attr = ctx.node.attribute("value")) {
        if (const auto* tensor = std::get_if<graph::TensorPtr>(&attr->value)) {
            value = Tensor::wrap(*tensor);
        }
    }
    if (!isDispatchable(value.dtype()) || value.numElements() != 1) {
        return ctx.error(Errc::Unsupported, "value must be one numeric element");
    }
    Tensor out = Tensor::allocate(value.dtype(), toInt64Vector(ctx.input(0)));
    const size_t elem = runtimeElementSize(out.dtype());
    auto* dst = static_cast<std::byte*>(out.mutableRawData());
    for (int64_t i = 0; i < out.numElements(); ++i) {
        std::memcpy(dst + static_cast<size_t>(i) * elem, value.rawData(), elem);
    }
    return std::vector<Tensor>{out};
}

std::vector<OpSample> samples(std::mt19937&) {
    return {{"2x3 zeros", {}, {int64Tensor<int>({2, 3})}, {}}};
}

const OpDef kConstantOfShape{.opType = "ConstantOfShape",
                             .domain = "",
                             .sinceVersion = 9,
                             .doc = "a filled tensor of a given shape",
                             .minInputs = 1,
                             .maxInputs = 1,
                             .forward = forward,
                             .reference = nullptr,
                             .vjp = nullptr,
                             .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(constant_of_shape, kConstantOfShape)
