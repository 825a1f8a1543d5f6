// Cast (ONNX since 6): converts to the `to` type (float to integer truncates toward zero, any
// nonzero value becomes true). VJP (float to float only): dx = dy.

#include "core/runtime/op_util.h"
#include "core/runtime/type_dispatch.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const auto to = static_cast<graph::DataType>(ctx.intAttr("to", 0));
    if (!isDispatchable(to) || !isDispatchable(ctx.input(0).dtype())) {
        return ctx.error(Errc::Unsupported,
                         "cast from " + std::string(graph::dataTypeName(ctx.input(0).dtype())) +
                             " to " + std::string(graph::dataTypeName(to)));
    }
    return std::vector<Tensor>{castTensor(ctx.input(0), to)};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    if (ctx.input(0).dtype() != graph::DataType::Float) {
        return std::vector<Tensor>{Tensor()};
    }
    return std::vector<Tensor>{castTensor(outputGrads[0], graph::DataType::Float)};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"float to float", {intAttribute("to", 1)}, {randomTensor(rng, {2, 3})}, {}}};
}

const OpDef kCast{.opType = "Cast",
                  .domain = "",
                  .sinceVersion = 6,
                  .doc = "element type conversion",
                  .minInputs = 1,
                  .maxInputs = 1,
                  .forward = forward,
                  .reference = nullptr,
                  .vjp = vjp,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(cast, kCast)
