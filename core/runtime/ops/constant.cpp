// Constant (ONNX since 1; value_float(s)/value_int(s) since 12): outputs its attribute. The
// importer turns Constant nodes into initializers; this op covers graphs built otherwise.

#include "core/runtime/op_util.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    if (const auto* attr = ctx.node.attribute("value")) {
        if (const auto* tensor = std::get_if<graph::TensorPtr>(&attr->value)) {
            return std::vector<Tensor>{Tensor::wrap(*tensor)};
        }
    }
    if (ctx.hasAttr("value_float")) {
        return std::vector<Tensor>{Tensor::scalar<float>(ctx.floatAttr("value_float", 0.0F))};
    }
    if (ctx.hasAttr("value_int")) {
        return std::vector<Tensor>{Tensor::scalar<int64_t>(ctx.intAttr("value_int", 0))};
    }
    if (ctx.hasAttr("value_ints")) {
        return std::vector<Tensor>{int64Tensor(ctx.intsAttr("value_ints"))};
    }
    if (const auto* attr = ctx.node.attribute("value_floats")) {
        if (const auto* floats = std::get_if<std::vector<float>>(&attr->value)) {
            return std::vector<Tensor>{
                Tensor::fromVector<float>({static_cast<int64_t>(floats->size())}, *floats)};
        }
    }
    return ctx.error(Errc::Unsupported, "no supported value attribute");
}

std::vector<OpSample> samples(std::mt19937&) {
    return {{"value_ints", {intsAttribute("value_ints", {1, 2, 3})}, {}, {}}};
}

const OpDef kConstant{.opType = "Constant",
                      .domain = "",
                      .sinceVersion = 1,
                      .doc = "a constant tensor",
                      .minInputs = 0,
                      .maxInputs = 0,
                      .forward = forward,
                      .reference = nullptr,
                      .vjp = nullptr,
                      .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(constant, kConstant)
