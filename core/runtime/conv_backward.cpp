// Backward kernels of Conv (the VJP in ops/conv.cpp calls them): dx by the direct depthwise
// kernel, Winograd or a GEMM with col2im; dw by a GEMM per group (summed or per image); db.
#include "core/runtime/conv_backward.h"

#include "core/runtime/conv_kernels.h"
#include "core/runtime/im2col.h"
#include "core/runtime/op_util.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"
#include "core/runtime/sum_of_squares.h"
#include "core/runtime/winograd.h"

#include <Eigen/Core>

#include <algorithm>
#include <cstring>
#include <limits>

namespace qs::runtime {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstRowMap = Eigen::Map<const RowMatrix>;

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
ScratchFloats& columnScratch() {
    thread_local ScratchFloats col;
    return col;
}

/// dx of a GEMM-based convolution, image by image and group by group: the packed GEMM (AVX-512
/// where the processor has it, threads splitting the pixels or, when few, the rows) multiplies
/// W^T, packed by packGemmInputGradWeights, with dy read in place as its B matrix (dy's group is
/// the im2col matrix of a pointwise convolution over it); grouped convolutions split the
/// (image, group) pairs over the threads instead. Pointwise convolutions write dx
/// directly (every element once); the others write columns that col2im adds into dx's planes,
/// each cleared first, the threads splitting the channels. dx need not be initialised.
void gemmInputGrad(const Conv2d& p, const float* dy, float* dx, const float* packed) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t taps = p.kh * p.kw;
    const int64_t panel = packedWeightsSize(rows, p.mg());
    // dy's group as a pointwise convolution's input: its im2col matrix is dy itself.
    Conv2d b = p;
    b.n = 1;
    b.c = p.mg();
    b.group = 1;
    b.h = p.oh;
    b.w = p.ow;
    b.kh = b.kw = b.sh = b.sw = b.dh = b.dw = 1;
    b.pt = b.pl = 0;
    const auto imageGroup = [&](int64_t n, int64_t grp) {
        const float* dyg = dy + (n * p.m + grp * p.mg()) * pixels;
        const float* weights = packed + grp * panel;
        // W^T dy into `c` (ldc = pixels): dy's rows are the strips' rows, read in place as the
        // forward reads a pointwise convolution's x (packedGemmReadsBInPlace).
        const auto product = [&](float* c) {
            if (packedGemmReadsBInPlace(rows, pixels, pixels)) {
                packedGemmRowMajorB(rows, pixels, p.mg(), weights, dyg, pixels,
                                    GemmOutput{c, pixels}, ConvEpilogue{});
                return;
            }
            ScratchFloats unused; // a pointwise source copies nothing
            const Im2colSource source(b, dyg, unused);
            const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
                source.packStrips(j0, j0 + count, strips);
            };
            packedGemm(rows, pixels, p.mg(), weights, pack, GemmOutput{c, pixels}, ConvEpilogue{});
        };
        float* dxg = dx + (n * p.c + grp * p.cg()) * p.h * p.w;
        if (p.isPointwise()) {
            product(dxg);
            return;
        }
        float* col = columnScratch().get(static_cast<size_t>(rows * pixels));
        product(col);
        parallelFor(p.cg(), 1, [&](int64_t c0, int64_t c1) {
            Conv2d q = p;
            q.c = c1 - c0;
            q.group = 1;
            // col2im adds: the chunk's planes start at zero, cleared here while in cache.
            std::fill(dxg + c0 * p.h * p.w, dxg + c1 * p.h * p.w, 0.0F);
            col2im(q, col + c0 * taps * pixels, dxg + c0 * p.h * p.w);
        });
    };
    if (p.group > 1 && p.n * p.group >= numThreads()) {
        // Grouped: each group's GEMM is small, so the (image, group) pairs go to the threads
        // and the GEMMs and col2im inside run on them.
        parallelFor(p.n * p.group, 1, [&](int64_t begin, int64_t end) {
            for (int64_t task = begin; task < end; ++task) {
                imageGroup(task / p.group, task % p.group);
            }
        });
        return;
    }
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t grp = 0; grp < p.group; ++grp) {
            imageGroup(n, grp);
        }
    }
}

/// The im2col matrix of one group of one image into `col`, the threads splitting the channels.
const float* parallelIm2col(const Conv2d& p, const float* xg, ScratchFloats& scratch) {
    const int64_t pixels = p.outPixels();
    const int64_t taps = p.kh * p.kw;
    float* col = scratch.get(static_cast<size_t>(p.colRows() * pixels));
    parallelFor(p.cg(), 1, [&](int64_t c0, int64_t c1) {
        Conv2d q = p;
        q.c = c1 - c0;
        q.group = 1;
        im2col(q, xg + c0 * p.h * p.w, 0, pixels, col + c0 * taps * pixels);
    });
    return col;
}

/// A pointwise convolution's im2col matrix is the image itself.
bool columnsAreTheImage(const Conv2d& p) {
    return p.isPointwise();
}

/// Group `grp` of image `n`: its first input plane.
const float* groupInput(const Conv2d& p, const float* x, int64_t n, int64_t grp) {
    return x + (n * p.c + grp * p.cg()) * p.h * p.w;
}

/// out[m0 .. m1) = dy[n] im2col(x[n])^T (+= with `accumulate`) restricted to group `grp`'s
/// filters, `col` being the group's im2col matrix.
void groupProduct(const Conv2d& p, const float* dy, int64_t n, int64_t grp, const float* col,
                  float* out, int64_t m0, int64_t m1, bool accumulate) {
    const int64_t pixels = p.outPixels();
    const int64_t rows = p.colRows();
    const int64_t lo = std::max(m0, grp * p.mg());
    const int64_t hi = std::min(m1, (grp + 1) * p.mg());
    if (lo < hi) {
        gemmABt(hi - lo, rows, pixels, dy + (n * p.m + lo) * pixels, pixels, col, pixels,
                out + lo * rows, rows, accumulate);
    }
}

/// Image n's dw into `out` (added to it with `accumulate`) when the images are fewer than the
/// threads: each group's columns built once (channels split), the GEMM on every thread.
void sharedColumnsWeightGrad(const Conv2d& p, const float* x, const float* dy, int64_t n,
                             float* out, bool accumulate) {
    ScratchFloats& col = columnScratch();
    for (int64_t grp = 0; grp < p.group; ++grp) {
        const float* xg = groupInput(p, x, n, grp);
        const float* columns = columnsAreTheImage(p) ? xg : parallelIm2col(p, xg, col);
        groupProduct(p, dy, n, grp, columns, out, grp * p.mg(), (grp + 1) * p.mg(), accumulate);
    }
}

void weightGradSharedColumns(const Conv2d& p, const float* x, const float* dy, float* dw,
                             bool perSample) {
    for (int64_t n = 0; n < p.n; ++n) {
        sharedColumnsWeightGrad(p, x, dy, n, perSample ? dw + n * p.m * p.colRows() : dw,
                                !perSample && n > 0);
    }
}

/// A scratch dw of one image per thread, reused: weights-mode sweeps reduce one per image and
/// Conv (a fresh one took page faults each time).
float* imageWeightGradScratch(const Conv2d& p) {
    thread_local ScratchFloats dw;
    return dw.get(static_cast<size_t>(p.m * p.colRows()));
}

/// Image n's dw into `out` (added to it with `accumulate`), on the calling thread.
void imageWeightGrad(const Conv2d& p, const float* x, const float* dy, int64_t n, float* out,
                     bool accumulate) {
    ScratchFloats& scratch = columnScratch();
    for (int64_t grp = 0; grp < p.group; ++grp) {
        const float* xg = groupInput(p, x, n, grp);
        const float* columns = xg;
        if (!columnsAreTheImage(p)) {
            float* col = scratch.get(static_cast<size_t>(p.colRows() * p.outPixels()));
            im2col(p, xg, 0, p.outPixels(), col);
            columns = col;
        }
        groupProduct(p, dy, n, grp, columns, out, 0, p.m, accumulate);
    }
}

} // namespace

/// Writes dw of a GEMM-based convolution, dw = sum over images of dy im2col(x)^T per group, or
/// per image (dw [N, M, ...], `perSample`); each GEMM writes its part, the first of a sum writing
/// where the next ones add. With at least as many images as threads, threads split the images
/// (partial sums added at the end); with fewer, each image's columns are built once and the
/// packed GEMM runs on every thread (per-sample Hessian scores run at batch 1).
void gemmConvWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw,
                        bool perSample) {
    if (p.n == 0) {
        std::fill_n(dw, perSample ? 0 : p.m * p.colRows(), 0.0F);
        return;
    }
    if (p.n < numThreads()) {
        weightGradSharedColumns(p, x, dy, dw, perSample);
        return;
    }
    const int64_t size = p.m * p.colRows();
    if (perSample || numThreads() == 1) {
        parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
            for (int64_t n = begin; n < end; ++n) {
                imageWeightGrad(p, x, dy, n, perSample ? dw + n * size : dw, !perSample && n > 0);
            }
        });
        return;
    }
    const int64_t parts = std::min<int64_t>(numThreads(), p.n);
    std::vector<std::vector<float>> partial(static_cast<size_t>(parts - 1),
                                            std::vector<float>(static_cast<size_t>(size)));
    parallelFor(parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t part = begin; part < end; ++part) {
            float* out = part == 0 ? dw : partial[static_cast<size_t>(part - 1)].data();
            for (int64_t n = part; n < p.n; n += parts) {
                imageWeightGrad(p, x, dy, n, out, n != part);
            }
        }
    });
    for (const std::vector<float>& sum : partial) {
        for (int64_t i = 0; i < size; ++i) {
            dw[i] += sum[static_cast<size_t>(i)];
        }
    }
}

void rowSumsOfSquares(const float* dw, int64_t rows, int64_t depth, double* out) {
    parallelFor(rows, 16, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            out[r] = sumOfSquares(dw + r * depth, depth);
        }
    });
}

void gemmConvWeightGradRowSquares(const Conv2d& p, const float* x, const float* dy,
                                  double* squares) {
    if (p.n < numThreads()) {
        float* dw = imageWeightGradScratch(p);
        for (int64_t n = 0; n < p.n; ++n) {
            sharedColumnsWeightGrad(p, x, dy, n, dw, false);
            rowSumsOfSquares(dw, p.m, p.colRows(), squares + n * p.m);
        }
        return;
    }
    parallelFor(p.n, 1, [&](int64_t begin, int64_t end) {
        float* dw = imageWeightGradScratch(p);
        for (int64_t n = begin; n < end; ++n) {
            imageWeightGrad(p, x, dy, n, dw, false);
            rowSumsOfSquares(dw, p.m, p.colRows(), squares + n * p.m); // inline: inside a chunk
        }
    });
}

int64_t gemmInputGradWeightsSize(int64_t filters, int64_t depth, int64_t group) {
    return group * packedWeightsSize(depth, filters / group);
}

void packGemmInputGradWeights(const float* w, int64_t filters, int64_t depth, int64_t group,
                              float* packed) {
    // Panel r0 of group g's W^T holds, for each filter f, w[f, r0 .. r0 + kGemmRows - 1]: six
    // adjacent weights of one row of W, so the panels are written in one pass, on the threads.
    const int64_t mg = filters / group;
    const int64_t panels = (depth + kGemmRows - 1) / kGemmRows;
    parallelFor(group * panels, 1, [&](int64_t begin, int64_t end) {
        for (int64_t task = begin; task < end; ++task) {
            const int64_t grp = task / panels;
            const int64_t r0 = (task % panels) * kGemmRows;
            const int64_t rows = std::min(kGemmRows, depth - r0);
            const float* wg = w + grp * mg * depth;
            float* panel = packed + grp * packedWeightsSize(depth, mg) + r0 * mg;
            for (int64_t f = 0; f < mg; ++f) {
                float* dst = panel + f * kGemmRows;
                std::copy_n(wg + f * depth + r0, rows, dst);
                std::fill(dst + rows, dst + kGemmRows, 0.0F);
            }
        }
    });
}

Tensor convInputGrad(const Conv2d& p, const Shape& shape, const float* w, const float* dy,
                     const PackedInputGradWeights& packed) {
    if (p.isDepthwise()) {
        Tensor dx = allocateFloat(shape);
        if (depthwiseInputGrad(p, w, dy, dx.mutableData<float>())) {
            return dx;
        }
        dx = Tensor::zeros(graph::DataType::Float, shape);
        depthwiseConvBackward(p, nullptr, w, dy, dx.mutableData<float>(), nullptr, false);
        return dx;
    }
    if (winogradInputGradApplies(p, packed.winograd != nullptr)) {
        Tensor dx = allocateFloat(shape);
        winogradInputGrad(p, w, dy, dx.mutableData<float>(), packed.winograd,
                          packed.winograd != nullptr ? packed.winogradTile
                                                     : WinogradTile::automatic);
        return dx;
    }
    const float* gemmWeights = packed.gemm;
    thread_local ScratchFloats scratch;
    if (gemmWeights == nullptr) {
        float* weights =
            scratch.get(static_cast<size_t>(gemmInputGradWeightsSize(p.m, p.colRows(), p.group)));
        packGemmInputGradWeights(w, p.m, p.colRows(), p.group, weights);
        gemmWeights = weights;
    }
    Tensor dx = allocateFloat(shape);
    gemmInputGrad(p, dy, dx.mutableData<float>(), gemmWeights);
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
