// AveragePool (ONNX since 1; ceil_mode since 10, dilations since 19): y = mean over each window.
// count_include_pad = 0 divides by the in-bounds positions, 1 by the positions inside the padded
// input. VJP: each output's gradient spread evenly over its counted positions.

#include "core/runtime/parallel.h"
#include "core/runtime/pooling.h"

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    const bool includePad = ctx.intAttr("count_include_pad", 0) != 0;
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(s.outShape);
    float* py = y.mutableData<float>();
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const float* xp = x + plane * s.inSize;
            for (int64_t o = 0; o < s.outSize; ++o) {
                float sum = 0.0F;
                int64_t count = 0;
                forEachWindowPosition(s, o, [&](int64_t offset, bool inPadded) {
                    if (offset >= 0) {
                        sum += xp[offset];
                    }
                    count += (offset >= 0 || (includePad && inPadded)) ? 1 : 0;
                });
                py[plane * s.outSize + o] = count > 0 ? sum / static_cast<float>(count) : 0.0F;
            }
        }
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    const bool includePad = ctx.intAttr("count_include_pad", 0) != 0;
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    // Every plane has the same windows: their divisors once, then the planes on every thread.
    std::vector<int64_t> counts(static_cast<size_t>(s.outSize), 0);
    for (int64_t o = 0; o < s.outSize; ++o) {
        forEachWindowPosition(s, o, [&](int64_t offset, bool inPadded) {
            counts[static_cast<size_t>(o)] += (offset >= 0 || (includePad && inPadded)) ? 1 : 0;
        });
    }
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            for (int64_t o = 0; o < s.outSize; ++o) {
                const int64_t count = counts[static_cast<size_t>(o)];
                if (count == 0) {
                    continue;
                }
                const float share = dy[plane * s.outSize + o] / static_cast<float>(count);
                forEachWindowPosition(s, o, [&](int64_t offset, bool) {
                    if (offset >= 0) {
                        pdx[plane * s.inSize + offset] += share;
                    }
                });
            }
        }
    });
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"3x3 stride 2 pad 1",
         {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
          intsAttribute("pads", {1, 1, 1, 1})},
         {randomTensor(rng, {1, 2, 6, 6})},
         {}},
        {"count_include_pad ceil",
         {intsAttribute("kernel_shape", {2, 3}), intsAttribute("strides", {2, 2}),
          intsAttribute("pads", {1, 1, 0, 1}), intAttribute("count_include_pad", 1),
          intAttribute("ceil_mode", 1)},
         {randomTensor(rng, {2, 1, 5, 6})},
         {}},
    };
}

const OpDef kAveragePool{.opType = "AveragePool",
                         .domain = "",
                         .sinceVersion = 1,
                         .doc = "mean over sliding windows",
                         .minInputs = 1,
                         .maxInputs = 1,
                         .forward = forward,
                         .reference = nullptr,
                         .vjp = vjp,
                         .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(average_pool, kAveragePool)
