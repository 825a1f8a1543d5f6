// BatchNormalization (ONNX since 9): per channel c (axis 1),
//   y = scale[c] * (x - mean[c]) / sqrt(var[c] + epsilon) + bias[c].
// Inference form: mean/var are the running statistics (inputs 3, 4). Kernel: fold into
// y = a[c] x + b[c], one pass. VJP: dx = dy a[c]; dscale = sum dy (x - mean) / sqrt(var + eps);
// dbias = sum dy.
// training_mode = 1 (opset 14): mean/var are the batch's (over N and the spatial dims, population
// variance), and outputs 1, 2 are the updated running statistics
//   running_mean = mean_in momentum + batch_mean (1 - momentum) (likewise var; momentum 0.9).
// Its VJP is the full batch-statistics one (Ioffe & Szegedy 2015, eq. in section 3): with
// xhat = (x - batch_mean) r, r = 1 / sqrt(batch_var + eps), M elements per channel,
//   dx = scale r / M (M dy - sum dy - xhat sum dy xhat), plus what flows from the running outputs.

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

bool trainingMode(const OpContext& ctx) {
    return ctx.intAttr("training_mode", 0) != 0;
}

/// Per-channel mean and population variance of x over N and the spatial dims, in double.
struct BatchStatistics {
    std::vector<double> mean;
    std::vector<double> var;
};

BatchStatistics batchStatistics(const BnShape& s, const float* x) {
    BatchStatistics st;
    st.mean.assign(static_cast<size_t>(s.channels), 0.0);
    st.var.assign(static_cast<size_t>(s.channels), 0.0);
    const auto count = static_cast<double>(s.batch * s.inner);
    for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
        for (int64_t i = 0; i < s.inner; ++i) {
            st.mean[static_cast<size_t>(nc % s.channels)] += x[nc * s.inner + i];
        }
    }
    for (double& m : st.mean) {
        m /= count;
    }
    for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
        const double m = st.mean[static_cast<size_t>(nc % s.channels)];
        for (int64_t i = 0; i < s.inner; ++i) {
            const double d = x[nc * s.inner + i] - m;
            st.var[static_cast<size_t>(nc % s.channels)] += d * d;
        }
    }
    for (double& v : st.var) {
        v /= count;
    }
    return st;
}

/// running = input momentum + batch (1 - momentum), as a [C] tensor.
Tensor runningStatistic(const OpContext& ctx, size_t input, const std::vector<double>& batch) {
    const double momentum = ctx.floatAttr("momentum", 0.9F);
    const float* previous = ctx.input(input).data<float>();
    Tensor out = allocateFloat(ctx.input(input).shape());
    for (size_t c = 0; c < batch.size(); ++c) {
        out.mutableData<float>()[c] =
            static_cast<float>(previous[c] * momentum + batch[c] * (1.0 - momentum));
    }
    return out;
}

// Plain loops (also the kernel: training runs are not the hot path).
Result<std::vector<Tensor>> trainingForward(const OpContext& ctx, const BnShape& s) {
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const float* x = ctx.input(0).data<float>();
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const BatchStatistics st = batchStatistics(s, x);
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
        const auto c = static_cast<size_t>(nc % s.channels);
        const double r = 1.0 / std::sqrt(st.var[c] + eps);
        for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t idx = nc * s.inner + i;
            py[idx] = static_cast<float>(scale[c] * (x[idx] - st.mean[c]) * r + bias[c]);
        }
    }
    return std::vector<Tensor>{y, runningStatistic(ctx, 3, st.mean),
                               runningStatistic(ctx, 4, st.var)};
}

/// The per-channel gradient flowing into running output `output` (zeros when none does).
std::vector<double> runningGrad(std::span<const Tensor> outputGrads, size_t output,
                                int64_t channels) {
    std::vector<double> g(static_cast<size_t>(channels), 0.0);
    if (output < outputGrads.size() && outputGrads[output].defined()) {
        for (size_t c = 0; c < g.size(); ++c) {
            g[c] = outputGrads[output].data<float>()[c];
        }
    }
    return g;
}

/// [C] tensor momentum * g: the gradient of an input running statistic.
Tensor scaledChannels(const std::vector<double>& g, double factor) {
    Tensor out = allocateFloat({static_cast<int64_t>(g.size())});
    for (size_t c = 0; c < g.size(); ++c) {
        out.mutableData<float>()[c] = static_cast<float>(g[c] * factor);
    }
    return out;
}

Result<std::vector<Tensor>> trainingVjp(const OpContext& ctx, const BnShape& s,
                                        std::span<const Tensor> outputGrads) {
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const double momentum = ctx.floatAttr("momentum", 0.9F);
    const float* x = ctx.input(0).data<float>();
    const float* scale = ctx.input(1).data<float>();
    const BatchStatistics st = batchStatistics(s, x);
    const auto count = static_cast<double>(s.batch * s.inner);
    const std::vector<double> dMean = runningGrad(outputGrads, 1, s.channels);
    const std::vector<double> dVar = runningGrad(outputGrads, 2, s.channels);
    std::vector<double> sumDy(static_cast<size_t>(s.channels), 0.0);
    std::vector<double> sumDyXhat(static_cast<size_t>(s.channels), 0.0);
    const float* dy = outputGrads[0].defined() ? outputGrads[0].data<float>() : nullptr;
    auto xhat = [&](int64_t idx, size_t c) {
        return (x[idx] - st.mean[c]) / std::sqrt(st.var[c] + eps);
    };
    for (int64_t nc = 0; dy != nullptr && nc < s.batch * s.channels; ++nc) {
        const auto c = static_cast<size_t>(nc % s.channels);
        for (int64_t i = 0; i < s.inner; ++i) {
            sumDy[c] += dy[nc * s.inner + i];
            sumDyXhat[c] += dy[nc * s.inner + i] * xhat(nc * s.inner + i, c);
        }
    }
    Tensor dx = allocateFloat(ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
        const auto c = static_cast<size_t>(nc % s.channels);
        const double r = 1.0 / std::sqrt(st.var[c] + eps);
        for (int64_t i = 0; i < s.inner; ++i) {
            const int64_t idx = nc * s.inner + i;
            const double g = dy != nullptr ? dy[idx] : 0.0;
            const double throughY =
                scale[c] * r / count * (count * g - sumDy[c] - xhat(idx, c) * sumDyXhat[c]);
            const double throughRunning =
                (1.0 - momentum) * (dMean[c] + dVar[c] * 2.0 * (x[idx] - st.mean[c])) / count;
            pdx[idx] = static_cast<float>(throughY + throughRunning);
        }
    }
    return std::vector<Tensor>{dx, scaledChannels(sumDyXhat, 1.0), scaledChannels(sumDy, 1.0),
                               scaledChannels(dMean, momentum), scaledChannels(dVar, momentum)};
}

Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(BnShape s, inferShape(ctx));
    if (trainingMode(ctx)) {
        return trainingForward(ctx, s);
    }
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
    if (trainingMode(ctx)) {
        return trainingForward(ctx, s);
    }
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
    if (trainingMode(ctx)) {
        return trainingVjp(ctx, s, outputGrads);
    }
    std::vector<float> a;
    std::vector<float> b;
    foldParameters(ctx, s.channels, a, b);
    const float eps = ctx.floatAttr("epsilon", 1e-5F);
    const float* x = ctx.input(0).data<float>();
    const float* mean = ctx.input(3).data<float>();
    const float* var = ctx.input(4).data<float>();
    const float* dy = outputGrads[0].data<float>();
    // Only what the caller wants: a Hessian sweep asks for dx alone, over large activations.
    std::vector<Tensor> grads(5);
    if (ctx.wantsGrad(0)) {
        grads[0] = allocateFloat(ctx.input(0).shape());
        float* pdx = grads[0].mutableData<float>();
        parallelFor(s.batch * s.channels, 1, [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
                const float scale = a[static_cast<size_t>(nc % s.channels)];
                for (int64_t i = nc * s.inner; i < (nc + 1) * s.inner; ++i) {
                    pdx[i] = dy[i] * scale;
                }
            }
        });
    }
    if (ctx.wantsGrad(1) || ctx.wantsGrad(2)) {
        grads[1] = Tensor::zeros(graph::DataType::Float, ctx.input(1).shape());
        grads[2] = Tensor::zeros(graph::DataType::Float, ctx.input(2).shape());
        float* pds = grads[1].mutableData<float>();
        float* pdb = grads[2].mutableData<float>();
        for (int64_t nc = 0; nc < s.batch * s.channels; ++nc) {
            const int64_t c = nc % s.channels;
            const float invStd = 1.0F / std::sqrt(var[c] + eps);
            for (int64_t i = nc * s.inner; i < (nc + 1) * s.inner; ++i) {
                pds[c] += dy[i] * (x[i] - mean[c]) * invStd;
                pdb[c] += dy[i];
            }
        }
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {{"2x3x4x4",
             {floatAttribute("epsilon", 1e-3F)},
             {randomTensor(rng, {2, 3, 4, 4}), randomTensor(rng, {3}), randomTensor(rng, {3}),
              randomTensor(rng, {3}), randomTensor(rng, {3}, 0.5F, 2.0F)},
             {0, 1, 2}},
            {"training mode, running statistics out",
             {intAttribute("training_mode", 1), floatAttribute("momentum", 0.8F)},
             {randomTensor(rng, {2, 3, 3}), randomTensor(rng, {3}), randomTensor(rng, {3}),
              randomTensor(rng, {3}), randomTensor(rng, {3}, 0.5F, 2.0F)},
             {0, 1, 2, 3, 4},
             3}};
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
