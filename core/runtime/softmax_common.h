// Softmax and LogSoftmax share their layout: before opset 13 the input is coerced to 2-D at
// `axis` (default 1) and normalised over everything after it; from opset 13 on, over `axis`
// alone (default -1). Both views are [outer, length, inner] with the reduction over `length`.
// The row loops are shared too: each op supplies only its output and gradient formulas.
#pragma once

#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"

#include <cmath>
#include <limits>

namespace qs::runtime {

struct SoftmaxLayout {
    int64_t outer = 1;
    int64_t length = 1;
    int64_t inner = 1;
};

inline Result<SoftmaxLayout> softmaxLayout(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    const Shape& shape = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(shape.size());
    const bool legacy = ctx.opset < 13;
    QS_ASSIGN_OR_RETURN(const int64_t axis,
                        normalizeAxis(ctx.intAttr("axis", legacy ? 1 : -1), rank, ctx));
    SoftmaxLayout layout;
    for (int64_t d = 0; d < rank; ++d) {
        if (d < axis) {
            layout.outer *= shape[static_cast<size_t>(d)];
        } else if (d == axis || legacy) {
            layout.length *= shape[static_cast<size_t>(d)];
        } else {
            layout.inner *= shape[static_cast<size_t>(d)];
        }
    }
    return layout;
}

/// Offset of the first element of row `row` (rows are the [outer, inner] pairs).
inline int64_t softmaxRowBase(const SoftmaxLayout& l, int64_t row) {
    return (row / l.inner) * l.length * l.inner + row % l.inner;
}

/// y_i = out(x_i - max, sum_j exp(x_j - max)) along each row (max-shifted so exp never
/// overflows).
template <typename Out>
Result<std::vector<Tensor>> softmaxForward(const OpContext& ctx, Out out) {
    QS_ASSIGN_OR_RETURN(SoftmaxLayout l, softmaxLayout(ctx));
    const float* x = ctx.input(0).data<float>();
    Tensor y = allocateFloat(ctx.input(0).shape());
    float* py = y.mutableData<float>();
    // An exp and a few adds per element: about 8 multiply-adds' worth.
    parallelFor(l.outer * l.inner, minChunkForWork(8 * l.length, 8),
                [&](int64_t begin, int64_t end) {
                    for (int64_t row = begin; row < end; ++row) {
                        const int64_t base = softmaxRowBase(l, row);
                        float maxValue = -std::numeric_limits<float>::infinity();
                        for (int64_t i = 0; i < l.length; ++i) {
                            maxValue = std::max(maxValue, x[base + i * l.inner]);
                        }
                        float sum = 0.0F;
                        for (int64_t i = 0; i < l.length; ++i) {
                            sum += std::exp(x[base + i * l.inner] - maxValue);
                        }
                        for (int64_t i = 0; i < l.length; ++i) {
                            py[base + i * l.inner] = out(x[base + i * l.inner] - maxValue, sum);
                        }
                    }
                });
    return std::vector<Tensor>{y};
}

/// dx_i = grad(dy_i, y_i, dot) along each row, with dot = sum_j weight(dy_j, y_j).
template <typename Weight, typename Grad>
Result<std::vector<Tensor>> softmaxVjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                       std::span<const Tensor> outputGrads, Weight weight,
                                       Grad grad) {
    QS_ASSIGN_OR_RETURN(SoftmaxLayout l, softmaxLayout(ctx));
    const float* y = outputs[0].data<float>();
    const float* dy = outputGrads[0].data<float>();
    Tensor dx = allocateFloat(ctx.input(0).shape());
    float* pdx = dx.mutableData<float>();
    for (int64_t row = 0; row < l.outer * l.inner; ++row) {
        const int64_t base = softmaxRowBase(l, row);
        double dot = 0.0;
        for (int64_t i = 0; i < l.length; ++i) {
            dot += weight(static_cast<double>(dy[base + i * l.inner]), y[base + i * l.inner]);
        }
        for (int64_t i = 0; i < l.length; ++i) {
            const int64_t at = base + i * l.inner;
            pdx[at] = grad(dy[at], y[at], static_cast<float>(dot));
        }
    }
    return std::vector<Tensor>{dx};
}

inline std::vector<OpSample> softmaxSamples(std::mt19937& rng) {
    return {
        {"last axis", {intAttribute("axis", -1)}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}},
        {"axis 1", {intAttribute("axis", 1)}, {randomTensor(rng, {2, 3, 4}, -2.0F, 2.0F)}, {}},
    };
}

} // namespace qs::runtime
