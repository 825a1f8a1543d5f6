#include "core/runtime/im2col.h"

namespace qs::runtime {

// Row (c, i, j), column (oh, ow) of the im2col matrix holds x[c, oh * sh + i * dh - pt, ow * sw + j
// * dw - pl] (zero outside).
void im2col(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* col) {
    const int64_t width = p1 - p0;
    for (int64_t c = 0; c < p.cg(); ++c) {
        const float* xc = x + c * p.h * p.w;
        for (int64_t i = 0; i < p.kh; ++i) {
            for (int64_t j = 0; j < p.kw; ++j) {
                float* row = col + ((c * p.kh + i) * p.kw + j) * width;
                // Walk output rows; within one, the valid columns are a contiguous range.
                int64_t q = p0;
                while (q < p1) {
                    const int64_t oy = q / p.ow;
                    const int64_t oxBegin = q % p.ow;
                    const int64_t oxEnd = std::min(p.ow, oxBegin + (p1 - q));
                    float* dst = row + (q - p0);
                    const int64_t iy = oy * p.sh + i * p.dh - p.pt;
                    if (iy < 0 || iy >= p.h) {
                        std::fill(dst, dst + (oxEnd - oxBegin), 0.0F);
                    } else {
                        const float* src = xc + iy * p.w;
                        const int64_t off = j * p.dw - p.pl;
                        for (int64_t ox = oxBegin; ox < oxEnd; ++ox) {
                            const int64_t ix = ox * p.sw + off;
                            dst[ox - oxBegin] = (ix >= 0 && ix < p.w) ? src[ix] : 0.0F;
                        }
                    }
                    q += oxEnd - oxBegin;
                }
            }
        }
    }
}

namespace {

/// Copies output columns [ox, ox + count) of im2col row `row` (input row `src`, column offset
/// `off`; nullptr: the row lies in the padding) to `dst`.
void copyRun(const Conv2d& p, const float* src, int64_t off, int64_t ox, int64_t count,
             float* dst) {
    if (src == nullptr) {
        std::fill(dst, dst + count, 0.0F);
        return;
    }
    for (int64_t t = 0; t < count; ++t) {
        const int64_t ix = (ox + t) * p.sw + off;
        dst[t] = (ix >= 0 && ix < p.w) ? src[ix] : 0.0F;
    }
}

} // namespace

void im2colStrips(const Conv2d& p, const float* x, int64_t p0, int64_t p1, float* strips) {
    const int64_t rows = p.colRows();
    const int64_t width = p1 - p0;
    if (width % kStripWidth != 0) {
        // The last strip's columns past p1 stay zero.
        float* last = strips + (width / kStripWidth) * rows * kStripWidth;
        std::fill(last, last + rows * kStripWidth, 0.0F);
    }
    for (int64_t row = 0; row < rows; ++row) {
        const int64_t c = row / (p.kh * p.kw);
        const int64_t i = (row / p.kw) % p.kh;
        const int64_t off = (row % p.kw) * p.dw - p.pl;
        int64_t q = p0;
        while (q < p1) {
            const int64_t oy = q / p.ow;
            const int64_t ox = q % p.ow;
            const int64_t iy = oy * p.sh + i * p.dh - p.pt;
            const float* src = (iy >= 0 && iy < p.h) ? x + (c * p.h + iy) * p.w : nullptr;
            // Up to the end of the output row, the end of the strip or p1, whichever is first.
            const int64_t column = q - p0;
            const int64_t lane = column % kStripWidth;
            const int64_t count = std::min({p.ow - ox, kStripWidth - lane, p1 - q});
            copyRun(p, src, off, ox, count,
                    strips + ((column / kStripWidth) * rows + row) * kStripWidth + lane);
            q += count;
        }
    }
}

/// Adds the im2col matrix `col` (all output pixels) back into the image gradient `dx`.
void col2im(const Conv2d& p, const float* col, float* dx) {
    const int64_t width = p.outPixels();
    for (int64_t c = 0; c < p.cg(); ++c) {
        float* xc = dx + c * p.h * p.w;
        for (int64_t i = 0; i < p.kh; ++i) {
            for (int64_t j = 0; j < p.kw; ++j) {
                const float* row = col + ((c * p.kh + i) * p.kw + j) * width;
                for (int64_t oy = 0; oy < p.oh; ++oy) {
                    const int64_t iy = oy * p.sh + i * p.dh - p.pt;
                    if (iy < 0 || iy >= p.h) {
                        continue;
                    }
                    for (int64_t ox = 0; ox < p.ow; ++ox) {
                        const int64_t ix = ox * p.sw + j * p.dw - p.pl;
                        if (ix >= 0 && ix < p.w) {
                            xc[iy * p.w + ix] += row[oy * p.ow + ox];
                        }
                    }
                }
            }
        }
    }
}

} // namespace qs::runtime
