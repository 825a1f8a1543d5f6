// Add (ONNX since 7): a + b with numpy broadcasting.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

// One broadcasting loop serves as both reference and kernel: the inner loop is contiguous and
// the compiler vectorises it.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return broadcastForward<false>(ctx, [](auto a, auto b) { return a + b; });
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    return broadcastVjp(
        ctx, outputs, outputGrads,
        []([[maybe_unused]] float a, [[maybe_unused]] float b, [[maybe_unused]] float y) {
            return 1.0F;
        },
        []([[maybe_unused]] float a, [[maybe_unused]] float b, [[maybe_unused]] float y) {
            return 1.0F;
        });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return binarySamples(rng, -1.0F, 1.0F);
}

const OpDef kDef{.opType = "Add",
                 .domain = "",
                 .sinceVersion = 7,
                 .doc = "a + b with numpy broadcasting",
                 .minInputs = 2,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(add, kDef)
