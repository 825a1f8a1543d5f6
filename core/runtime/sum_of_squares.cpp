#include "core/runtime/sum_of_squares.h"

#include <array>
#include <cstddef>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

/// The sum of x[i] (kSquare: of (x[i] - center)^2) over the run.
template <bool kSquare>
double sumRun(const float* x, int64_t count, double center = 0.0) {
    int64_t i = 0;
    double total = 0.0;
#if defined(__AVX2__) && defined(__FMA__)
    // 16 floats a step into four chains of four doubles: one chain would wait on every add.
    __m256d s0 = _mm256_setzero_pd();
    __m256d s1 = _mm256_setzero_pd();
    __m256d s2 = _mm256_setzero_pd();
    __m256d s3 = _mm256_setzero_pd();
    const __m256d c = _mm256_set1_pd(center);
    for (; i + 16 <= count; i += 16) {
        const __m256 lo = _mm256_loadu_ps(x + i);
        const __m256 hi = _mm256_loadu_ps(x + i + 8);
        __m256d v0 = _mm256_cvtps_pd(_mm256_castps256_ps128(lo));
        __m256d v1 = _mm256_cvtps_pd(_mm256_extractf128_ps(lo, 1));
        __m256d v2 = _mm256_cvtps_pd(_mm256_castps256_ps128(hi));
        __m256d v3 = _mm256_cvtps_pd(_mm256_extractf128_ps(hi, 1));
        if constexpr (kSquare) {
            // x - 0 is x exactly: sumOfSquares keeps its bits.
            v0 = _mm256_sub_pd(v0, c);
            v1 = _mm256_sub_pd(v1, c);
            v2 = _mm256_sub_pd(v2, c);
            v3 = _mm256_sub_pd(v3, c);
            s0 = _mm256_fmadd_pd(v0, v0, s0);
            s1 = _mm256_fmadd_pd(v1, v1, s1);
            s2 = _mm256_fmadd_pd(v2, v2, s2);
            s3 = _mm256_fmadd_pd(v3, v3, s3);
        } else {
            s0 = _mm256_add_pd(v0, s0);
            s1 = _mm256_add_pd(v1, s1);
            s2 = _mm256_add_pd(v2, s2);
            s3 = _mm256_add_pd(v3, s3);
        }
    }
    const __m256d both = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
    std::array<double, 4> lanes{};
    _mm256_storeu_pd(lanes.data(), both);
    total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
#else
    std::array<double, 4> sums{};
    for (; i + 4 <= count; i += 4) {
        for (std::size_t lane = 0; lane < 4; ++lane) {
            const double v =
                static_cast<double>(x[i + static_cast<int64_t>(lane)]) - (kSquare ? center : 0.0);
            sums[lane] += kSquare ? v * v : v;
        }
    }
    total = (sums[0] + sums[1]) + (sums[2] + sums[3]);
#endif
    for (; i < count; ++i) {
        const double v = static_cast<double>(x[i]) - (kSquare ? center : 0.0);
        total += kSquare ? v * v : v;
    }
    return total;
}

} // namespace

double sumOfSquares(const float* x, int64_t count) {
    return sumRun<true>(x, count);
}

double sumInDouble(const float* x, int64_t count) {
    return sumRun<false>(x, count);
}

double sumOfSquaredDeviations(const float* x, int64_t count, double center) {
    return sumRun<true>(x, count, center);
}

} // namespace qs::runtime
