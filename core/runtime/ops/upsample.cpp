// Upsample (ONNX 7-9, deprecated at 10 in favour of Resize): nearest-neighbour upsampling by
// per-dim scales (an attribute at 7, input 1 from 9). Output dim = floor(in * scale); output
// coordinate o reads input floor(o / scale) (Resize's asymmetric transform with floor). Mode
// linear is refused. VJP: each output's gradient goes back to the input element it copied.

#include "core/runtime/op_util.h"

#include <cmath>

namespace qs::runtime {
namespace {

struct UpsamplePlan {
    Shape outShape;
    std::vector<std::vector<int64_t>> source; ///< per dim, the input index of each output index
};

Result<UpsamplePlan> makePlan(const OpContext& ctx) {
    if (ctx.stringAttr("mode", "nearest") != "nearest") {
        return ctx.error(Errc::Unsupported, "mode '" + ctx.stringAttr("mode", "") +
                                                "' is not supported (nearest only)");
    }
    QS_TRY(requireFloat(ctx, 0));
    std::vector<float> scales;
    if (ctx.has(1)) {
        const Tensor s = castTensor(ctx.input(1), graph::DataType::Float);
        const auto values = s.values<float>();
        scales.assign(values.begin(), values.end());
    } else if (const graph::Attribute* attr = ctx.node.attribute("scales")) {
        if (const auto* values = std::get_if<std::vector<float>>(&attr->value)) {
            scales = *values;
        }
    }
    const Shape& in = ctx.input(0).shape();
    if (scales.size() != in.size()) {
        return ctx.error(Errc::InvalidModel, "scales must have one entry per dim");
    }
    UpsamplePlan plan;
    for (size_t d = 0; d < in.size(); ++d) {
        if (!(scales[d] >= 1.0F)) {
            return ctx.error(Errc::InvalidModel, "scales must be >= 1");
        }
        const auto out = static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * scales[d]));
        plan.outShape.push_back(out);
        std::vector<int64_t> source(static_cast<size_t>(out));
        for (int64_t o = 0; o < out; ++o) {
            const auto i = static_cast<int64_t>(std::floor(static_cast<double>(o) / scales[d]));
            source[static_cast<size_t>(o)] = std::min(i, in[d] - 1);
        }
        plan.source.push_back(std::move(source));
    }
    return plan;
}

/// Calls f(outIndex, inIndex) for every output element, row-major.
template <typename F>
void forEachElement(const UpsamplePlan& plan, const Shape& in, F&& f) {
    const size_t rank = in.size();
    std::vector<int64_t> inStrides(rank, 1);
    for (size_t d = rank; d-- > 1;) {
        inStrides[d - 1] = inStrides[d] * in[d];
    }
    int64_t total = 1;
    for (const int64_t dim : plan.outShape) {
        total *= dim;
    }
    std::vector<int64_t> index(rank, 0);
    for (int64_t out = 0; out < total; ++out) {
        int64_t source = 0;
        for (size_t d = 0; d < rank; ++d) {
            source += plan.source[d][static_cast<size_t>(index[d])] * inStrides[d];
        }
        f(out, source);
        for (size_t d = rank; d-- > 0;) {
            if (++index[d] < plan.outShape[d]) {
                break;
            }
            index[d] = 0;
        }
    }
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(const UpsamplePlan plan, makePlan(ctx));
    Tensor y = allocateFloat(plan.outShape);
    const float* x = ctx.input(0).data<float>();
    float* py = y.mutableData<float>();
    forEachElement(plan, ctx.input(0).shape(), [&](int64_t out, int64_t in) { py[out] = x[in]; });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(const UpsamplePlan plan, makePlan(ctx));
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    const float* dy = outputGrads[0].data<float>();
    float* pdx = dx.mutableData<float>();
    forEachElement(plan, ctx.input(0).shape(),
                   [&](int64_t out, int64_t in) { pdx[in] += dy[out]; });
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"nearest 2x3 by 1,1,2,1.5",
             {},
             {randomTensor(rng, {1, 2, 2, 3}), Tensor::fromVector<float>({4}, {1, 1, 2, 1.5F})},
             {0}}};
}

const OpDef kUpsample{.opType = "Upsample",
                      .domain = "",
                      .sinceVersion = 7,
                      .doc = "nearest-neighbour upsampling (deprecated since 10)",
                      .minInputs = 1,
                      .maxInputs = 2,
                      .forward = forward,
                      .reference = nullptr,
                      .vjp = vjp,
                      .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(upsample, kUpsample)
