// BatchNormalization (ONNX since 9, inference form): per channel c (axis 1),
//   y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c].
// training_mode = 1 (opset 14) is rejected. Kernel: fold into y = a[c] x + b[c], one pass.
// VJP: dx = dy a[c]; dscale = sum dy (x - mean) / sqrt(var + eps); dbias = sum dy.

#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"

#include <cmath>

namespace qs::runtime {
namespace {

struct BnShape {
    int64_t batch = 0;
    int64_t channels = 0;
    int64_t inner = 1; ///< elements per (n, c)
};

// Shape rule: x [N, C, ...] with four [C] parameters; y has x's shape.
Result<BnShape> inferShape(const OpContext& ctx) {
    if (ctx.intAttr("training_mode", 0) != 0) {
        return ctx.error(Errc::Unsupported, "training_mode = 1 is not supported (inference only)");
    }
    for (size_t i = 0; i < 5; ++i) {
        QS_TRY(requireFloat(ctx, i));
    }
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) {
        return ctx.error(Errc::InvalidModel, "x must have rank >= 2");
    }
    BnShape s;
    s.batch = x.dim(0);
    s.channels = x.dim(1);
    s.inner = x.numElements() / std::max<int64_t>(1, s.batch * s.channels);
    for (size_t i = 1; i < 5; ++i) {
        if (ctx.input(i).numElements() != s.channels) {
            return ctx.error(Errc::InvalidModel,
                             "parameter " + std::to_string(i) + " does not have C elements");
        }
    }
    return s;
}

/// Per-channel a = scale / sqrt(var + eps), b = bias - a * mean.
void foldParameters(const OpContext& ctx, int64_t channels, std::vector<float>& a,
                    std::vector<float>& b) {
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const float* mean = ctx.input(3).data<float>();
    const float* var = ctx.input(4).data<float>();
    a.resize(static_cast<size_t>(channels));
    b.resize(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) {
        a[c] = scale[c] / std::sqrt(var[c] + eps);
        b[c] = bias[c] - a[c] * mean[c];
    }
}

Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(BnShape s, inferShape(ctx));
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const float* x = ctx.input(0).data<float>();
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const float* mean = ctx.input(3).data<float>();
    const float* var = ctx.input(4).data<float>();
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t c = 0; c < s.channels; ++c) {
            for (int64_t i = 0; i < s.inner; ++i) {
                const int64_t idx = (n * s.channels + c) * s.inner + i;
                py[idx] = scale[c] * (x[idx] - mean[c]) / std::sqrt(var[c] + eps) + bias[c];
            }
        }
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(BnShape s, inferShape(ctx));
    std::vector<float> a;
    std::vector<float> b;
    foldParameters(ctx, s.channels, a, b);
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    parallelFor(s.batch * s.channels, 4, [&](int64_t begin, int64_t end) {
        for (int64_t nc = begin; nc < end; ++nc) {
            const float av = a[nc % s.channels];
            const float bv = b[nc % s.channels];
            const float* src = x + nc * s.inner;
            float* dst = py + nc * s.inner;
            for (int64_t i = 0; i < s.inner; ++i) {
                dst[i] = av * src[i] + bv;
            }
        }
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(BnShape s, inferShape(ctx));
    std::vector<float> a;
    std::vector<float> b;
    foldParameters(ctx, s.channels, a, b);
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const float* x = ctx.input(0).data<float>();
    const float* mean = ctx.input(3).data<float>();
    const float* var = ctx.input(4).data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = allocateFloat(ctx.input(0).shape());
    Tensor dscale = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
    Tensor dbias = Tensor::zeros(graph::DataType::Float, ctx.input(2).shape());
    float* pdx = dx.mutableData<float>();
    float* pds = dscale.mutableData<float>();
    float* pdb = dbias.mutableData<float>();
    for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
        const int64_t c = nc % s.channels;
        const float invStd = 1.0F / std::sqrt(var[c] + eps);
        for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t idx = nc * s.inner + i;
            pdx[idx] = dy[idx] * a[c];
            pds[c] += dy[idx] * (x[idx] - mean[c]) * invStd;
            pdb[c] += dy[idx];
        }
    }
    return std::vector<Tensor>{dx, dscale, dbias, Tensor(), Tensor()};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4x4",
             {floatAttribute("epsilon", 1e-3F)},
             {randomTensor(rng, {2, 3, 4, 4}), randomTensor(rng, {3}), randomTensor(rng, {3}),
              randomTensor(rng, {3}), randomTensor(rng, {3}, 0.5F, 2.0F)},
             {0, 1, 2}}};
}

const OpDef kBatchNormalization{.opType = "BatchNormalization",
                                .domain = "",
                                .sinceVersion = 9,
                                .doc = "per-channel normalisation with running statistics",
                                .minInputs = 5,
                                .maxInputs = 5,
                                .forward = forward,
                                .reference = reference,
                                .vjp = vjp,
                                .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(batch_normalization, kBatchNormalization)
