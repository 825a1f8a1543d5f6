// Conv (ONNX since 1, auto_pad/dilations/group as in opset 11): N-d convolution with groups,
//   y[n, m, o] = b[m] + sum_{c in group(m)} sum_k x[n, c, o * s + k * d - pad_begin] * w[m, c, k].
// Fast kernel (1-D and 2-D): a packed GEMM per group (packed_gemm.h) whose B strips are im2col
// columns written straight from the image (a plain copy for pointwise convolutions), and a direct
// kernel for depthwise convolutions (conv_kernels.h); the reference is the plain N-d sum above.
// The executor may fuse a following Relu/Clip and a residual Add into its private copy of the
// node: y = clamp(conv + residual, qs_fused_min, qs_fused_max), residual = input 3; it also passes
// the weights packed once, at creation, as input 4.
// VJP: dx = col2im(W^T dy), dw = dy col^T (Eigen GEMMs), db = sum dy, each only when asked for;
// depthwise dx is the direct kernel with the flipped filter. With a fused activation dy is first
// zeroed where the output sits on a clamp bound.

#include "core/runtime/conv_geometry.h"
#include "core/runtime/conv_kernels.h"
#include "core/runtime/im2col.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/winograd.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <limits>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMap = Eigen::Map<RowMatrix>;
using ConstRowMap = Eigen::Map<const RowMatrix>;
using StridedRowMap = Eigen::Map<RowMatrix, 0, Eigen::OuterStride<>>;

// Shape rule: x [N, C, D...], w [M, C / group, K...], b [M] -> y [N, M, O...].
struct ConvShape {
    ConvGeometry geo;
    int64_t batch = 0;
    int64_t channels = 0;
    int64_t filters = 0;
    int64_t group = 1;
    Shape outShape;
};

Result<ConvShape> inferShape(const OpContext& ctx) {
    QS_TRY(requireFloat(ctx, 0));
    QS_TRY(requireFloat(ctx, 1));
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (x.rank() < 3 || w.rank() != x.rank()) {
        return ctx.error(Errc::InvalidModel, "needs x of rank >= 3 and w of the same rank, got " +
                                                 shapeToString(x.shape()) + " and " +
                                                 shapeToString(w.shape()));
    }
    ConvShape s;
    s.batch = x.dim(0);
    s.channels = x.dim(1);
    s.filters = w.dim(0);
    s.group = ctx.intAttr("group", 1);
    if (s.group <= 0 || s.channels != w.dim(1) * s.group || s.filters % s.group != 0) {
        return ctx.error(Errc::InvalidModel, "x " + shapeToString(x.shape()) + ", w " +
                                                 shapeToString(w.shape()) + " and group " +
                                                 std::to_string(s.group) + " do not fit");
    }
    if (ctx.has(2) && ctx.input(2).numElements() != s.filters) {
        return ctx.error(Errc::InvalidModel, "bias has the wrong size");
    }
    if (ctx.has(3)) {
        QS_TRY(requireFloat(ctx, 3));
    }
    const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
    const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
    const std::vector<int64_t> kernelAttr = ctx.intsAttr("kernel_shape");
    if (!kernelAttr.empty() && kernelAttr != kernel) {
        return ctx.error(Errc::InvalidModel, "kernel_shape disagrees with the weight");
    }
    QS_ASSIGN_OR_RETURN(s.geo, convGeometry(ctx, spatial, kernel));
    s.outShape = {s.batch, s.filters};
    s.outShape.insert(s.outShape.end(), s.geo.output.begin(), s.geo.output.end());
    if (ctx.has(3) && ctx.input(3).shape() != s.outShape) {
        return ctx.error(Errc::InvalidModel,
                         "the fused residual " + shapeToString(ctx.input(3).shape()) +
                             " does not match the output " + shapeToString(s.outShape));
    }
    return s;
}

/// The fused epilogue of the executor's private node (identity for a plain Conv).
ConvEpilogue epilogueOf(const OpContext& ctx) {
    ConvEpilogue e;
    e.bias = ctx.has(2) ? ctx.input(2).data<float>() : nullptr;
    e.residual = ctx.has(3) ? ctx.input(3).data<float>() : nullptr;
    e.lo = ctx.floatAttr(kFusedMinAttr, e.lo);
    e.hi = ctx.floatAttr(kFusedMaxAttr, e.hi);
    return e;
}

// Reference kernel: the defining sum, for any number of spatial dims.
/// Index helpers of the reference: row-major strides of the input, output and kernel windows.
struct WindowIndex {
    const ConvGeometry& g;
    std::vector<int64_t> inStrides = stridesOf(g.input);
    std::vector<int64_t> outStrides = stridesOf(g.output);
    std::vector<int64_t> kStrides = stridesOf(g.kernel);

    /// Offset in the input plane that kernel tap k of output position o reads; false in padding.
    bool inputOffset(int64_t o, int64_t k, int64_t& offset) const {
        offset = 0;
        for (size_t d = 0; d < g.rank(); ++d) {
            const int64_t od = (o / outStrides[d]) % g.output[d];
            const int64_t kd = (k / kStrides[d]) % g.kernel[d];
            const int64_t pos = od * g.strides[d] + kd * g.dilations[d] - g.padsBegin[d];
            if (pos < 0 || pos >= g.input[d]) {
                return false;
            }
            offset += pos * inStrides[d];
        }
        return true;
    }
};

// Reference kernel: the defining sum, for any number of spatial dims, then the fused epilogue.
Result<std::vector<Tensor>> reference(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    const ConvGeometry& g = s.geo;
    const WindowIndex index{g};
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    const ConvEpilogue e = epilogueOf(ctx);
    Tensor y = allocateFloat(s.outShape);
    float* out = y.mutableData<float>();
    const int64_t cPerGroup = s.channels / s.group;
    const int64_t inSize = shapeNumElements(g.input);
    const int64_t outSize = shapeNumElements(g.output);
    const int64_t kSize = shapeNumElements(g.kernel);
    const auto sum = [&](int64_t n, int64_t m, int64_t o) {
        const int64_t grp = m / (s.filters / s.group);
        double acc = e.bias != nullptr ? e.bias[m] : 0.0;
        for (int64_t c = 0; c < cPerGroup; ++c) {
            const float* xc = x + (n * s.channels + grp * cPerGroup + c) * inSize;
            const float* wc = w + (m * cPerGroup + c) * kSize;
            for (int64_t k = 0; k < kSize; ++k) {
                int64_t offset = 0;
                if (index.inputOffset(o, k, offset)) {
                    acc += static_cast<double>(xc[offset]) * wc[k];
                }
            }
        }
        return acc;
    };
    for (int64_t n = 0; n < s.batch; ++n) {
        for (int64_t m = 0; m < s.filters; ++m) {
            for (int64_t o = 0; o < outSize; ++o) {
                const int64_t i = (n * s.filters + m) * outSize + o;
                const double v = sum(n, m, o) + (e.residual != nullptr ? e.residual[i] : 0.0F);
                out[i] = std::min(std::max(static_cast<float>(v), e.lo), e.hi);
            }
        }
    }
    return std::vector<Tensor>{y};
}

Conv2d as2d(const ConvShape& s) {
    const ConvGeometry& g = s.geo;
    const bool oneD = g.rank() == 1;
    const size_t last = g.rank() - 1;
    Conv2d p{};
    p.n = s.batch;
    p.c = s.channels;
    p.m = s.filters;
    p.group = s.group;
    p.h = oneD ? 1 : g.input[0];
    p.w = g.input[last];
    p.kh = oneD ? 1 : g.kernel[0];
    p.kw = g.kernel[last];
    p.sh = oneD ? 1 : g.strides[0];
    p.sw = g.strides[last];
    p.dh = oneD ? 1 : g.dilations[0];
    p.dw = g.dilations[last];
    p.pt = oneD ? 0 : g.padsBegin[0];
    p.pl = g.padsBegin[last];
    p.oh = oneD ? 1 : g.output[0];
    p.ow = g.output[last];
    return p;
}

/// Grouped convolution as one packed GEMM per (image, group): weights packed into row panels
/// (by the executor ahead of time, else here), B strips packed from the image (im2col on the fly,
/// from a padded copy unless pointwise: Im2colSource), the epilogue applied per finished tile.
void gemmConv2d(const Conv2d& p, const float* x, const float* w, const float* prepacked,
                const ConvEpilogue& e, float* y) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    thread_local std::vector<float> packed;
    thread_local std::vector<float> sourceCopy;
    if (prepacked == nullptr) {
        packed.resize(static_cast<size_t>(packedGroupedWeightsSize(p.m, rows, p.group)));
        packGroupedWeights(w, p.m, rows, p.group, packed.data());
        prepacked = packed.data();
    }
    const int64_t panelSize = packedWeightsSize(p.mg(), rows);
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t grp = 0; grp < p.group; ++grp) {
            const float* xg = x + (n * p.c + grp * p.cg()) * p.h * p.w;
            const int64_t outOffset = (n * p.m + grp * p.mg()) * pixels;
            const GemmOutput out{y + outOffset, pixels,
                                 e.residual != nullptr ? e.residual + outOffset : nullptr,
                                 grp * p.mg()};
            const Im2colSource source(p, xg, sourceCopy);
            const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
                source.packStrips(j0, j0 + count, strips);
            };
            packedGemm(p.mg(), pixels, rows, prepacked + grp * panelSize, pack, out, e);
        }
    }
}

/// Weights the executor packed ahead of time (input 4 of its private node) as `expected` floats.
Result<const float*> prepackedWeights(const OpContext& ctx, int64_t expected) {
    if (!ctx.has(4)) {
        return nullptr;
    }
    const Tensor& packed = ctx.input(4);
    if (packed.dtype() != graph::DataType::Float || packed.numElements() != expected) {
        return ctx.error(Errc::InvalidArgument, "the prepacked weights do not fit the weights");
    }
    return packed.data<float>();
}

/// Winograd F(2x2, 3x3) with the executor's transformed weights, else transformed here.
Result<std::vector<Tensor>> winogradForward(const OpContext& ctx, const Conv2d& p,
                                            const ConvEpilogue& e, Tensor y) {
    QS_ASSIGN_OR_RETURN(const float* prepacked,
                        prepackedWeights(ctx, winogradWeightsSize(p.m, p.c)));
    thread_local std::vector<float> packed;
    if (prepacked == nullptr) {
        packed.resize(static_cast<size_t>(winogradWeightsSize(p.m, p.c)));
        packWinogradWeights(ctx.input(1).data<float>(), p.m, p.c, packed.data());
        prepacked = packed.data();
    }
    winogradConv2d(p, ctx.input(0).data<float>(), prepacked, e, y.mutableData<float>());
    return std::vector<Tensor>{y};
}

// Fast kernel.
Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    if (s.geo.rank() > 2) {
        return reference(ctx);
    }
    const Conv2d p = as2d(s);
    const ConvEpilogue e = epilogueOf(ctx);
    Tensor y = allocateFloat(s.outShape);
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    if (winogradApplies(p)) {
        return winogradForward(ctx, p, e, y);
    }
    if (p.isDepthwise()) {
        depthwiseConv2d(p, x, w, e, y.mutableData<float>());
    } else {
        QS_ASSIGN_OR_RETURN(
            const float* prepacked,
            prepackedWeights(ctx, packedGroupedWeightsSize(p.m, p.colRows(), p.group)));
        gemmConv2d(p, x, w, prepacked, e, y.mutableData<float>());
    }
    return std::vector<Tensor>{y};
}

/// Output columns [lo, hi] whose input column ox sw + off lies inside the image.
std::pair<int64_t, int64_t> insideColumns(const Conv2d& p, int64_t off) {
    const int64_t lo = off >= 0 ? 0 : (-off + p.sw - 1) / p.sw;
    const int64_t hi = std::min(p.w - 1 - off < 0 ? -1 : (p.w - 1 - off) / p.sw, p.ow - 1);
    return {lo, hi};
}

/// Calls fn(iy, tap, off, lo, hi) for every kernel tap (i, j) of output row oy that reads an
/// input row iy inside the image, with the output columns [lo, hi] whose input is inside too.
template <typename Fn>
void forEachTap(const Conv2d& p, int64_t oy, Fn fn) {
    for (int64_t i = 0; i < p.kh; ++i) {
        const int64_t iy = oy * p.sh + i * p.dh - p.pt;
        if (iy < 0 || iy >= p.h) {
            continue;
        }
        for (int64_t j = 0; j < p.kw; ++j) {
            const int64_t off = j * p.dw - p.pl;
            const auto [lo, hi] = insideColumns(p, off);
            fn(iy, i * p.kw + j, off, lo, hi);
        }
    }
}

/// Scatters one plane's output gradient back through its filter: dx += W^T dy.
void depthwisePlaneInputGrad(const Conv2d& p, const float* wc, const float* gc, float* dxc) {
    for (int64_t oy = 0; oy < p.oh; ++oy) {
        const float* grow = gc + oy * p.ow;
        forEachTap(p, oy, [&](int64_t iy, int64_t tap, int64_t off, int64_t lo, int64_t hi) {
            const float wv = wc[tap];
            float* drow = dxc + iy * p.w + off;
            for (int64_t ox = lo; ox <= hi; ++ox) {
                drow[ox * p.sw] += wv * grow[ox];
            }
        });
    }
}

/// One plane's filter gradient: dw[tap] += sum over outputs of x[window tap] dy.
void depthwisePlaneWeightGrad(const Conv2d& p, const float* xc, const float* gc, float* dwc) {
    for (int64_t oy = 0; oy < p.oh; ++oy) {
        const float* grow = gc + oy * p.ow;
        forEachTap(p, oy, [&](int64_t iy, int64_t tap, int64_t off, int64_t lo, int64_t hi) {
            const float* xrow = xc + iy * p.w + off;
            float acc = 0.0F;
            for (int64_t ox = lo; ox <= hi; ++ox) {
                acc += xrow[ox * p.sw] * grow[ox];
            }
            dwc[tap] += acc;
        });
    }
}

/// Adds dx (when dx is set) and dw (when dw is set; per image, [N, C, taps], with `perSample`)
/// of a depthwise convolution, plane by plane.
void depthwiseBackward(const Conv2d& p, const float* x, const float* w, const float* dy, float* dx,
                       float* dw, bool perSample = false) {
    const int64_t taps = p.kh * p.kw;
    const int64_t planes = p.n * p.c;
    if (dx != nullptr) {
        parallelFor(planes, 1, [&](int64_t begin, int64_t end) {
            for (int64_t nc = begin; nc < end; ++nc) {
                depthwisePlaneInputGrad(p, w + (nc % p.c) * taps, dy + nc * p.outPixels(),
                                        dx + nc * p.h * p.w);
            }
        });
    }
    if (dw == nullptr) {
        return;
    }
    // Per image every plane has its own filter slot; summed over the batch, threads split the
    // channels (each channel's images stay on one thread).
    parallelFor(perSample ? planes : p.c, 1, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
            for (int64_t nc = task; nc < planes; nc += perSample ? planes : p.c) {
                depthwisePlaneWeightGrad(p, x + nc * p.h * p.w, dy + nc * p.outPixels(),
                                         dw + (perSample ? nc : nc % p.c) * taps);
            }
        }
    });
}

/// dy spread out by the strides (zeros between the samples): the input of the stride-1
/// convolution that gives dx of a strided one.
std::vector<float> spreadByStrides(const Conv2d& p, const float* dy, int64_t height,
                                   int64_t width) {
    std::vector<float> spread(static_cast<size_t>(p.n * p.c * height * width), 0.0F);
    for (int64_t plane = 0; plane < p.n * p.c; ++plane) {
        const float* src = dy + plane * p.outPixels();
        float* dst = spread.data() + plane * height * width;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
            for (int64_t ox = 0; ox < p.ow; ++ox) {
                dst[oy * p.sh * width + ox * p.sw] = src[oy * p.ow + ox];
            }
        }
    }
    return spread;
}

/// dx of a depthwise convolution, overwriting dx: 3x3 stride 2 by its own kernel, else as a
/// depthwise convolution itself: dy (spread by the strides) correlated with the flipped kernel,
/// padded by (k - 1) d - pad, which the direct forward kernel computes. Returns false, leaving dx
/// alone, for pads beyond the kernel's reach.
bool depthwiseInputGrad(const Conv2d& p, const float* w, const float* dy, float* dx) {
    if (depthwiseInputGradStride2(p, w, dy, dx)) {
        return true;
    }
    Conv2d q = p;
    q.h = (p.oh - 1) * p.sh + 1;
    q.w = (p.ow - 1) * p.sw + 1;
    q.sh = 1;
    q.sw = 1;
    q.oh = p.h;
    q.ow = p.w;
    q.pt = (p.kh - 1) * p.dh - p.pt;
    q.pl = (p.kw - 1) * p.dw - p.pl;
    if (q.pt < 0 || q.pl < 0) {
        return false;
    }
    const int64_t taps = p.kh * p.kw;
    std::vector<float> flipped(static_cast<size_t>(p.c * taps));
    for (int64_t c = 0; c < p.c; ++c) {
        std::reverse_copy(w + c * taps, w + (c + 1) * taps, flipped.begin() + c * taps);
    }
    if (p.sh == 1 && p.sw == 1) {
        depthwiseConv2d(q, dy, flipped.data(), ConvEpilogue{}, dx);
        return true;
    }
    const std::vector<float> spread = spreadByStrides(p, dy, q.h, q.w);
    depthwiseConv2d(q, spread.data(), flipped.data(), ConvEpilogue{}, dx);
    return true;
}

/// The gradient at the convolution's own sum: dy where the fused clamp passed the value through,
/// 0 where the output sits on a bound (the Clip rule); dy itself without a fused activation.
Tensor gradientBeforeClamp(const ConvEpilogue& e, const Tensor& output, const Tensor& outputGrad) {
    if (e.lo == -std::numeric_limits<float>::infinity() &&
        e.hi == std::numeric_limits<float>::infinity()) {
        return outputGrad;
    }
    Tensor masked = allocateFloat(outputGrad.shape());
    const float* y = output.data<float>();
    const float* dy = outputGrad.data<float>();
    float* out = masked.mutableData<float>();
    for (int64_t i = 0; i < masked.numElements(); ++i) {
        out[i] = (y[i] > e.lo && y[i] < e.hi) ? dy[i] : 0.0F;
    }
    return masked;
}

/// im2col columns of the backward pass, reused across calls: the columns of a large layer are
/// megabytes of fresh pages otherwise.
std::vector<float>& columnScratch() {
    thread_local std::vector<float> col;
    return col;
}

/// Input channels per task of gemmInputGrad: enough tasks for every thread even at batch 1.
int64_t channelsPerTask(const Conv2d& p) {
    const int64_t tasksPerChannelSet = p.n * p.group;
    const int64_t wanted = (numThreads() + tasksPerChannelSet - 1) / tasksPerChannelSet;
    const int64_t chunks = std::clamp<int64_t>(wanted, 1, p.cg());
    return (p.cg() + chunks - 1) / chunks;
}

/// dx of a GEMM-based convolution, per (image, group, block of input channels) on every thread:
/// W^T dy straight into dx for pointwise convolutions (every element written once), else into
/// columns that col2im adds into dx (which must start at zero); a block's columns only reach its
/// own channels' planes, so blocks never write the same element. Eigen's GEMM: it packs W^T from
/// the weights as they are, which beats transposing and packing them for the forward pass's
/// packed GEMM on every call.
void gemmInputGrad(const Conv2d& p, const float* w, const float* dy, float* dx) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t taps = p.kh * p.kw;
    const int64_t block = channelsPerTask(p);
    const int64_t blocks = (p.cg() + block - 1) / block;
    parallelFor(p.n * p.group * blocks, 1, [&](int64_t begin, int64_t end) {
        std::vector<float>& col = columnScratch();
        for (int64_t task = begin; task < end; ++task) {
            const int64_t n = task / (p.group * blocks);
            const int64_t grp = (task / blocks) % p.group;
            const int64_t c0 = (task % blocks) * block;
            const int64_t channels = std::min(block, p.cg() - c0);
            const ConstRowMap dyg(dy + (n * p.m + grp * p.mg()) * pixels, p.mg(), pixels);
            const ConstRowMap wg(w + grp * p.mg() * rows, p.mg(), rows);
            const auto wBlock = wg.middleCols(c0 * taps, channels * taps).transpose();
            float* dxg = dx + (n * p.c + grp * p.cg() + c0) * p.h * p.w;
            if (p.isPointwise()) {
                RowMap(dxg, channels, pixels).noalias() = wBlock * dyg;
                continue;
            }
            col.resize(static_cast<size_t>(channels * taps * pixels));
            RowMap(col.data(), channels * taps, pixels).noalias() = wBlock * dyg;
            Conv2d q = p;
            q.c = channels;
            q.group = 1;
            col2im(q, col.data(), dxg);
        }
    });
}

/// Adds dw of a GEMM-based convolution, dw = sum over images of dy im2col(x)^T per group, or
/// writes it per image (dw [N, M, ...], `perSample`). Threads split the images (partial sums
/// added at the end) or, for one image, the filters.
void gemmWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw, bool perSample) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t size = p.m * rows;
    const auto imageGrad = [&](int64_t n, float* out, int64_t m0, int64_t m1) {
        std::vector<float>& col = columnScratch();
        col.resize(static_cast<size_t>(rows * pixels));
        for (int64_t grp = 0; grp < p.group; ++grp) {
            const int64_t lo = std::max(m0, grp * p.mg());
            const int64_t hi = std::min(m1, (grp + 1) * p.mg());
            if (lo >= hi) {
                continue;
            }
            const float* xg = x + (n * p.c + grp * p.cg()) * p.h * p.w;
            im2col(p, xg, 0, pixels, col.data());
            const ConstRowMap dyg(dy + (n * p.m + lo) * pixels, hi - lo, pixels);
            RowMap(out + lo * rows, hi - lo, rows).noalias() +=
                dyg * ConstRowMap(col.data(), rows, pixels).transpose();
        }
    };
    if (perSample) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n) {
                imageGrad(n, dw + n * size, 0, p.m);
            }
        });
        return;
    }
    if (p.n == 1 || numThreads() == 1) {
        parallelFor(p.m, kGemmRows, [&](int64_t m0, int64_t m1) {
            for (int64_t n = 0; n < p.n; ++n) {
                imageGrad(n, dw, m0, m1);
            }
        });
        return;
    }
    const int64_t parts = std::min<int64_t>(numThreads(), p.n);
    std::vector<std::vector<float>> partial(static_cast<size_t>(parts - 1),
                                            std::vector<float>(static_cast<size_t>(size), 0.0F));
    parallelFor(parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
            float* out = part == 0 ? dw : partial[static_cast<size_t>(part - 1)].data();
            for (int64_t n = part; n < p.n; n += parts) {
                imageGrad(n, out, 0, p.m);
            }
        }
    });
    for (const std::vector<float>& sum : partial) {
        for (int64_t i = 0; i < size; ++i) {
            dw[i] += sum[static_cast<size_t>(i)];
        }
    }
}

/// dx of the convolution: the direct depthwise kernel where it applies, else the scatter (both
/// depthwise), Winograd (3x3 stride 1) or the GEMM.
Tensor inputGrad(const Conv2d& p, const Shape& shape, const float* w, const float* dy) {
    if (p.isDepthwise()) {
        Tensor dx = allocateFloat(shape);
        if (depthwiseInputGrad(p, w, dy, dx.mutableData<float>())) {
            return dx;
        }
        dx = Tensor::zeros(graph::DataType::Float, shape);
        depthwiseBackward(p, nullptr, w, dy, dx.mutableData<float>(), nullptr);
        return dx;
    }
    if (winogradInputGradApplies(p)) {
        Tensor dx = allocateFloat(shape);
        winogradInputGrad(p, w, dy, dx.mutableData<float>());
        return dx;
    }
    Tensor dx =
        p.isPointwise() ? allocateFloat(shape) : Tensor::zeros(graph::DataType::Float, shape);
    gemmInputGrad(p, w, dy, dx.mutableData<float>());
    return dx;
}

/// db[m] = sum over images and pixels of dy[n, m, :].
Tensor biasGrad(const Conv2d& p, const Shape& biasShape, const float* dy) {
    Tensor db = Tensor::zeros(graph::DataType::Float, biasShape);
    float* pdb = db.mutableData<float>();
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t m = 0; m < p.m; ++m) {
            pdb[m] += ConstRowMap(dy + (n * p.m + m) * p.outPixels(), 1, p.outPixels()).sum();
        }
    }
    return db;
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(ConvShape s, inferShape(ctx));
    if (s.geo.rank() > 2) {
        return ctx.error(Errc::Unsupported, "gradients of 3-D convolutions are not implemented");
    }
    const Conv2d p = as2d(s);
    const float* x = ctx.input(0).data<float>();
    const float* w = ctx.input(1).data<float>();
    const Tensor sumGrad = gradientBeforeClamp(epilogueOf(ctx), outputs[0], outputGrads[0]);
    const float* dy = sumGrad.data<float>();
    std::vector<Tensor> grads(ctx.numInputs());
    if (ctx.has(3) && ctx.wantsGrad(3)) {
        grads[3] = sumGrad;
    }
    if (ctx.wantsGrad(0)) {
        grads[0] = inputGrad(p, ctx.input(0).shape(), w, dy);
    }
    if (ctx.wantsGrad(1)) {
        const bool perSample = ctx.wantsPerSample(1);
        if (perSample && p.n != ctx.perSampleBatch) {
            return ctx.error(Errc::InvalidArgument, "per-sample weight gradients need the " +
                                                        std::to_string(ctx.perSampleBatch) +
                                                        " samples on axis 0 of the input, got " +
                                                        shapeToString(ctx.input(0).shape()));
        }
        Shape shape = ctx.input(1).shape();
        if (perSample) {
            shape.insert(shape.begin(), p.n);
        }
        Tensor dw = Tensor::zeros(graph::DataType::Float, shape);
        if (p.isDepthwise()) {
            depthwiseBackward(p, x, w, dy, nullptr, dw.mutableData<float>(), perSample);
        } else {
            gemmWeightGrad(p, x, dy, dw.mutableData<float>(), perSample);
        }
        grads[1] = dw;
    }
    if (ctx.wantsPerSample(2) || ctx.wantsPerSample(3)) {
        return ctx.error(Errc::Unsupported, "per-sample gradients only for the weight input");
    }
    if (ctx.has(2) && ctx.wantsGrad(2)) {
        grads[2] = biasGrad(p, ctx.input(2).shape(), dy);
    }
    return grads;
}

/// A sample of the executor's fused form: clamp to [0, 6] (ReLU6) after a residual chosen so that
/// conv + residual lands at least 0.2 away from both bounds, so finite differences never straddle
/// a kink of the clamp.
OpSample fusedSample(std::mt19937& rng, std::string label, std::vector<graph::Attribute> attrs,
                     std::vector<Tensor> inputs) {
    graph::Node node;
    node.opType = "Conv";
    node.attributes = attrs;
    const OpContext ctx{node, inputs};
    const Tensor plain = reference(ctx).value()[0];
    Tensor residual = randomAwayFromZero(rng, plain.shape(), 0.2F);
    float* r = residual.mutableData<float>();
    for (int64_t i = 0; i < residual.numElements(); ++i) {
        r[i] -= plain.data<float>()[i];
    }
    inputs.resize(3);
    inputs.push_back(residual);
    attrs.push_back(floatAttribute(std::string(kFusedMinAttr), 0.0F));
    attrs.push_back(floatAttribute(std::string(kFusedMaxAttr), 6.0F));
    return {std::move(label), std::move(attrs), std::move(inputs), {}};
}

/// Depthwise samples: the direct kernel's stride phases, asymmetric pads, dilations and the
/// generic tap loop (9x9), on rows wide enough for its vector loop.
std::vector<OpSample> depthwiseSamples(std::mt19937& rng) {
    std::vector<OpSample> out;
    out.push_back({"depthwise 3x3 stride 1 pad 1",
                   {intAttribute("group", 4), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 4, 9, 19}), randomTensor(rng, {4, 1, 3, 3}),
                    randomTensor(rng, {4})},
                   {}});
    out.push_back(
        {"depthwise stride 2",
         {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1}),
          intsAttribute("strides", {2, 2})},
         {randomTensor(rng, {2, 3, 6, 6}), randomTensor(rng, {3, 1, 3, 3}), randomTensor(rng, {3})},
         {}});
    out.push_back({"depthwise stride 2 asym pads wide",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 2, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 8, 37}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise dilation 2 stride (1, 3) 5x3",
                   {intAttribute("group", 2), intsAttribute("dilations", {2, 2}),
                    intsAttribute("strides", {1, 3}), intsAttribute("pads", {2, 3, 1, 2})},
                   {randomTensor(rng, {1, 2, 10, 40}), randomTensor(rng, {2, 1, 5, 3}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise dilation 2 stride 1 asym pads",
                   {intAttribute("group", 2), intsAttribute("dilations", {2, 2}),
                    intsAttribute("pads", {1, 3, 2, 0})},
                   {randomTensor(rng, {1, 2, 7, 12}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 9x9 (tap count not unrolled)",
                   {intAttribute("group", 2), intsAttribute("pads", {4, 4, 4, 4})},
                   {randomTensor(rng, {1, 2, 10, 11}), randomTensor(rng, {2, 1, 9, 9})},
                   {}});
    // The 3x3 fast path (conv_kernels.cpp): stride 1 tall enough to read the input in place
    // between staged top and bottom bands, odd widths, planes smaller than one vector, and each
    // stride-2 column pattern (begin pads 0, 1, 2; rows and columns differing).
    out.push_back({"depthwise 3x3 stride 1 in place, batch 2, odd width",
                   {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {2, 3, 20, 13}), randomTensor(rng, {3, 1, 3, 3}),
                    randomTensor(rng, {3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 1 below one vector",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 2, 2, 3}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back(
        {"depthwise 3x3 stride 1 bottom pad 2, width 8",
         {intAttribute("group", 2), intsAttribute("pads", {1, 1, 2, 1})},
         {randomTensor(rng, {1, 2, 6, 8}), randomTensor(rng, {2, 1, 3, 3}), randomTensor(rng, {2})},
         {}});
    out.push_back({"depthwise 3x3 stride 1 one column",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 2, 9, 1}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads 0 (end 1)",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {2, 2, 8, 20}), randomTensor(rng, {2, 1, 3, 3}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads top 1 left 0, odd height",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 0, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 9, 10}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads 2",
                   {intAttribute("group", 2), intsAttribute("pads", {2, 2, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 7, 19}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 below one vector",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 3, 4}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back(
        {"depthwise 1-D stride 2",
         {intAttribute("group", 2), intsAttribute("pads", {1, 1}), intsAttribute("strides", {2})},
         {randomTensor(rng, {1, 2, 23}), randomTensor(rng, {2, 1, 3})},
         {}});
    return out;
}

/// Winograd F(2x2, 3x3) samples (3x3, stride 1, at least 16 channels and filters): odd output
/// sizes (a last tile half outside), no pads and asymmetric pads, rows of more than 8 tiles (the
/// vector loop and its overlapping last step), batch 2 and the fused epilogue.
std::vector<OpSample> winogradSamples(std::mt19937& rng) {
    std::vector<OpSample> out;
    out.push_back({"winograd pad 1 odd output batch 2",
                   {intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {2, 16, 9, 13}), randomTensor(rng, {16, 16, 3, 3}),
                    randomTensor(rng, {16})},
                   {}});
    out.push_back({"winograd no pads 25 filters",
                   {},
                   {randomTensor(rng, {1, 16, 10, 22}), randomTensor(rng, {25, 16, 3, 3})},
                   {}});
    out.push_back({"winograd asym pads wide rows",
                   {intsAttribute("pads", {2, 0, 0, 2})},
                   {randomTensor(rng, {1, 20, 7, 37}), randomTensor(rng, {16, 20, 3, 3}),
                    randomTensor(rng, {16})},
                   {}});
    out.push_back(fusedSample(rng, "fused residual + clip, winograd",
                              {intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {2, 16, 12, 18}),
                               randomTensor(rng, {17, 16, 3, 3}), randomTensor(rng, {17})}));
    return out;
}

/// GEMM samples for the im2col source layouts (padded phase copy for strides 2 and 3, the
/// subsampled copy of 1x1 kernels with strides or pads) and the GEMM's edge tiles: N % 16 of
/// 1-4 (column kernel), 5-8 (half kernel) and 9-15 (full tile), N below 16, and an edge tile
/// over two depth blocks.
std::vector<OpSample> stridedSamples(std::mt19937& rng) {
    const auto strides2 = intsAttribute("strides", {2, 2});
    const auto pads1 = intsAttribute("pads", {1, 1, 1, 1});
    std::vector<OpSample> out;
    out.push_back({"7x7 stride 2 pads 3, C = 3 (stem), N = 120",
                   {strides2, intsAttribute("pads", {3, 3, 3, 3})},
                   {randomTensor(rng, {1, 3, 20, 23}), randomTensor(rng, {8, 3, 7, 7}),
                    randomTensor(rng, {8})},
                   {}});
    out.push_back(
        {"3x3 stride 2 batch 2, N = 20",
         {strides2, pads1},
         {randomTensor(rng, {2, 5, 7, 9}), randomTensor(rng, {7, 5, 3, 3}), randomTensor(rng, {7})},
         {}});
    out.push_back({"3x3 stride 2, N = 2",
                   {strides2},
                   {randomTensor(rng, {1, 3, 4, 6}), randomTensor(rng, {5, 3, 3, 3})},
                   {}});
    out.push_back({"1x1 stride 2 batch 2, N = 30",
                   {strides2},
                   {randomTensor(rng, {2, 6, 9, 11}), randomTensor(rng, {10, 6, 1, 1}),
                    randomTensor(rng, {10})},
                   {}});
    out.push_back({"1x1 stride 2 pads 1, N = 20",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 4, 6, 7}), randomTensor(rng, {5, 4, 1, 1})},
                   {}});
    out.push_back({"1x1 asym pads, stride 1, N = 35",
                   {intsAttribute("pads", {1, 0, 0, 2})},
                   {randomTensor(rng, {1, 3, 4, 5}), randomTensor(rng, {4, 3, 1, 1})},
                   {}});
    out.push_back({"5x5 stride 3 dilation (1, 2) asym pads, N = 25",
                   {intsAttribute("strides", {3, 3}), intsAttribute("dilations", {1, 2}),
                    intsAttribute("pads", {2, 1, 2, 3})},
                   {randomTensor(rng, {1, 2, 13, 17}), randomTensor(rng, {3, 2, 5, 5}),
                    randomTensor(rng, {3})},
                   {}});
    // Phases of 6 columns at stride 7: the last phase reaches past the 40 padded columns.
    out.push_back({"3x3 strides (2, 7) dilation (1, 2), N = 24",
                   {intsAttribute("strides", {2, 7}), intsAttribute("dilations", {1, 2})},
                   {randomTensor(rng, {1, 2, 9, 41}), randomTensor(rng, {3, 2, 3, 3})},
                   {}});
    out.push_back({"3x3 stride 2 depth 288, N = 49",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 32, 14, 14}),
                    randomTensor(rng, {7, 32, 3, 3}, -0.2F, 0.2F), randomTensor(rng, {7})},
                   {}});
    out.push_back({"3x3 stride 2, N = 306 (above the GEMM's row-split threshold)",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 3, 33, 35}), randomTensor(rng, {5, 3, 3, 3}),
                    randomTensor(rng, {5})},
                   {}});
    out.push_back({"1-D stride 2, N = 3",
                   {intsAttribute("strides", {2})},
                   {randomTensor(rng, {1, 3, 7}), randomTensor(rng, {4, 3, 3})},
                   {}});
    return out;
}

std::vector<OpSample> samples(std::mt19937& rng) {
    std::vector<OpSample> out = {
        {"3x3 pad 1",
         {intsAttribute("pads", {1, 1, 1, 1})},
         {randomTensor(rng, {1, 2, 5, 5}), randomTensor(rng, {3, 2, 3, 3}), randomTensor(rng, {3})},
         {}},
        {"stride 2 dilation 2 asym pads",
         {intsAttribute("strides", {2, 2}), intsAttribute("dilations", {2, 1}),
          intsAttribute("pads", {1, 0, 2, 1})},
         {randomTensor(rng, {2, 2, 7, 6}), randomTensor(rng, {4, 2, 2, 3})},
         {}},
        {"groups 2 same_upper",
         {intAttribute("group", 2), stringAttribute("auto_pad", "SAME_UPPER"),
          intsAttribute("strides", {2, 2})},
         {randomTensor(rng, {1, 4, 5, 5}), randomTensor(rng, {6, 2, 3, 3}), randomTensor(rng, {6})},
         {}},
        {"pointwise",
         {},
         {randomTensor(rng, {1, 4, 3, 3}), randomTensor(rng, {5, 4, 1, 1}), randomTensor(rng, {5})},
         {}},
        {"1-D",
         {intsAttribute("pads", {1, 1})},
         {randomTensor(rng, {2, 2, 7}), randomTensor(rng, {3, 2, 3})},
         {}},
        // Depth 576 in three blocks of 192, 784 columns in blocks of 400: a B block over 256 KiB
        // takes the GEMM's strip-by-strip order, and later depth blocks accumulate into C.
        {"deep GEMM",
         {intsAttribute("pads", {1, 1, 1, 1})},
         {randomTensor(rng, {1, 64, 28, 28}), randomTensor(rng, {8, 64, 3, 3}, -0.1F, 0.1F),
          randomTensor(rng, {8})},
         {}},
    };
    for (OpSample& sample : depthwiseSamples(rng)) {
        out.push_back(std::move(sample));
    }
    for (OpSample& sample : winogradSamples(rng)) {
        out.push_back(std::move(sample));
    }
    for (OpSample& sample : stridedSamples(rng)) {
        out.push_back(std::move(sample));
    }
    out.push_back(fusedSample(rng, "fused residual + clip, 3x3",
                              {intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {1, 3, 6, 10}), randomTensor(rng, {4, 3, 3, 3}),
                               randomTensor(rng, {4})}));
    out.push_back(fusedSample(rng, "fused residual + clip, pointwise, no bias", {},
                              {randomTensor(rng, {2, 5, 3, 7}), randomTensor(rng, {6, 5, 1, 1})}));
    out.push_back(fusedSample(rng, "fused residual + clip, depthwise stride 1 in place, batch 2",
                              {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {2, 2, 17, 11}), randomTensor(rng, {2, 1, 3, 3}),
                               randomTensor(rng, {2})}));
    out.push_back(fusedSample(rng, "fused residual + clip, pointwise batch 2, N = 49", {},
                              {randomTensor(rng, {2, 8, 7, 7}), randomTensor(rng, {9, 8, 1, 1}),
                               randomTensor(rng, {9})}));
    out.push_back(fusedSample(rng, "fused residual + clip, pointwise, N = 289", {},
                              {randomTensor(rng, {1, 6, 17, 17}), randomTensor(rng, {7, 6, 1, 1}),
                               randomTensor(rng, {7})}));
    out.push_back(
        fusedSample(rng, "fused residual + clip, 3x3 stride 2 batch 2, N = 18",
                    {intsAttribute("strides", {2, 2}), intsAttribute("pads", {1, 1, 1, 1})},
                    {randomTensor(rng, {2, 3, 5, 11}), randomTensor(rng, {4, 3, 3, 3}),
                     randomTensor(rng, {4})}));
    out.push_back(fusedSample(rng, "fused residual + clip, depthwise stride 2",
                              {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1}),
                               intsAttribute("strides", {2, 2})},
                              {randomTensor(rng, {1, 3, 9, 41}), randomTensor(rng, {3, 1, 3, 3}),
                               randomTensor(rng, {3})}));
    return out;
}

const OpDef kConv{.opType = "Conv",
                  .domain = "",
                  .sinceVersion = 1,
                  .doc = "N-d convolution with groups, strides, dilations, pads and auto_pad",
                  .minInputs = 2,
                  .maxInputs = 3,
                  .forward = forward,
                  .reference = reference,
                  .vjp = vjp,
                  .samples = samples,
                  .perSampleWeightGrads = true};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(conv, kConv)
