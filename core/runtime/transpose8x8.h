// An 8 x 8 block of floats transposed in AVX2 registers: the strided copies of the data-movement
// ops (index_map.cpp) and the staging of the channel-blocked depthwise convolution
// (conv_kernels.cpp) both move planes of floats this way.
#pragma once

#if defined(__AVX2__)
#include <cstdint>
#include <immintrin.h>

namespace qs::runtime {

/// Eight AVX2 vectors (std::array drops __m256's alignment attribute).
struct Vectors8 {
    __m256 v[8]; // NOLINT(*-avoid-c-arrays)
};

/// Vector k = column k of the 8 row vectors `rows`: unpack pairs of rows, shuffle pairs of pairs,
/// then put the 128-bit lanes in order.
inline Vectors8 transposeVectors8x8(const Vectors8& rows) {
    const __m256 r0 = rows.v[0];
    const __m256 r1 = rows.v[1];
    const __m256 r2 = rows.v[2];
    const __m256 r3 = rows.v[3];
    const __m256 r4 = rows.v[4];
    const __m256 r5 = rows.v[5];
    const __m256 r6 = rows.v[6];
    const __m256 r7 = rows.v[7];
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1);
    const __m256 t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3);
    const __m256 t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5);
    const __m256 t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7);
    const __m256 t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44);
    const __m256 u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44);
    const __m256 u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44);
    const __m256 u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44);
    const __m256 u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    Vectors8 out{};
    out.v[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    out.v[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    out.v[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    out.v[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    out.v[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    out.v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    out.v[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    out.v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
    return out;
}

/// Vector k = column k of the 8 rows of 8 floats at src, rows `ld` floats apart.
inline Vectors8 transposeRegisters8x8(const float* src, int64_t ld) {
    Vectors8 rows{};
    for (int64_t r = 0; r < 8; ++r) {
        rows.v[r] = _mm256_loadu_ps(src + r * ld);
    }
    return transposeVectors8x8(rows);
}

} // namespace qs::runtime
#endif
