// Clip (ONNX since 6; min/max as inputs since 11): y = min(max(x, lo), hi), bounds optional.
// VJP: dy where lo < x < hi, else 0.

#include "core/runtime/elementwise.h"

#include <Eigen/Core>

#include <limits>

namespace qs::runtime {
namespace {

std::pair<float, float> bounds(const OpContext& ctx) {
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    if (ctx.hasAttr("min") || ctx.hasAttr("max")) {
        lo = ctx.floatAttr("min", lo);
        hi = ctx.floatAttr("max", hi);
    }
    if (ctx.has(1) && ctx.input(1).numElements() == 1) {
        lo = static_cast<float>(ctx.input(1).elementAsDouble(0));
    }
    if (ctx.has(2) && ctx.input(2).numElements() == 1) {
        hi = static_cast<float>(ctx.input(2).elementAsDouble(0));
    }
    return {lo, hi};
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const auto [lo, hi] = bounds(ctx);
    const Tensor& x = ctx.input(0);
    if (x.dtype() != graph::DataType::Float) {
        // Integer clips (shape arithmetic) go through the numeric dispatcher.
        Tensor y = Tensor::allocate(x.dtype(), x.shape());
        const bool ok = dispatchNumeric(x.dtype(), [&]<typename T>() {
            const T* src = x.data<T>();
            T* dst = y.mutableData<T>();
            const double l = ctx.has(1) ? ctx.input(1).elementAsDouble(0) : -1e300;
            const double h = ctx.has(2) ? ctx.input(2).elementAsDouble(0) : 1e300;
            for (int64_t i = 0; i < x.numElements(); ++i) {
                const double v = static_cast<double>(src[i]);
                dst[i] = v < l ? static_cast<T>(l) : (v > h ? static_cast<T>(h) : src[i]);
            }
        });
        if (!ok) {
            return ctx.error(Errc::Unsupported, "unsupported input type");
        }
        return std::vector<Tensor>{y};
    }
    Tensor y = allocateFloat(x.shape());
    const float* src = x.data<float>();
    float* dst = y.mutableData<float>();
    for (int64_t i = 0; i < x.numElements(); ++i) {
        dst[i] = std::min(std::max(src[i], lo), hi);
    }
    return std::vector<Tensor>{y};
}

/// dx[i] = lo < x[i] < hi ? dy[i] : 0, over [begin, end): a select by a comparison mask, one
/// vector at a time (the pass is bound by memory, so it must not fall back to scalar code).
void maskGradient(const float* x, const float* dy, float lo, float hi, int64_t begin, int64_t end,
                  float* dx) {
    using Packet = Eigen::internal::packet_traits<float>::type;
    constexpr int64_t kLanes = Eigen::internal::packet_traits<float>::size;
    using Eigen::internal::pand;
    using Eigen::internal::pcmp_lt;
    using Eigen::internal::ploadu;
    using Eigen::internal::pset1;
    using Eigen::internal::pstoreu;
    const Packet l = pset1<Packet>(lo);
    const Packet h = pset1<Packet>(hi);
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
        const Packet v = ploadu<Packet>(x + i);
        const Packet inside = pand(pcmp_lt(l, v), pcmp_lt(v, h));
        pstoreu(dx + i, pand(inside, ploadu<Packet>(dy + i)));
    }
    for (; i < end; ++i) {
        dx[i] = (x[i] > lo && x[i] < hi) ? dy[i] : 0.0F;
    }
}

// The mask from the output: lo < clip(x) < hi exactly where lo < x < hi (a NaN fails both), and
// the output is what Executor::forwardForBackward keeps of a fused Conv + Clip.
Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    // Named copies: clang before 16 cannot capture structured bindings.
    const auto range = bounds(ctx);
    const float lo = range.first;
    const float hi = range.second;
    const Tensor& x = ctx.input(0);
    if (x.dtype() != graph::DataType::Float) {
        return ctx.error(Errc::Unsupported, "gradients need a float input");
    }
    const Tensor& y = !outputs.empty() && outputs[0].rawData() != nullptr ? outputs[0] : x;
    Tensor dx = ctx.reusesOutputGrad(0) ? outputGrads[0] : allocateFloat(x.shape());
    const float* px = y.data<float>();
    const float* dy = outputGrads[0].data<float>();
    float* out = dx.mutableData<float>();
    parallelFor(x.numElements(), 1 << 14,
                [&](int64_t begin, int64_t end) { maskGradient(px, dy, lo, hi, begin, end, out); });
    std::vector<Tensor> grads(ctx.numInputs());
    grads[0] = dx;
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"inputs -0.5..0.5",
         {},
         {randomTensor(rng, {3, 4}, -1.0F, 1.0F), Tensor::scalar<float>(-0.5F),
          Tensor::scalar<float>(0.5F)},
         {0}},
        {"max only", {}, {randomTensor(rng, {3, 4}), Tensor(), Tensor::scalar<float>(0.25F)}, {0}},
        // Relu6 over more than one vector plus a tail, the form MobileNets use.
        {"0..6, 2x3x7",
         {},
         {randomTensor(rng, {2, 3, 7}, -3.0F, 9.0F), Tensor::scalar<float>(0.0F),
          Tensor::scalar<float>(6.0F)},
         {0}}};
}

const OpDef kClip{.opType = "Clip",
                  .domain = "",
                  .sinceVersion = 6,
                  .doc = "clamp to [min, max]",
                  .minInputs = 1,
                  .maxInputs = 3,
                  .forward = forward,
                  .reference = nullptr,
                  .vjp = vjp,
                  .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(clip, kClip)
