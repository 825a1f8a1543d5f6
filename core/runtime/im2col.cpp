#include "core/runtime/im2col.h"

namespace qs::runtime {

// Row (c, i, j), column (oy, ox) of the im2col matrix holds x[c, oy sh + i dh - pt, ox sw + j dw -
// pl] (zero outside). Within one output row the columns read one input row, so every function
// here walks rows of the matrix in runs that end at output-row boundaries.

namespace {

/// The input plane and offsets that im2col row `row` = (c, i, j) reads.
struct TapRow {
    int64_t channel;
    int64_t i;
    int64_t off; ///< input column of output column 0: j dw - pl

    TapRow(const Conv2d& p, int64_t row)
        : channel(row / (p.kh * p.kw))
        , i((row / p.kw) % p.kh)
        , off((row % p.kw) * p.dw - p.pl) {}

    /// Offset of the input row that output row oy reads, or -1 when it lies in the padding.
    int64_t inputRow(const Conv2d& p, int64_t oy) const {
        const int64_t iy = oy * p.sh + i * p.dh - p.pt;
        return (iy >= 0 && iy < p.h) ? (channel * p.h + iy) * p.w : -1;
    }
};

/// Copies output columns [ox, ox + count) of one im2col row (input row `src`, column offset
/// `off`; nullptr: the row lies in the padding) to `dst`: zeros, the in-image span, zeros.
void copyRun(const Conv2d& p, const float* src, int64_t off, int64_t ox, int64_t count,
             float* dst) {
    if (src == nullptr) {
        std::fill(dst, dst + count, 0.0F);
        return;
    }
    // Output column ox + t reads input column start + t sw; [t0, t1) lies inside the image.
    const int64_t start = ox * p.sw + off;
    // Ceiling division by the stride, without a divide for stride 1 (this runs per strip).
    const auto steps = [&p](int64_t distance) {
        return p.sw == 1 ? distance : (distance + p.sw - 1) / p.sw;
    };
    const int64_t t0 = std::min(count, start >= 0 ? 0 : steps(-start));
    const int64_t t1 = std::max(t0, std::min(count, start >= p.w ? 0 : steps(p.w - start)));
    if (p.sw == 1 && t0 == 0 && t1 == kStripWidth) {
        // The common case, a whole strip inside the image: a fixed-length copy.
        std::copy_n(src + start, kStripWidth, dst);
        return;
    }
    for (int64_t t = 0; t < t0; ++t) {
        dst[t] = 0.0F;
    }
    // Plain loops, not std::copy/fill: runs are short, and a library call per run costs more
    // than the copy.
    if (p.sw == 1) {
        const float* in = src + start;
        for (int64_t t = t0; t < t1; ++t) {
            dst[t] = in[t];
        }
    } else {
        for (int64_t t = t0; t < t1; ++t) {
            dst[t] = src[start + t * p.sw];
        }
    }
    for (int64_t t = t1; t < count; ++t) {
        dst[t] = 0.0F;
    }
}

/// Calls fn(q, ox, count, src) for runs [q, q + count) of columns [p0, p1) of im2col row `tap`,
/// each within one output row (starting at output column ox) and no longer than `maxRun`
/// (strip boundaries at multiples of maxRun counted from p0). Walks positions incrementally:
/// runs are short, and a division per run would cost as much as the copy.
template <typename Fn>
void forEachRun(const Conv2d& p, const float* x, const TapRow& tap, int64_t p0, int64_t p1,
                int64_t maxRun, Fn fn) {
    int64_t oy = p0 / p.ow;
    int64_t ox = p0 % p.ow;
    int64_t inStrip = 0;
    int64_t in = tap.inputRow(p, oy);
    for (int64_t q = p0; q < p1;) {
        const int64_t count = std::min({p.ow - ox, maxRun - inStrip, p1 - q});
        fn(q, ox, count, in >= 0 ? x + in : nullptr);
        q += count;
        ox += count;
        inStrip += count;
        if (inStrip == maxRun) {
            inStrip = 0;
        }
        if (ox == p.ow) {
            ox = 0;
            in = tap.inputRow(p, ++oy);
        }
    }
}

} // namespace

void im2col(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* col) {
    const int64_t width = p1 - p0;
    for (int64_t row = 0; row < p.colRows(); ++row) {
        const TapRow tap(p, row);
        float* dst = col + row * width;
        forEachRun(p, x, tap, p0, p1, width,
                   [&](int64_t q, int64_t ox, int64_t count, const float* src) {
                       copyRun(p, src, tap.off, ox, count, dst + (q - p0));
                   });
    }
}

void im2colStrips(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* strips) {
    const int64_t rows = p.colRows();
    const int64_t width = p1 - p0;
    if (width % kStripWidth != 0) {
        // The last strip's columns past p1 stay zero.
        float* last = strips + (width / kStripWidth) * rows * kStripWidth;
        std::fill(last, last + rows * kStripWidth, 0.0F);
    }
    for (int64_t row = 0; row < rows; ++row) {
        const TapRow tap(p, row);
        forEachRun(p, x, tap, p0, p1, kStripWidth,
                   [&](int64_t q, int64_t ox, int64_t count, const float* src) {
                       const int64_t column = q - p0;
                       float* dst = strips + ((column / kStripWidth) * rows + row) * kStripWidth +
                                    column % kStripWidth;
                       copyRun(p, src, tap.off, ox, count, dst);
                   });
    }
}

void col2im(const Conv2d& p, const float* col, float* dx) {
    const int64_t width = p.outPixels();
    for (int64_t row = 0; row < p.colRows(); ++row) {
        const TapRow tap(p, row);
        const float* src = col + row * width;
        for (int64_t oy = 0; oy < p.oh; ++oy) {
            const int64_t in = tap.inputRow(p, oy);
            if (in < 0) {
                continue;
            }
            float* dst = dx + in;
            for (int64_t ox = 0; ox < p.ow; ++ox) {
                const int64_t ix = ox * p.sw + tap.off;
                if (ix >= 0 && ix < p.w) {
                    dst[ix] += src[oy * p.ow + ox];
                }
            }
        }
    }
}

} // namespace qs::runtime
