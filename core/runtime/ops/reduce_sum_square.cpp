// ReduceSumSquare (ONNX since 1; axes as an input since opset 18): sum of squares over the reduced
// axes, keepdims (default 1) and noop_with_empty_axes as the specification defines them.

#include "core/runtime/reduce.h"

#include <cmath>
#include <limits>

namespace qs::runtime {
namespace {

// Shape rule: the reduced axes become 1 (keepdims) or disappear.
Result<ReducePlan> plan(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    // Axes come from the attribute in older opsets and from input 1 in newer ones.
    return makeReducePlan(ctx, !ctx.hasAttr("axes"));
}

// Plain loop (also the kernel): accumulates in double, one pass over the input.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ReducePlan r, plan(ctx));
    const float* src = ctx.input(0).data<float>();
    Tensor y = allocateFloat(r.outShape);
    float* py = y.mutableData<float>();
    std::vector<double> acc(static_cast<size_t>(shapeNumElements(r.outShape)), 0.0);
    forEachReduced(r, [&](int64_t in, int64_t out) {
        const double x = src[in];
        double& a = acc[static_cast<size_t>(out)];
        a = a + x * x;
    });
    const auto n = static_cast<double>(r.groupSize);
    (void)n;
    for (size_t i = 0; i < acc.size(); ++i) {
        const double a = acc[i];
        py[i] = static_cast<float>(a);
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ReducePlan r, plan(ctx));
    const float* px = ctx.input(0).data<float>();
    const float* py = outputs[0].data<float>();
    const float* pdy = outputGrads[0].data<float>();
    Tensor dx = allocateFloat(ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    [[maybe_unused]] const auto n = static_cast<double>(r.groupSize);
    forEachReduced(r, [&](int64_t in, int64_t out) {
        [[maybe_unused]] const double x = px[in];
        [[maybe_unused]] const double y = py[out];
        const double dy = pdy[out];
        pdx[in] = static_cast<float>(2.0 * x * dy);
    });
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"axes 1 keepdims",
         {intsAttribute("axes", {1})},
         {randomTensor(rng, {2, 3, 4}, 0.1F, 1.0F)},
         {0}},
        {"axes 0,2 no keepdims",
         {intsAttribute("axes", {0, -1}), intAttribute("keepdims", 0)},
         {randomTensor(rng, {2, 3, 4}, 0.1F, 1.0F)},
         {0}},
        {"all axes", {}, {randomTensor(rng, {3, 4}, 0.1F, 1.0F)}, {0}},
    };
}

const OpDef kDef{.opType = "ReduceSumSquare",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "sum of squares over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_sum_square, kDef)
