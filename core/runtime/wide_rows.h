// Sliding windows over NCHW rows with AVX-512, for the depthwise convolution
// (depthwise_wide.cpp), the window's step (a multiply-add there) left to the caller: an output row
// is cut into chunks of 16 outputs, each input row a chunk's windows meet is loaded once (two or
// three unaligned vectors) and every kernel column's lanes are lane shifts of it (at stride 2, of
// its even and odd columns), and a group of output rows shares the input rows it reads. Loads are
// plain wherever they stay inside the input: a masked load waits on a cache miss far longer than a
// plain one (a cold MobileNetV2 plane took half as long again).
#pragma once

#if defined(__x86_64__)

#include <algorithm>
#include <cstdint>
#include <functional>
#include <immintrin.h>
#include <vector>

namespace qs::runtime::wide_rows {

inline constexpr int64_t kLanes = 16;

/// Lanes [begin, end) of a 16-lane vector, clamped to it.
inline uint16_t laneMask(int64_t begin, int64_t end) {
    begin = std::clamp<int64_t>(begin, 0, kLanes);
    end = std::clamp<int64_t>(end, 0, kLanes);
    if (end <= begin) {
        return 0;
    }
    return static_cast<uint16_t>(((1U << end) - 1U) & ~((1U << begin) - 1U));
}

/// Where one plane's rows are read and written: output rows of `outWidth` in chunks of 16;
/// chunk c of an input row (`width` long) starts at column base = 16 c stride - padLeft and is
/// read as up to three consecutive vectors, each under loads[3 c + k] (the lanes inside the row),
/// as many as the chunk's outputs reach with windows `kernelWidth` wide (vectors[c]): a row of 14
/// outputs of a 3x3 kernel needs one vector at stride 1, 7 outputs one at stride 2.
struct RowChunks {
    int64_t chunks = 0;
    std::vector<uint16_t> loads;
    std::vector<uint16_t> store;  ///< per chunk: the lanes inside the output row
    std::vector<uint8_t> vectors; ///< per chunk: vectors of input row its windows reach

    RowChunks(int64_t width, int64_t outWidth, int64_t stride, int64_t padLeft, int64_t kernelWidth)
        : chunks((outWidth + kLanes - 1) / kLanes)
        , loads(static_cast<size_t>(chunks * 3))
        , store(static_cast<size_t>(chunks))
        , vectors(static_cast<size_t>(chunks)) {
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t outputs = std::min(kLanes, outWidth - c * kLanes);
            store[static_cast<size_t>(c)] = laneMask(0, outputs);
            const int64_t reach = stride * (outputs - 1) + kernelWidth; // floats from base
            vectors[static_cast<size_t>(c)] =
                static_cast<uint8_t>(std::min<int64_t>(3, (reach + kLanes - 1) / kLanes));
            const int64_t base = c * kLanes * stride - padLeft;
            for (int64_t k = 0; k < 3; ++k) {
                loads[static_cast<size_t>(c * 3 + k)] =
                    laneMask(-base - k * kLanes, width - base - k * kLanes);
            }
        }
    }
};

/// The input tensor's floats: a plain load may read anywhere inside it.
struct InputBounds {
    const float* begin = nullptr;
    const float* end = nullptr;
};

/// src[0 .. 15], the lanes outside `lanes` replaced by `fill`'s: a plain load where all 16 stay
/// inside the input, a masked one only at its very ends.
__attribute__((target("avx512f"))) inline __m512 loadLanes(__mmask16 lanes, const float* src,
                                                           const InputBounds& in, __m512 fill) {
    constexpr __mmask16 kAll = 0xFFFF;
    if (lanes == kAll) {
        return _mm512_loadu_ps(src);
    }
    if (std::greater_equal<const float*>()(src, in.begin) &&
        std::less_equal<const float*>()(src + kLanes, in.end)) {
        return _mm512_mask_mov_ps(fill, lanes, _mm512_loadu_ps(src));
    }
    return _mm512_mask_loadu_ps(fill, lanes, src);
}

/// Lanes k .. k + 15 of the 32 in cur (first) and next: a window column k further right.
__attribute__((target("avx512f"))) inline __m512 shiftLanes(__m512 next, __m512 cur, int k) {
    const __m512i n = _mm512_castps_si512(next);
    const __m512i c = _mm512_castps_si512(cur);
    // valignd needs k as an immediate, hence a case each; k is a constant once the callers'
    // loops are unrolled. (One two-source permute with the index iota + k made MobileNetV2's and
    // EfficientNet-B0's stride-1 layers 10-15 % slower.) The masked forms with every lane on:
    // GCC 12 warns of the undefined pass-through inside the unmasked ones.
    constexpr __mmask16 kAll = 0xFFFF;
    switch (k) {
    case 1:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 1));
    case 2:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 2));
    case 3:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 3));
    case 4:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 4));
    case 5:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 5));
    case 6:
        return _mm512_castsi512_ps(_mm512_mask_alignr_epi32(c, kAll, n, c, 6));
    default:
        return cur;
    }
}

/// Elements 0, 2, .., 30 of the 32 in a (first) and b: the even columns of two vectors.
__attribute__((target("avx512f"))) inline __m512 evenLanes(__m512 a, __m512 b) {
    const __m512i evens =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(a, evens, b);
}

/// Elements 1, 3, .., 31 of the 32 in a (first) and b: the odd columns of two vectors.
__attribute__((target("avx512f"))) inline __m512 oddLanes(__m512 a, __m512 b) {
    const __m512i odds =
        _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_ps(a, odds, b);
}

/// One input row's lanes for a chunk: row[base + s l + j] for every window column j < kKw of
/// output lane l (`fill` outside the row). Stride 1 loads two vectors and shifts them; stride 2
/// loads three (two for windows of two), splits the first two into even and odd columns and shifts
/// those.
template <int kS, int kKw>
struct RowTaps {
    static_assert((kS == 1 || kS == 2) && kKw >= 1 && kKw <= 7);

    __m512 even;     ///< stride 1: columns base + l; stride 2: base + 2 l
    __m512 evenNext; ///< the 16 after `even`'s (stride 2: only its first lanes are read)
    __m512 odd;      ///< stride 2: base + 2 l + 1
    __m512 oddNext;

    /// `vectors`: how many of the row's vectors the chunk's windows reach (RowChunks::vectors);
    /// the others stand at `fill`, unread.
    __attribute__((target("avx512f"))) RowTaps(const float* row, const uint16_t* masks, int vectors,
                                               const InputBounds& in, __m512 fill) {
        const __m512 a = loadLanes(masks[0], row, in, fill);
        const __m512 b = vectors > 1 ? loadLanes(masks[1], row + kLanes, in, fill) : fill;
        if constexpr (kS == 1) {
            even = a;
            evenNext = b;
            odd = a;
            oddNext = b;
        } else {
            // Lane l takes element 2 l (+ 1) of the 32 in a and b (16-31 from b).
            even = evenLanes(a, b);
            odd = oddLanes(a, b);
            if constexpr (kKw <= 2) {
                evenNext = fill;
                oddNext = fill;
            } else {
                const __m512 c =
                    vectors > 2 ? loadLanes(masks[2], row + 2 * kLanes, in, fill) : fill;
                if constexpr (kKw == 3) {
                    // Column base + 32 (window column 2 of lane 15) is c's first lane already.
                    evenNext = c;
                    oddNext = c;
                } else {
                    // Only the first lanes are read: c's own even and odd columns.
                    evenNext = evenLanes(c, c);
                    oddNext = oddLanes(c, c);
                }
            }
        }
    }

    /// Window column j's lanes.
    __attribute__((target("avx512f"))) __m512 column(int j) const {
        if constexpr (kS == 1) {
            return shiftLanes(evenNext, even, j);
        } else {
            return (j & 1) == 0 ? shiftLanes(evenNext, even, j / 2)
                                : shiftLanes(oddNext, odd, j / 2);
        }
    }
};

/// Output rows [oy, oy + kRows) of one chunk: calls step(acc[r], v, i, j) -> acc[r] for every
/// window row i and column j of output row r whose input row lies inside the plane (h rows of
/// `width`), v that input row's lanes for column j. `origin` is the chunk's input row oy s - pt
/// (top) at column base. Each input row is loaded once for all the output rows and columns it
/// meets, and the rows' sums are independent chains (their latencies overlap).
template <int kS, int kKh, int kKw, int kRows, typename Step>
__attribute__((target("avx512f"))) inline void
sweepRowGroup(const float* origin, int64_t width, int64_t top, int64_t h, const uint16_t* masks,
              int vectors, const InputBounds& in, __m512 fill, __m512* acc, const Step& step) {
    constexpr int kInputRows = (kRows - 1) * kS + kKh;
#pragma GCC unroll 16
    for (int ri = 0; ri < kInputRows; ++ri) {
        if (top + ri < 0 || top + ri >= h) {
            continue;
        }
        const RowTaps<kS, kKw> row(origin + ri * width, masks, vectors, in, fill);
#pragma GCC unroll 8
        for (int j = 0; j < kKw; ++j) {
            const __m512 v = row.column(j);
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) {
                const int i = ri - r * kS; // the window row input row ri is for output row r
                if (i >= 0 && i < kKh) {
                    acc[r] = step(acc[r], v, i, j);
                }
            }
        }
    }
}

/// Stores v's `lanes` at y: a plain store for a whole chunk.
__attribute__((target("avx512f"))) inline void storeLanes(__mmask16 lanes, float* y, __m512 v) {
    constexpr __mmask16 kAll = 0xFFFF;
    if (lanes == kAll) {
        _mm512_storeu_ps(y, v);
    } else {
        _mm512_mask_storeu_ps(y, lanes, v);
    }
}

} // namespace qs::runtime::wide_rows

#endif
