// Shape (ONNX since 1; start/end since 15): the input's dims as an int64 vector, optionally the
// slice [start, end) with numpy clamping.

#include "core/runtime/op_util.h"

#include <algorithm>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    int64_t start = ctx.intAttr("start", 0);
    int64_t end = ctx.intAttr("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    std::vector<int64_t> dims;
    for (int64_t d = start; d < end; ++d) {
        dims.push_back(shape[static_cast<size_t>(d)]);
    }
    return std::vector<Tensor>{int64Tensor(dims)};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4", {intAttribute("start", 1)}, {randomTensor(rng, {2, 3, 4})}, {}}};
}

const OpDef kShape{.opType = "Shape",
                   .domain = "",
                   .sinceVersion = 1,
                   .doc = "dims as int64",
                   .minInputs = 1,
                   .maxInputs = 1,
                   .forward = forward,
                   .reference = nullptr,
                   .vjp = nullptr,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(shape, kShape)
