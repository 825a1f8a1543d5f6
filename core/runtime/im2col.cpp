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
