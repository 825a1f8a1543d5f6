// MaxPool (ONNX since 1; dilations, ceil_mode since 10): y = max over each window; padding never
// wins. The optional Indices output is not produced. VJP: dy goes to the first maximum of its
// window.

#include "core/runtime/parallel.h"
#include "core/runtime/pooling.h"

#include <limits>

namespace qs::runtime {
namespace {

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    if (ctx.intAttr("storage_order", 0) != 0) {
        return ctx.error(Errc::Unsupported, "storage_order = 1 is not supported");
    }
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(s.outShape);
    float* py = y.mutableData<float>();
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            const float* xp = x + plane * s.inSize;
            for (int64_t o = 0; o < s.outSize; ++o) {
                float best = -std::numeric_limits<float>::infinity();
                forEachWindowPosition(s, o, [&](int64_t offset, bool) {
                    if (offset >= 0 && xp[offset] > best) {
                        best = xp[offset];
                    }
                });
                py[plane * s.outSize + o] = best;
            }
        }
    });
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    const float* x = ctx.input(0).data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = Tensor::zeros(graph::DataType::Float, ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    for (int64_t plane = 0; plane < s.planes; ++plane) {
        const float* xp = x + plane * s.inSize;
        for (int64_t o = 0; o < s.outSize; ++o) {
            float best = -std::numeric_limits<float>::infinity();
            int64_t where = -1;
            forEachWindowPosition(s, o, [&](int64_t offset, bool) {
                if (offset >= 0 && xp[offset] > best) {
                    best = xp[offset];
                    where = offset;
                }
            });
            if (where >= 0) {
                pdx[plane * s.inSize + where] += dy[plane * s.outSize + o];
            }
        }
    }
    return std::vector<Tensor>{dx};
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"3x3 stride 2 pad 1",
         {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
          intsAttribute("pads", {1, 1, 1, 1})},
         {randomDistinct(rng, {1, 2, 6, 6})},
         {}},
        {"2x2 ceil mode",
         {intsAttribute("kernel_shape", {2, 2}), intsAttribute("strides", {2, 2}),
          intAttribute("ceil_mode", 1)},
         {randomDistinct(rng, {2, 1, 5, 5})},
         {}},
    };
}

const OpDef kMaxPool{.opType = "MaxPool",
                     .domain = "",
                     .sinceVersion = 1,
                     .doc = "maximum over sliding windows",
                     .minInputs = 1,
                     .maxInputs = 1,
                     .forward = forward,
                     .reference = nullptr,
                     .vjp = vjp,
                     .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(max_pool, kMaxPool)
