// And (ONNX since 7): logical a and b with broadcasting.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

// One broadcasting loop serves as both reference and kernel: the inner loop is contiguous and
// the compiler vectorises it.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return broadcastForward<true, true>(ctx, [](auto a, auto b) { return a && b; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"bool 3x4 by 4", {}, {randomBools(rng, {3, 4}), randomBools(rng, {4})}, {}}};
}

const OpDef kDef{.opType = "And",
                 .domain = "",
                 .sinceVersion = 7,
                 .doc = "logical a and b with broadcasting",
                 .minInputs = 2,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = nullptr,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(logical_and, kDef)
