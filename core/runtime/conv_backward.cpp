// Backward kernels of Conv (the VJP in ops/conv.cpp calls them): dx by the direct depthwise
// kernel, Winograd or a GEMM with col2im; dw by a GEMM per group (summed or per image); db.
#include "core/runtime/conv_backward.h"

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

} // namespace

namespace {
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

} // namespace

/// Adds dx (when dx is set) and dw (when dw is set; per image, [N, C, taps], with `perSample`)
/// of a depthwise convolution, plane by plane.
void depthwiseConvBackward(const Conv2d& p, const float* x, const float* w, const float* dy,
                           float* dx, float* dw, bool perSample) {
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

namespace {
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

} // namespace

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
    const float lo = e.lo;
    const float hi = e.hi;
    parallelFor(masked.numElements(), 1 << 14, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            // Unconditional loads and a non-short-circuit test: the loop vectorises.
            const float g = dy[i];
            const float v = y[i];
            out[i] = static_cast<int>(v > lo) & static_cast<int>(v < hi) ? g : 0.0F;
        }
    });
    return masked;
}

namespace {
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

/// The im2col matrix of one group of one image into `col`, the threads splitting the channels.
const float* parallelIm2col(const Conv2d& p, const float* xg, std::vector<float>& col) {
    const int64_t pixels = p.outPixels();
    const int64_t taps = p.kh * p.kw;
    col.resize(static_cast<size_t>(p.colRows() * pixels));
    parallelFor(p.cg(), 1, [&](int64_t c0, int64_t c1) {
        Conv2d q = p;
        q.c = c1 - c0;
        q.group = 1;
        im2col(q, xg + c0 * p.h * p.w, 0, pixels, col.data() + c0 * taps * pixels);
    });
    return col.data();
}

/// A pointwise convolution's im2col matrix is the image itself.
bool columnsAreTheImage(const Conv2d& p) {
    return p.isPointwise() && p.oh == p.h && p.ow == p.w;
}

/// Group `grp` of image `n`: its first input plane.
const float* groupInput(const Conv2d& p, const float* x, int64_t n, int64_t grp) {
    return x + (n * p.c + grp * p.cg()) * p.h * p.w;
}

/// out[m0 .. m1) += dy[n] im2col(x[n])^T restricted to group `grp`'s filters, `col` being the
/// group's im2col matrix.
void addGroupProduct(const Conv2d& p, const float* dy, int64_t n, int64_t grp, const float* col,
                     float* out, int64_t m0, int64_t m1) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t lo = std::max(m0, grp * p.mg());
    const int64_t hi = std::min(m1, (grp + 1) * p.mg());
    if (lo < hi) {
        const ConstRowMap dyg(dy + (n * p.m + lo) * pixels, hi - lo, pixels);
        RowMap(out + lo * rows, hi - lo, rows).noalias() +=
            dyg * ConstRowMap(col, rows, pixels).transpose();
    }
}

/// Fewer images than threads: each group's columns built once (channels split), the GEMM's
/// filters split over the threads.
void weightGradSharedColumns(const Conv2d& p, const float* x, const float* dy, float* dw,
                             bool perSample) {
    std::vector<float>& col = columnScratch();
    for (int64_t n = 0; n < p.n; ++n) {
        float* out = perSample ? dw + n * p.m * p.colRows() : dw;
        for (int64_t grp = 0; grp < p.group; ++grp) {
            const float* xg = groupInput(p, x, n, grp);
            const float* columns = columnsAreTheImage(p) ? xg : parallelIm2col(p, xg, col);
            parallelFor(p.mg(), kGemmRows, [&](int64_t m0, int64_t m1) {
                addGroupProduct(p, dy, n, grp, columns, out, grp * p.mg() + m0, grp * p.mg() + m1);
            });
        }
    }
}

/// Adds image n's dw into `out`, on the calling thread.
void addImageWeightGrad(const Conv2d& p, const float* x, const float* dy, int64_t n, float* out) {
    std::vector<float>& col = columnScratch();
    for (int64_t grp = 0; grp < p.group; ++grp) {
        const float* xg = groupInput(p, x, n, grp);
        const float* columns = xg;
        if (!columnsAreTheImage(p)) {
            col.resize(static_cast<size_t>(p.colRows() * p.outPixels()));
            im2col(p, xg, 0, p.outPixels(), col.data());
            columns = col.data();
        }
        addGroupProduct(p, dy, n, grp, columns, out, 0, p.m);
    }
}

} // namespace

/// Adds dw of a GEMM-based convolution, dw = sum over images of dy im2col(x)^T per group, or
/// writes it per image (dw [N, M, ...], `perSample`). With at least as many images as threads,
/// threads split the images (partial sums added at the end); with fewer, each image's columns are
/// built once and the threads split the filters (per-sample Hessian scores run at batch 1).
void gemmConvWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw,
                        bool perSample) {
    if (p.n < numThreads()) {
        weightGradSharedColumns(p, x, dy, dw, perSample);
        return;
    }
    const int64_t size = p.m * p.colRows();
    if (perSample || numThreads() == 1) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n) {
                addImageWeightGrad(p, x, dy, n, perSample ? dw + n * size : dw);
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
                addImageWeightGrad(p, x, dy, n, out);
            }
        }
    });
    for (const std::vector<float>& sum : partial) {
        for (int64_t i = 0; i < size; ++i) {
            dw[i] += sum[static_cast<size_t>(i)];
        }
    }
}

Tensor convInputGrad(const Conv2d& p, const Shape& shape, const float* w, const float* dy,
                     const float* winogradWeights) {
    if (p.isDepthwise()) {
        Tensor dx = allocateFloat(shape);
        if (depthwiseInputGrad(p, w, dy, dx.mutableData<float>())) {
            return dx;
        }
        dx = Tensor::zeros(graph::DataType::Float, shape);
        depthwiseConvBackward(p, nullptr, w, dy, dx.mutableData<float>(), nullptr, false);
        return dx;
    }
    if (winogradInputGradApplies(p, winogradWeights != nullptr)) {
        Tensor dx = allocateFloat(shape);
        winogradInputGrad(p, w, dy, dx.mutableData<float>(), winogradWeights);
        return dx;
    }
    Tensor dx =
        p.isPointwise() ? allocateFloat(shape) : Tensor::zeros(graph::DataType::Float, shape);
    gemmInputGrad(p, w, dy, dx.mutableData<float>());
    return dx;
}

/// db[m] = sum over images and pixels of dy[n, m, :].
Tensor convBiasGrad(const Conv2d& p, const Shape& biasShape, const float* dy) {
    Tensor db = Tensor::zeros(graph::DataType::Float, biasShape);
    float* pdb = db.mutableData<float>();
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t m = 0; m < p.m; ++m) {
            pdb[m] += ConstRowMap(dy + (n * p.m + m) * p.outPixels(), 1, p.outPixels()).sum();
        }
    }
    return db;
}

} // namespace qs::runtime
