// Variadic element-wise ops (Max, Min, Sum, Mean): fold the inputs pairwise with numpy
// broadcasting; the VJP sends dy to each input through the op's own rule.
#pragma once

#include "core/runtime/elementwise.h"

namespace qs::runtime {

/// Folds inputs with f pairwise with numpy broadcasting. Float16 inputs are folded in float32 and
/// the result rounded back to half once (as the executor's fp16 mode computes).
template <typename F>
Result<std::vector<Tensor>> variadicForward(const OpContext& ctx, F f) {
    if (ctx.numInputs() > 0 && ctx.input(0).dtype() == graph::DataType::Float16) {
        std::vector<Tensor> widened;
        widened.reserve(ctx.numInputs());
        for (const Tensor& input : ctx.inputs) {
            if (input.dtype() != graph::DataType::Float16) {
                return ctx.error(Errc::InvalidModel,
                                 "input types differ: float16 and " +
                                     std::string(graph::dataTypeName(input.dtype())));
            }
            widened.push_back(castTensor(input, graph::DataType::Float));
        }
        const OpContext wide{ctx.node, widened, ctx.opset, ctx.gradMask};
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> out, variadicForward(wide, f));
        out[0] = castTensor(out[0], graph::DataType::Float16);
        return out;
    }
    Tensor acc = ctx.input(0);
    for (size_t i = 1; i < ctx.numInputs(); ++i) {
        std::vector<Tensor> pair{acc, ctx.input(i)};
        const OpContext step{ctx.node, pair, ctx.opset, ctx.gradMask};
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> out, broadcastForward<false>(step, f));
        acc = out[0];
    }
    if (ctx.numInputs() == 1) {
        acc = acc.clone();
    }
    return std::vector<Tensor>{acc};
}

/// dInput_i = dy * weight(x_i, y) summed back to input i's shape.
template <typename W>
Result<std::vector<Tensor>> variadicVjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                        std::span<const Tensor> outputGrads, W weight) {
    std::vector<Tensor> grads;
    for (size_t i = 0; i < ctx.numInputs(); ++i) {
        auto plan = makeBroadcastPlan({outputs[0].shape(), ctx.input(i).shape()});
        QS_CHECK(plan.ok(), "forward shapes broadcast");
        Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(i).shape());
        const float* x = ctx.input(i).data<float>();
        const float* y = outputs[0].data<float>();
        const float* dy = outputGrads[0].data<float>();
        float* pdx = dx.mutableData<float>();
        forEachBroadcast(*plan, [&](int64_t, const int64_t* off) {
            pdx[off[1]] += dy[off[0]] * weight(x[off[1]], y[off[0]]);
        });
        grads.push_back(dx);
    }
    return grads;
}

/// Three broadcasting inputs whose values never tie across inputs (offsets 0, 0.017, 0.034).
inline std::vector<OpSample> variadicSamples(std::mt19937& rng) {
    std::vector<Tensor> inputs{randomDistinct(rng, {2, 3}), randomDistinct(rng, {3}),
                               randomDistinct(rng, {2, 1})};
    for (size_t k = 0; k < inputs.size(); ++k) {
        float* data = inputs[k].mutableData<float>();
        for (int64_t i = 0; i < inputs[k].numElements(); ++i) {
            data[i] += 0.017F * static_cast<float>(k);
        }
    }
    return {{"three inputs broadcast", {}, inputs, {}}};
}

} // namespace qs::runtime
