// The defining sums of a 2-D convolution's gradients, in double, for the kernel tests: any
// kernel size, stride, dilation, pads (both ends) and groups.
#pragma once

#include "core/runtime/im2col.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qs::runtime::test {

/// Calls fn(n, xIndex, wIndex, yIndex) for every product x w of the convolution's sum (taps that
/// read padding are skipped).
template <typename Fn>
void forEachProduct(const Conv2d& p, Fn fn) {
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t f = 0; f < p.m; ++f) {
            const int64_t c0 = (f / p.mg()) * p.cg();
            for (int64_t cl = 0; cl < p.cg(); ++cl) {
                for (int64_t i = 0; i < p.kh; ++i) {
                    for (int64_t j = 0; j < p.kw; ++j) {
                        const int64_t wIndex = ((f * p.cg() + cl) * p.kh + i) * p.kw + j;
                        for (int64_t oy = 0; oy < p.oh; ++oy) {
                            for (int64_t ox = 0; ox < p.ow; ++ox) {
                                const int64_t iy = oy * p.sh + i * p.dh - p.pt;
                                const int64_t ix = ox * p.sw + j * p.dw - p.pl;
                                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) {
                                    continue;
                                }
                                fn(n, ((n * p.c + c0 + cl) * p.h + iy) * p.w + ix, wIndex,
                                   ((n * p.m + f) * p.oh + oy) * p.ow + ox);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// dx = the sum of w dy over the taps that read each input element.
inline std::vector<float> directInputGrad(const Conv2d& p, const std::vector<float>& dy,
                                          const std::vector<float>& w) {
    std::vector<double> dx(static_cast<size_t>(p.n * p.c * p.h * p.w), 0.0);
    forEachProduct(p, [&](int64_t, int64_t x, int64_t wi, int64_t y) {
        dx[static_cast<size_t>(x)] +=
            static_cast<double>(w[static_cast<size_t>(wi)]) * dy[static_cast<size_t>(y)];
    });
    return {dx.begin(), dx.end()};
}

/// dw = the sum of x dy over the outputs each weight reaches, summed over the images or per image
/// ([N, M, C / group, kh, kw] with `perSample`).
inline std::vector<float> directWeightGrad(const Conv2d& p, const std::vector<float>& x,
                                           const std::vector<float>& dy, bool perSample) {
    const int64_t size = p.m * p.colRows();
    std::vector<double> dw(static_cast<size_t>((perSample ? p.n : 1) * size), 0.0);
    forEachProduct(p, [&](int64_t n, int64_t xi, int64_t wi, int64_t y) {
        dw[static_cast<size_t>((perSample ? n * size : 0) + wi)] +=
            static_cast<double>(x[static_cast<size_t>(xi)]) * dy[static_cast<size_t>(y)];
    });
    return {dw.begin(), dw.end()};
}

} // namespace qs::runtime::test
