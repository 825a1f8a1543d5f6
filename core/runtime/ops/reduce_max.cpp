// ReduceMax (ONNX since 1; axes as an input since opset 18): maximum over the reduced axes,
// keepdims (default 1) and noop_with_empty_axes as the specification defines them.

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
    std::vector<double> acc(static_cast<size_t>(shapeNumElements(r.outShape)),
                            -std::numeric_limits<double>::infinity());
    forEachReduced(r, [&](int64_t in, int64_t out) {
        const double x = src[in];
        double& a = acc[static_cast<size_t>(out)];
        a = std::max(a, x);
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
    const float* x = ctx.input(0).data<float>();
    const float* y = outputs[0].data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    // The gradient goes to the first element equal to the extremum.
    std::vector<bool> taken(static_cast<size_t>(outputs[0].numElements()), false);
    forEachReduced(r, [&](int64_t in, int64_t out) {
        if (!taken[static_cast<size_t>(out)] && x[in] == y[out]) {
            taken[static_cast<size_t>(out)] = true;
            pdx[in] = dy[out];
        }
    });
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"axes 1 keepdims", {intsAttribute("axes", {1})}, {randomDistinct(rng, {2, 3, 4})}, {0}},
        {"axes 0,2 no keepdims",
         {intsAttribute("axes", {0, -1}), intAttribute("keepdims", 0)},
         {randomDistinct(rng, {2, 3, 4})},
         {0}},
        {"all axes", {}, {randomDistinct(rng, {3, 4})}, {0}},
    };
}

const OpDef kDef{.opType = "ReduceMax",
                 .domain = "",
                 .sinceVersion = 1,
                 .doc = "maximum over the reduced axes",
                 .minInputs = 1,
                 .maxInputs = 2,
                 .forward = forward,
                 .reference = nullptr,
                 .vjp = vjp,
                 .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(reduce_max, kDef)
