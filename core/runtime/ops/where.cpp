// Where (ONNX since 9): y = cond ? a : b with numpy broadcasting of all three. VJP: dy to a where
// cond holds, to b elsewhere, each summed back to its shape.

#include "core/runtime/op_util.h"

#include <cstring>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const Tensor& cond = ctx.input(0);
    const Tensor& a = ctx.input(1);
    const Tensor& b = ctx.input(2);
    if (cond.dtype() != graph::DataType::Bool || a.dtype() != b.dtype()) {
        return ctx.error(Errc::InvalidModel, "needs a bool condition and two inputs of one type");
    }
    auto plan = makeBroadcastPlan({cond.shape(), a.shape(), b.shape()});
    if (!plan.ok()) {
        return ctx.error(Errc::InvalidModel, plan.error().message());
    }
    Tensor y = Tensor::allocate(a.dtype(), plan->outShape);
    const size_t elem = runtimeElementSize(a.dtype());
    const bool* pc = cond.data<bool>();
    const auto* pa = static_cast<const std::byte*>(a.rawData());
    const auto* pb = static_cast<const std::byte*>(b.rawData());
    auto* py = static_cast<std::byte*>(y.mutableRawData());
    forEachBroadcast(*plan, [&](int64_t i, const int64_t* off) {
        const std::byte* src = pc[off[0]] ? pa + static_cast<size_t>(off[1]) * elem
                                          : pb + static_cast<size_t>(off[2]) * elem;
        std::memcpy(py + static_cast<size_t>(i) * elem, src, elem);
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    auto plan = makeBroadcastPlan(
        {outputs[0].shape(), ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape()});
    QS_CHECK(plan.ok(), "forward shapes broadcast");
    Tensor da = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    Tensor db = Tensor::zeros(graph::DataType::Float, ctx.input(2).shape());
    const bool* pc = ctx.input(0).data<bool>();
    const float* dy = outputGrads[0].data<float>();
    float* pda = da.mutableData<float>();
    float* pdb = db.mutableData<float>();
    forEachBroadcast(*plan, [&](int64_t, const int64_t* off) {
        if (pc[off[1]]) {
            pda[off[2]] += dy[off[0]];
        } else {
            pdb[off[3]] += dy[off[0]];
        }
    });
    return std::vector<Tensor>{Tensor(), da, db};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    Tensor cond = Tensor::allocate(graph::DataType::Bool, {3});
    cond.mutableData<bool>()[0] = true;
    cond.mutableData<bool>()[1] = false;
    cond.mutableData<bool>()[2] = true;
    return {
        {"broadcast", {}, {cond, randomTensor(rng, {2, 3}), randomTensor(rng, {2, 1})}, {1, 2}}};
}

const OpDef kWhere{.opType = "Where",
                   .domain = "",
                   .sinceVersion = 9,
                   .doc = "select by a condition",
                   .minInputs = 3,
                   .maxInputs = 3,
                   .forward = forward,
                   .reference = nullptr,
                   .vjp = vjp,
                   .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(where, kWhere)
