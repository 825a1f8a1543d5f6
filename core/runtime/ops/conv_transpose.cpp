// ConvTranspose (ONNX since 1; 1-D and 2-D here): the adjoint of Conv. With w [C, M / group,
// kh, kw], each input pixel scatters x[c] * w[c, m] into the output window at iy * s + ky * d -
// pad. Output size: s (in - 1) + output_padding + (k - 1) d + 1 - pads, or output_shape (pads
// then follow auto_pad, SAME_UPPER by default). Kernel: col = W^T x per group (Eigen GEMM), then
// col2im; reference: the scatter loop. VJP: dx = W im2col(dy), dw = x im2col(dy)^T.

#include "core/runtime/im2col.h"
#include "core/runtime/op_util.h"
#include "core/runtime/parallel.h"

#include <Eigen/Core>

#include <span>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using RowMap = Eigen::Map<RowMatrix>;

struct ConvTShape {
    Conv2d p{}; ///< the equivalent Conv: image = our output, conv output = our input
    Shape outShape;
};

struct ConvTGeometry {
    std::span<const int64_t> strides;
    std::span<const int64_t> dilations;
    std::span<const int64_t> outPad;
};

/// Output spatial dims from output_shape, SAME_* auto_pad (both also set `pads`) or the pads.
std::vector<int64_t> outputDims(const OpContext& ctx, const Tensor& x, const Tensor& w,
                                const ConvTGeometry& geo, std::vector<int64_t>& pads) {
    const size_t rank = x.rank() - 2;
    const std::vector<int64_t> outputShape = ctx.intsAttr("output_shape");
    const std::string autoPad = ctx.stringAttr("auto_pad", "NOTSET");
    const bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
    std::vector<int64_t> out(rank);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t in = x.dim(static_cast<int64_t>(d) + 2);
        const int64_t span = (w.dim(static_cast<int64_t>(d) + 2) - 1) * geo.dilations[d] + 1;
        const int64_t full = geo.strides[d] * (in - 1) + geo.outPad[d] + span;
        if (outputShape.empty() && !same) {
            out[d] = full - pads[d] - pads[d + rank];
            continue;
        }
        out[d] =
            !outputShape.empty() ? outputShape[outputShape.size() - rank + d] : in * geo.strides[d];
        const int64_t total = std::max<int64_t>(0, full - out[d]);
        pads[d] = autoPad == "SAME_LOWER" ? total - total / 2 : total / 2;
        pads[d + rank] = total - pads[d];
    }
    return out;
}

// Shape rule: see the header comment.
Result<ConvTShape> inferShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if ((x.rank() != 3 && x.rank() != 4) || w.rank() != x.rank()) {
        return ctx.error(Errc::Unsupported,
                         "only 1-D and 2-D transposed convolutions are supported");
    }
    const bool oneD = x.rank() == 3;
    const size_t rank = x.rank() - 2;
    const int64_t group = ctx.intAttr("group", 1);
    if (group <= 0 || w.dim(0) != x.dim(1) || x.dim(1) % group != 0) {
        return ctx.error(Errc::InvalidModel, "w must be [C, M / group, k...]");
    }
    auto attr = [&](const char* name, int64_t fallback) {
        std::vector<int64_t> v = ctx.intsAttr(name);
        if (v.empty()) {
            v.assign(rank, fallback);
        }
        return v;
    };
    const std::vector<int64_t> strides = attr("strides", 1);
    const std::vector<int64_t> dilations = attr("dilations", 1);
    const std::vector<int64_t> outPad = attr("output_padding", 0);
    std::vector<int64_t> pads = ctx.intsAttr("pads");
    if (pads.empty()) {
        pads.assign(2 * rank, 0);
    }
    const std::vector<int64_t> out =
        outputDims(ctx, x, w, {.strides = strides, .dilations = dilations, .outPad = outPad}, pads);
    ConvTShape s;
    Conv2d& p = s.p;
    p.n = x.dim(0);
    p.c = w.dim(1) * group; // the equivalent Conv's input channels are our outputs
    p.m = x.dim(1);
    p.group = group;
    p.h = oneD ? 1 : out[0];
    p.w = out[rank - 1];
    p.kh = oneD ? 1 : w.dim(2);
    p.kw = w.dim(-1);
    p.sh = oneD ? 1 : strides[0];
    p.sw = strides[rank - 1];
    p.dh = oneD ? 1 : dilations[0];
    p.dw = dilations[rank - 1];
    p.pt = oneD ? 0 : pads[0];
    p.pl = pads[rank - 1];
    p.oh = oneD ? 1 : x.dim(2);
    p.ow = x.dim(-1);
    s.outShape = {p.n, p.c};
    s.outShape.insert(s.outShape.end(), out.begin(), out.end());
    return s;
}

void addBias(const OpContext& ctx, const Conv2d& p, float* y) {
    if (!ctx.has(2)) {
        return;
    }
    const float* b = ctx.input(2).data<float>();
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t c = 0; c < p.c; ++c) {
            float* plane = y + (n * p.c + c) * p.h * p.w;
            std::for_each(plane, plane + p.h * p.w, [&](float& v) { v += b[c]; });
        }
    }
}

/// Adds xv * kernel[ky, kx] to each output pixel the input pixel (iy, ix) reaches.
void scatterPixel(const Conv2d& p, float xv, const float* kernel, int64_t iy, int64_t ix,
                  float* plane) {
    for (int64_t ky = 0; ky < p.kh; ++ky) {
        const int64_t oy = iy * p.sh + ky * p.dh - p.pt;
        if (oy < 0 || oy >= p.h) {
            continue;
        }
        for (int64_t kx = 0; kx < p.kw; ++kx) {
            const int64_t ox = ix * p.sw + kx * p.dw - p.pl;
            if (ox >= 0 && ox < p.w) {
                plane[oy * p.w + ox] += xv * kernel[ky * p.kw + kx];
            }
        }
    }
}

Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvTShape s, inferShape(ctx));
    const Conv2d& p = s.p;
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    Tensor y = Tensor::zeros(graph::DataType::Float, s.outShape);
    float* py = y.mutableData<float>();
    const int64_t cPerGroup = p.m / p.group; // our input channels per group
    const int64_t mPerGroup = p.c / p.group; // our output channels per group
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t ci = 0; ci < p.m; ++ci) {
            const int64_t g = ci / cPerGroup;
            for (int64_t iy = 0; iy < p.oh; ++iy) {
                for (int64_t ix = 0; ix < p.ow; ++ix) {
                    const float xv = x[((n * p.m + ci) * p.oh + iy) * p.ow + ix];
                    for (int64_t mo = 0; mo < mPerGroup; ++mo) {
                        // This input pixel times w[ci, mo] lands on every output it reaches.
                        scatterPixel(p, xv, w + (ci * mPerGroup + mo) * p.kh * p.kw, iy, ix,
                                     py + (n * p.c + g * mPerGroup + mo) * p.h * p.w);
                    }
                }
            }
        }
    }
    addBias(ctx, p, py);
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvTShape s, inferShape(ctx));
    const Conv2d& p = s.p;
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    Tensor y = Tensor::zeros(graph::DataType::Float, s.outShape);
    float* py = y.mutableData<float>();
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t inPerGroup = p.m / p.group;
    std::vector<float> col(static_cast<size_t>(rows * pixels));
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t g = 0; g < p.group; ++g) {
            // w viewed per group as [inPerGroup, rows]; col = w^T x.
            const ConstRowMap wg(w + g * inPerGroup * rows, inPerGroup, rows);
            const ConstRowMap xg(x + (n * p.m + g * inPerGroup) * pixels, inPerGroup, pixels);
            RowMap(col.data(), rows, pixels).noalias() = wg.transpose() * xg;
            col2im(p, col.data(), py + (n * p.c + g * p.cg()) * p.h * p.w);
        }
    }
    addBias(ctx, p, py);
    return std::vector<Tensor>{y};
}

// Per-sample gradients exist for the weight alone, and need the whole batch on axis 0.
Result<void> checkPerSampleRequest(const OpContext& ctx, const Conv2d& p) {
    if (ctx.wantsPerSample(0) || ctx.wantsPerSample(2)) {
        return ctx.error(Errc::Unsupported, "per-sample gradients only for the weight input");
    }
    if (ctx.wantsPerSample(1) && p.n != ctx.perSampleBatch) {
        return ctx.error(Errc::InvalidArgument, "per-sample weight gradients need the " +
                                                    std::to_string(ctx.perSampleBatch) +
                                                    " samples on axis 0, got " +
                                                    shapeToString(ctx.input(0).shape()));
    }
    return success();
}

// The backward pass of one image: dy unfolded once per group gives dx (W · col) and adds
// x · colᵀ to dW (the image's own slice of dW when per sample).
struct ConvTransposeBackward {
    const Conv2d& p;
    const float* x;
    const float* w;
    const float* dy;
    float* dx;        // null when not wanted
    float* dw;        // null when not wanted
    int64_t dwStride; // elements between images' dW slices; 0 when summed over the batch

    void image(int64_t n, std::vector<float>& col) const {
        const int64_t pixels = p.outPixels();
        const int64_t rows = p.colRows();
        const int64_t inPerGroup = p.m / p.group;
        for (int64_t g = 0; g < p.group; ++g) {
            im2col(p, dy + (n * p.c + g * p.cg()) * p.h * p.w, 0, pixels, col.data());
            const ConstRowMap colMap(col.data(), rows, pixels);
            if (dx != nullptr) {
                const ConstRowMap wg(w + g * inPerGroup * rows, inPerGroup, rows);
                RowMap(dx + (n * p.m + g * inPerGroup) * pixels, inPerGroup, pixels).noalias() =
                    wg * colMap;
            }
            if (dw != nullptr) {
                RowMap(dw + n * dwStride + g * inPerGroup * rows, inPerGroup, rows).noalias() +=
                    ConstRowMap(x + (n * p.m + g * inPerGroup) * pixels, inPerGroup, pixels) *
                    colMap.transpose();
            }
        }
    }
};

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor>,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConvTShape s, inferShape(ctx));
    const Conv2d& p = s.p;
    QS_TRY(checkPerSampleRequest(ctx, p));
    const bool wantDw = ctx.wantsGrad(1);
    const bool perSample = ctx.wantsPerSample(1);
    Shape dwShape = ctx.input(1).shape();
    if (perSample) {
        dwShape.insert(dwShape.begin(), p.n);
    }
    Tensor dx = ctx.wantsGrad(0) ? allocateFloat(ctx.input(0).shape()) : Tensor();
    Tensor dw = wantDw ? Tensor::zeros(graph::DataType::Float, dwShape) : Tensor();
    const ConvTransposeBackward backward{.p = p,
                                         .x = ctx.input(0).data<float>(),
                                         .w = ctx.input(1).data<float>(),
                                         .dy = outputGrads[0].data<float>(),
                                         .dx = ctx.wantsGrad(0) ? dx.mutableData<float>() : nullptr,
                                         .dw = wantDw ? dw.mutableData<float>() : nullptr,
                                         .dwStride = perSample ? ctx.input(1).numElements() : 0};
    const auto colSize = static_cast<size_t>(p.colRows() * p.outPixels());
    // Images split over the threads when dw is not summed over them (dx only, or per sample).
    if (!wantDw || perSample) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            std::vector<float> col(colSize);
            for (int64_t n = begin; n < end; ++n) {
                backward.image(n, col);
            }
        });
    } else {
        std::vector<float> col(colSize);
        for (int64_t n = 0; n < p.n; ++n) {
            backward.image(n, col);
        }
    }
    std::vector<Tensor> grads{dx, dw};
    if (ctx.has(2) && ctx.wantsGrad(2)) {
        grads.push_back(reduceToShape(outputGrads[0].reshaped({p.n, p.c, p.h * p.w}), {1, p.c, 1})
                            .reshaped(ctx.input(2).shape()));
    }
    return grads;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    return {
        {"stride 2 pads",
         {intsAttribute("strides", {2, 2}), intsAttribute("pads", {1, 0, 1, 1}),
          intsAttribute("output_padding", {1, 0})},
         {randomTensor(rng, {1, 2, 3, 4}), randomTensor(rng, {2, 3, 3, 3}), randomTensor(rng, {3})},
         {0, 1}},
        {"groups 2 dilation",
         {intAttribute("group", 2), intsAttribute("dilations", {2, 1})},
         {randomTensor(rng, {2, 4, 3, 3}), randomTensor(rng, {4, 1, 2, 2})},
         {}}};
}

const OpDef kConvTranspose{.opType = "ConvTranspose",
                           .domain = "",
                           .sinceVersion = 1,
                           .doc = "transposed (fractionally strided) convolution",
                           .minInputs = 2,
                           .maxInputs = 3,
                           .forward = forward,
                           .reference = reference,
                           .vjp = vjp,
                           .samples = samples,
                           .perSampleWeightGrads = true};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(conv_transpose, kConvTranspose)
