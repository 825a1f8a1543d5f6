// MaxPool (ONNX since 1; dilations, ceil_mode since 10; int8/uint8 since 12): y = max over each
// window; padding never wins. The optional Indices output is not produced. VJP: dy goes to the
// first maximum of its window.

#include "core/runtime/max_pool_wide.h"
#include "core/runtime/parallel.h"
#include "core/runtime/pooling.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#ifdef __AVX2__
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

/// 2-D, no dilation and no negative pad (which the padded rows of forward2d cannot hold).
bool hasClippedWindows(const PoolShape& s) {
    const ConvGeometry& g = s.geo;
    return g.rank() == 2 && g.dilations[0] == 1 && g.dilations[1] == 1 &&
           std::all_of(g.padsBegin.begin(), g.padsBegin.end(), [](int64_t p) { return p >= 0; }) &&
           std::all_of(g.padsEnd.begin(), g.padsEnd.end(), [](int64_t p) { return p >= 0; });
}

constexpr float kLowest = -std::numeric_limits<float>::infinity();

/// cols[ix] = the maximum of plane rows [y0, y1) at column ix (-inf for no rows), vectorised.
void maxOverRows(const float* plane, int64_t w, int64_t y0, int64_t y1, float* cols) {
    // Seeded with -inf and folded by std::max(acc, x), which keeps acc for a NaN x: a NaN is
    // ignored wherever it sits, as by the reference's `x > best`. Windows of up to three rows
    // (most pools) fold in one pass, each column in a register; taller ones row by row.
    const float* a = plane + y0 * w;
    const float* b = a + w;
    const float* c = b + w;
    switch (y1 - y0) {
    case 1:
        for (int64_t ix = 0; ix < w; ++ix) {
            cols[ix] = std::max(kLowest, a[ix]);
        }
        return;
    case 2:
        for (int64_t ix = 0; ix < w; ++ix) {
            cols[ix] = std::max(std::max(kLowest, a[ix]), b[ix]);
        }
        return;
    case 3:
        for (int64_t ix = 0; ix < w; ++ix) {
            cols[ix] = std::max(std::max(std::max(kLowest, a[ix]), b[ix]), c[ix]);
        }
        return;
    default:
        break;
    }
    std::fill(cols, cols + w, kLowest);
    for (int64_t iy = y0; iy < y1; ++iy) {
        const float* src = plane + iy * w;
        for (int64_t ix = 0; ix < w; ++ix) {
            cols[ix] = std::max(cols[ix], src[ix]);
        }
    }
}

/// out[ox] = the maximum of row[ox * stride, ox * stride + kernel), kernel position by position
/// over the whole row (vectorised; strides 1 and 2 are template constants, so a stride-2 pool
/// loads every second element instead of taking the maximum at every window start and keeping
/// every second one). Stride 0: `runtimeStride`. Row entries are never NaN (maxOverRows drops
/// them), so the order of the maxima does not matter.
template <int64_t Stride>
void maxAlongRow(const float* row, int64_t kernel, int64_t ow, float* out,
                 int64_t runtimeStride = Stride) {
    const int64_t stride = Stride != 0 ? Stride : runtimeStride;
    for (int64_t ox = 0; ox < ow; ++ox) {
        out[ox] = row[ox * stride];
    }
    for (int64_t kx = 1; kx < kernel; ++kx) {
        const float* shifted = row + kx;
        for (int64_t ox = 0; ox < ow; ++ox) {
            out[ox] = std::max(out[ox], shifted[ox * stride]);
        }
    }
}

/// maxAlongRow<2> for windows of 3 (ResNet's and SqueezeNet's pools): out[ox] = the maximum of
/// row[2 ox], row[2 ox + 1] and row[2 ox + 2]. GCC does not vectorise the strided loads; here the
/// even, odd and next-even entries of 8 outputs are taken by in-lane shuffles that leave all
/// three in one lane order, so their maximum needs a single cross-lane permute back. Reads up to
/// row[2 ow + 1].
void maxAlongRowStride2Kernel3(const float* row, int64_t ow, float* out) {
    int64_t ox = 0;
#ifdef __AVX2__
    const auto block = [&](int64_t at) {
        const float* r = row + 2 * at;
        const __m256 a = _mm256_loadu_ps(r);
        const __m256 b = _mm256_loadu_ps(r + 8);
        const __m256 c = _mm256_loadu_ps(r + 2);
        const __m256 d = _mm256_loadu_ps(r + 10);
        const __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        const __m256 odd = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        const __m256 next = _mm256_shuffle_ps(c, d, _MM_SHUFFLE(2, 0, 2, 0));
        const __m256 m = _mm256_max_ps(_mm256_max_ps(even, odd), next);
        _mm256_storeu_ps(out + at, _mm256_castpd_ps(_mm256_permute4x64_pd(
                                       _mm256_castps_pd(m), _MM_SHUFFLE(3, 1, 2, 0))));
    };
    if (ow >= 8) {
        for (; ox + 8 <= ow; ox += 8) {
            block(ox);
        }
        if (ox < ow) {
            // The last block overlaps the one before: it rewrites the same values.
            block(ow - 8);
            ox = ow;
        }
    }
#endif
    for (; ox < ow; ++ox) {
        out[ox] = std::max(std::max(row[2 * ox], row[2 * ox + 1]), row[2 * ox + 2]);
    }
}

/// A 2-D window's maximum is the maximum over its columns of each column's maximum over the
/// window's rows: per output row, the rows of the window are reduced into one padded row (whole
/// rows, vectorised), then along that row (vectorised again). A 3x3 window's 9 scalar reads per
/// output become 4 vector maxima per input column.
void forward2d(const PoolShape& s, const float* x, float* y) {
    const ConvGeometry& g = s.geo;
    const int64_t h = g.input[0];
    const int64_t w = g.input[1];
    const int64_t ow = g.output[1];
    const int64_t left = g.padsBegin[1];
    // Entries outside [left, left + w) are padding (ceil_mode windows may run past the end pad).
    const int64_t rowLength = std::max(left + w, (ow - 1) * g.strides[1] + g.kernel[1]);
    const int64_t stride = g.strides[1];
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        // One entry past the windows: maxAlongRowStride2Kernel3 reads it.
        std::vector<float> row(static_cast<size_t>(rowLength + 1), kLowest);
        for (int64_t plane = begin; plane < end; ++plane) {
            for (int64_t oy = 0; oy < g.output[0]; ++oy) {
                const int64_t top = oy * g.strides[0] - g.padsBegin[0];
                maxOverRows(x + plane * s.inSize, w, std::max<int64_t>(0, top),
                            std::min(h, top + g.kernel[0]), row.data() + left);
                float* out = y + plane * s.outSize + oy * ow;
                if (stride == 1) {
                    maxAlongRow<1>(row.data(), g.kernel[1], ow, out);
                } else if (stride == 2 && g.kernel[1] == 3) {
                    maxAlongRowStride2Kernel3(row.data(), ow, out);
                } else if (stride == 2) {
                    maxAlongRow<2>(row.data(), g.kernel[1], ow, out);
                } else {
                    maxAlongRow<0>(row.data(), g.kernel[1], ow, out, stride);
                }
            }
        }
    });
}

/// hit[ox] for ox in [lo, hi) (windows inside the row): the plane offset of the first element of
/// window ox, rows [y0, y1) in order, equal to maxima[ox], if none was set (-1) before. Stride is
/// a template constant where it can be (1, 2: vectorised strided loads), else `runtimeStride`.
template <int64_t Stride>
void firstHitsInRow(const float* plane, int64_t w, int64_t y0, int64_t y1, int64_t kw, int64_t left,
                    const float* maxima, int64_t lo, int64_t hi, int32_t* hit,
                    int64_t runtimeStride = Stride) {
    const int64_t stride = Stride != 0 ? Stride : runtimeStride;
    for (int64_t iy = y0; iy < y1; ++iy) {
        for (int64_t kx = 0; kx < kw; ++kx) {
            // Input column of output ox: ox * stride - left + kx.
            const int64_t first = iy * w - left + kx;
            const float* src = plane + first;
            for (int64_t ox = lo; ox < hi; ++ox) {
                // Both compares unconditional: a strided load under a mask does not vectorise.
                const bool equal = src[ox * stride] == maxima[ox];
                const bool open = hit[ox] < 0;
                hit[ox] = (equal & open) ? static_cast<int32_t>(first + ox * stride) : hit[ox];
            }
        }
    }
}

/// Where each window of one output row has its first maximum: the windows inside the row
/// [inner.first, inner.second) by firstHitsInRow, those clipped by the row's ends one by one.
class RowSearch {
public:
    explicit RowSearch(const PoolShape& s)
        : m_g(s.geo)
        , m_w(s.geo.input[1])
        , m_ow(s.geo.output[1])
        , m_stride(s.geo.strides[1])
        , m_left(s.geo.padsBegin[1])
        , m_kw(s.geo.kernel[1])
        , m_lo(std::min(m_ow, (m_left + m_stride - 1) / m_stride))
        , m_hi(std::clamp<int64_t>(
              m_w + m_left - m_kw < 0 ? 0 : (m_w + m_left - m_kw) / m_stride + 1, m_lo, m_ow)) {}

    /// hit[ox] (ow entries) for output row oy of plane xp: the plane offset of the first element
    /// of window ox equal to maxima[ox], or -1.
    void find(const float* xp, int64_t oy, const float* maxima, int32_t* hit) const {
        const int64_t top = oy * m_g.strides[0] - m_g.padsBegin[0];
        const int64_t y0 = std::max<int64_t>(0, top);
        const int64_t y1 = std::min(m_g.input[0], top + m_g.kernel[0]);
        std::fill(hit, hit + m_ow, -1);
        switch (m_stride) {
        case 1:
            firstHitsInRow<1>(xp, m_w, y0, y1, m_kw, m_left, maxima, m_lo, m_hi, hit);
            break;
        case 2:
            firstHitsInRow<2>(xp, m_w, y0, y1, m_kw, m_left, maxima, m_lo, m_hi, hit);
            break;
        default:
            firstHitsInRow<0>(xp, m_w, y0, y1, m_kw, m_left, maxima, m_lo, m_hi, hit, m_stride);
            break;
        }
        for (int64_t ox = 0; ox < m_lo; ++ox) {
            hit[ox] = clippedHit(xp, y0, y1, ox, maxima[ox]);
        }
        for (int64_t ox = m_hi; ox < m_ow; ++ox) {
            hit[ox] = clippedHit(xp, y0, y1, ox, maxima[ox]);
        }
    }

private:
    int32_t clippedHit(const float* xp, int64_t y0, int64_t y1, int64_t ox, float maximum) const {
        const int64_t x0 = std::max<int64_t>(0, ox * m_stride - m_left);
        const int64_t x1 = std::min(m_w, ox * m_stride - m_left + m_kw);
        for (int64_t iy = y0; iy < y1; ++iy) {
            for (int64_t ix = x0; ix < x1; ++ix) {
                if (xp[iy * m_w + ix] == maximum) {
                    return static_cast<int32_t>(iy * m_w + ix);
                }
            }
        }
        return -1;
    }

    const ConvGeometry& m_g;
    int64_t m_w, m_ow, m_stride, m_left, m_kw;
    int64_t m_lo, m_hi; ///< outputs whose windows lie inside the row
};

/// dx of forward2d: each dy goes to the first maximum of its window (none for a window of -inf).
/// The forward's output says what each maximum is, so finding where it sits needs no running
/// maximum (a chain of dependent compares, one window at a time): per output row, each kernel
/// position is compared with the maxima of the whole row at once (vectorised), the first hit of
/// each window kept, then each dy added at its hit.
void backward2d(const PoolShape& s, const float* x, const float* y, const float* dy, float* dx) {
    const RowSearch search(s);
    const int64_t ow = s.geo.output[1];
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        std::vector<int32_t> hits(static_cast<size_t>(ow));
        for (int64_t plane = begin; plane < end; ++plane) {
            float* dxp = dx + plane * s.inSize;
            // Zeroed here, plane by plane, so that the scatter finds it in cache.
            std::fill(dxp, dxp + s.inSize, 0.0F);
            for (int64_t oy = 0; oy < s.geo.output[0]; ++oy) {
                const int64_t row = plane * s.outSize + oy * ow;
                search.find(x + plane * s.inSize, oy, y + row, hits.data());
                for (int64_t ox = 0; ox < ow; ++ox) {
                    // A window of -inf (or NaN) only has no maximum to pass dy to.
                    const int32_t at = hits[static_cast<size_t>(ox)];
                    if (at >= 0 && y[row + ox] != kLowest) {
                        dxp[at] += dy[row + ox];
                    }
                }
            }
        }
    });
}

/// Where backward2d's windows have their first maxima, kept on the trace (TraceNote) for the
/// next sweeps: the search is most of the VJP, and the trace's maxima do not change between
/// sweeps, only dy does.
struct MaxPoolHits {
    /// The input and output the positions were found in, held so that their buffers cannot pass
    /// to other tensors while the positions are kept.
    Tensor x;
    Tensor y;
    std::vector<int32_t> hits; ///< per output: its maximum's plane offset, or -1 (none)
};

/// backward2d's positions of every output, for planes on the threads.
std::shared_ptr<MaxPoolHits> findHits(const PoolShape& s, const Tensor& x, const Tensor& y) {
    auto found = std::make_shared<MaxPoolHits>();
    found->x = x;
    found->y = y;
    found->hits.resize(static_cast<size_t>(s.planes * s.outSize));
    const RowSearch search(s);
    const int64_t ow = s.geo.output[1];
    const float* px = x.data<float>();
    const float* py = y.data<float>();
    int32_t* hits = found->hits.data();
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            for (int64_t oy = 0; oy < s.geo.output[0]; ++oy) {
                const int64_t row = plane * s.outSize + oy * ow;
                search.find(px + plane * s.inSize, oy, py + row, hits + row);
                for (int64_t ox = 0; ox < ow; ++ox) {
                    if (py[row + ox] == kLowest) { // a window of -inf: no maximum
                        hits[row + ox] = -1;
                    }
                }
            }
        }
    });
    return found;
}

/// dx of backward2d from kept positions: each plane cleared, then each dy added at its hit.
void scatterToHits(const PoolShape& s, const MaxPoolHits& found, const float* dy, float* dx) {
    const int32_t* hits = found.hits.data();
    parallelFor(s.planes, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
            float* dxp = dx + plane * s.inSize;
            std::fill(dxp, dxp + s.inSize, 0.0F);
            const int32_t* hp = hits + plane * s.outSize;
            const float* dyp = dy + plane * s.outSize;
            for (int64_t o = 0; o < s.outSize; ++o) {
                if (hp[o] >= 0) {
                    dxp[hp[o]] += dyp[o];
                }
            }
        }
    });
}

/// The positions kept on `note` for x and y, else found now and kept there.
std::shared_ptr<const MaxPoolHits> hitsFor(const PoolShape& s, const Tensor& x, const Tensor& y,
                                           TraceNote& note) {
    std::shared_ptr<const MaxPoolHits> kept = note.get<MaxPoolHits>();
    if (kept != nullptr && kept->x.rawData() == x.rawData() && kept->y.rawData() == y.rawData() &&
        kept->x.shape() == x.shape() && kept->y.shape() == y.shape()) {
        return kept;
    }
    std::shared_ptr<const MaxPoolHits> found = findHits(s, x, y);
    note.set<MaxPoolHits>(found);
    return found;
}

// Reference kernel: any rank, any dilation.
Result<std::vector<Tensor>> reference(const OpContext& ctx) {
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

Result<std::vector<Tensor>> forward(const OpContext& ctx) {
    const graph::DataType dtype = ctx.has(0) ? ctx.input(0).dtype() : graph::DataType::Undefined;
    if (dtype == graph::DataType::Int8 || dtype == graph::DataType::UInt8) {
        // Every 8-bit value is exact in float32 and a maximum is one of its inputs, so the float
        // kernel serves and its result casts back exactly.
        const std::vector<Tensor> widened{castTensor(ctx.input(0), graph::DataType::Float)};
        const OpContext wide{ctx.node, widened, ctx.opset, ctx.gradMask};
        QS_ASSIGN_OR_RETURN(std::vector<Tensor> out, forward(wide));
        out[0] = castTensor(out[0], dtype);
        return out;
    }
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    if (!hasClippedWindows(s) || ctx.intAttr("storage_order", 0) != 0) {
        return reference(ctx);
    }
    Tensor y = allocateFloat(s.outShape);
    if (!maxPool2dWide(s, ctx.input(0).data<float>(), y.mutableData<float>())) {
        forward2d(s, ctx.input(0).data<float>(), y.mutableData<float>());
    }
    return std::vector<Tensor>{y};
}

Result<std::vector<Tensor>> vjp(const OpContext& ctx, std::span<const Tensor> outputs,
                                std::span<const Tensor> outputGrads) {
    QS_ASSIGN_OR_RETURN(PoolShape s, poolShape(ctx));
    const float* x = ctx.input(0).data<float>();
    const float* dy = outputGrads[0].data<float>();
    // The row search needs the forward's maxima and plane offsets that fit 32 bits.
    const bool haveMaxima = !outputs.empty() && outputs[0].rawData() != nullptr &&
                            outputs[0].dtype() == graph::DataType::Float &&
                            outputs[0].shape() == s.outShape;
    if (hasClippedWindows(s) && haveMaxima && s.inSize < std::numeric_limits<int32_t>::max()) {
        Tensor dx = allocateFloat(ctx.input(0).shape());
        if (ctx.traceNote != nullptr) {
            const auto hits = hitsFor(s, ctx.input(0), outputs[0], *ctx.traceNote);
            scatterToHits(s, *hits, dy, dx.mutableData<float>());
            return std::vector<Tensor>{dx};
        }
        backward2d(s, x, outputs[0].data<float>(), dy, dx.mutableData<float>());
        return std::vector<Tensor>{dx};
    }
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
        // SqueezeNet's pools: windows past the end of odd planes, rows wide enough to vectorise.
        {"3x3 stride 2 ceil mode asym pads",
         {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
          intsAttribute("pads", {0, 1, 1, 0}), intAttribute("ceil_mode", 1)},
         {randomDistinct(rng, {1, 3, 13, 23})},
         {}},
        // Rows of 19 windows of 3 at stride 2: two blocks of 8 and an overlapping last one.
        {"3x3 stride 2 pad 1 wide rows",
         {intsAttribute("kernel_shape", {3, 3}), intsAttribute("strides", {2, 2}),
          intsAttribute("pads", {1, 1, 1, 1})},
         {randomDistinct(rng, {1, 2, 7, 37})},
         {}},
        // A stride that is no template constant, windows past both ends of the rows.
        {"5x3 stride 3 pads",
         {intsAttribute("kernel_shape", {5, 3}), intsAttribute("strides", {3, 3}),
          intsAttribute("pads", {2, 1, 2, 1})},
         {randomDistinct(rng, {1, 2, 11, 37})},
         {}},
        // Dilated windows take the any-rank loops, forward and backward.
        {"2x2 dilation 2",
         {intsAttribute("kernel_shape", {2, 2}), intsAttribute("dilations", {2, 2})},
         {randomDistinct(rng, {1, 2, 6, 7})},
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
                     .reference = reference,
                     .vjp = vjp,
                     .samples = samples};

} // namespace
} // namespace qs::runtime

QS_REGISTER_OP(max_pool, kMaxPool)
