// Equal (ONNX since 7): a == b, element-wise with broadcasting, bool output.

#include "core/runtime/elementwise.h"

namespace qs::runtime {
namespace {

// One broadcasting loop serves as both reference and kernel: the inner loop is contiguous and
// the compiler vectorises it.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    return broadcastForward<true, true>(ctx, [](auto a, auto b) { return a == b; });
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"bool 3x4 by 4", {}, {randomBools(rng, {3, 4}), randomBools(rng, {4})}, {}}};
}

const OpDef kDef{.opType = "Equal",
                 .domain = "",
                 .sinceVersion = 7,
                 .doc = "a == b, element-wise with broadcasting, bool output",
                 .minInputs = 2,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = nullptr,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(equal, kDef)
