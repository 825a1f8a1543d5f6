#include "core/runtime/depthwise_wide.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace qs::runtime {

#if defined(__x86_64__)
namespace {

constexpr int64_t kLanes = 16;
/// Outputs a thread finishes before running the fused tail over them, while they are in cache.
constexpr int64_t kTailBatch = 4096;

/// Lanes [begin, end) of a 16-lane vector, clamped to it.
uint16_t laneMask(int64_t begin, int64_t end) {
    begin = std::clamp<int64_t>(begin, 0, kLanes);
    end = std::clamp<int64_t>(end, 0, kLanes);
    if (end <= begin) {
        return 0;
    }
    return static_cast<uint16_t>(((1U << end) - 1U) & ~((1U << begin) - 1U));
}

/// What every plane of one convolution shares: its geometry and the load and store masks. Output
/// row oy is cut into chunks of 16 outputs; chunk c of an input row is read from column
/// base = 16 c s - pl as up to three consecutive vectors, each under `loads[3 c + k]` (the lanes
/// inside the row), and tap (i, j) of output lane l is its column base + s l + j (RowTaps). Rows
/// above or below the input are skipped.
struct WidePlan {
    Conv2d p{};
    int64_t chunks = 0;          ///< per output row
    std::vector<uint16_t> loads; ///< per chunk, three consecutive vectors' lanes
    std::vector<uint16_t> store; ///< per chunk
};

WidePlan makePlan(const Conv2d& p) {
    WidePlan plan;
    plan.p = p;
    plan.chunks = (p.ow + kLanes - 1) / kLanes;
    plan.loads.resize(static_cast<size_t>(plan.chunks * 3));
    plan.store.resize(static_cast<size_t>(plan.chunks));
    for (int64_t c = 0; c < plan.chunks; ++c) {
        plan.store[static_cast<size_t>(c)] = laneMask(0, p.ow - c * kLanes);
        const int64_t base = c * kLanes * p.sw - p.pl;
        for (int64_t k = 0; k < 3; ++k) {
            plan.loads[static_cast<size_t>(c * 3 + k)] =
                laneMask(-base - k * kLanes, p.w - base - k * kLanes);
        }
    }
    return plan;
}

/// The input tensor's floats: loads may read anywhere inside it.
struct InputBounds {
    const float* begin = nullptr;
    const float* end = nullptr;
};

/// src[0 .. 15] with the lanes outside `lanes` zero. A masked load waits on a cache miss far longer
/// than a plain one (a cold plane took half as long again), so it is used only where a plain load
/// would leave the input; elsewhere the lanes are zeroed in the register.
__attribute__((target("avx512f"))) inline __m512 loadLanes(__mmask16 lanes, const float* src,
                                                           const InputBounds& in) {
    constexpr __mmask16 kAll = 0xFFFF;
    if (lanes == kAll) {
        return _mm512_loadu_ps(src);
    }
    if (std::greater_equal<const float*>()(src, in.begin) &&
        std::less_equal<const float*>()(src + kLanes, in.end)) {
        return _mm512_maskz_mov_ps(lanes, _mm512_loadu_ps(src));
    }
    return _mm512_maskz_loadu_ps(lanes, src);
}

/// One plane's epilogue on a vector of finished sums: residual, clamp, store (masked in a row's
/// partial last chunk only, as the loads are).
__attribute__((target("avx512f"))) inline void
finish(__m512 acc, const float* residual, __mmask16 lanes, __m512 lo, __m512 hi, float* y) {
    constexpr __mmask16 kAll = 0xFFFF;
    if (residual != nullptr) {
        acc = _mm512_add_ps(acc, lanes == kAll ? _mm512_loadu_ps(residual)
                                               : _mm512_maskz_loadu_ps(lanes, residual));
    }
    // min(hi, max(lo, v)) keeps NaN, as the GEMM's tiles do. (The masked forms with every lane
    // on: GCC 12 warns of the undefined pass-through inside the unmasked ones.)
    const __m512 above = _mm512_mask_max_ps(acc, kAll, lo, acc);
    const __m512 out = _mm512_mask_min_ps(above, kAll, hi, above);
    if (lanes == kAll) {
        _mm512_storeu_ps(y, out);
    } else {
        _mm512_mask_storeu_ps(y, lanes, out);
    }
}

/// The channel's parameters for one plane.
struct PlaneArgs {
    const float* x = nullptr;
    InputBounds in;
    const float* w = nullptr; ///< kh kw taps, row-major
    float bias = 0.0F;
    const float* residual = nullptr;
    float lo = 0.0F;
    float hi = 0.0F;
    float* y = nullptr;
};

/// Lanes k .. k + 15 of the 32 in cur (first) and next: a tap k columns further right.
__attribute__((target("avx512f"))) inline __m512 shiftLanes(__m512 next, __m512 cur, int k) {
    const __m512i n = _mm512_castps_si512(next);
    const __m512i c = _mm512_castps_si512(cur);
    // The masked forms with every lane on: GCC 12 warns of the undefined pass-through inside the
    // unmasked ones. k is a constant once the callers' loops are unrolled.
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

/// One input row's lanes for chunk c: row[base + s l + j] for every kernel column j of a chunk
/// whose lane l starts at input column base (zero outside the row). Stride 1 loads two vectors
/// and shifts them per tap; stride 2 loads three, splits the first two into even and odd columns
/// and shifts those. Either way each input row is read once per chunk, not once per tap: the
/// loads (unaligned, so often two cache lines each) had been what the kernel waited on.
template <int kS, int kKw>
struct RowTaps {
    __m512 even;     ///< stride 1: columns base + l; stride 2: base + 2 l
    __m512 evenNext; ///< the 16 after `even`'s (stride 2: only its first lanes are read)
    __m512 odd;      ///< stride 2: base + 2 l + 1
    __m512 oddNext;

    __attribute__((target("avx512f"))) RowTaps(const float* row, __mmask16 first, __mmask16 second,
                                               __mmask16 third, const InputBounds& in) {
        const __m512 a = loadLanes(first, row, in);
        const __m512 b = loadLanes(second, row + kLanes, in);
        if constexpr (kS == 1) {
            even = a;
            evenNext = b;
            odd = a;
            oddNext = b;
        } else {
            // Lane l takes element 2 l (+ 1) of the 32 in a and b (16-31 from b).
            const __m512i evens =
                _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
            const __m512i odds =
                _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
            const __m512 c = loadLanes(third, row + 2 * kLanes, in);
            even = _mm512_permutex2var_ps(a, evens, b);
            odd = _mm512_permutex2var_ps(a, odds, b);
            if constexpr (kKw <= 3) {
                // Column base + 32 (kernel column 2 of lane 15) is c's first lane already.
                evenNext = c;
                oddNext = c;
            } else {
                evenNext = _mm512_permutexvar_ps(evens, c);
                oddNext = _mm512_permutexvar_ps(odds, c);
            }
        }
    }

    /// Kernel column j's lanes.
    __attribute__((target("avx512f"))) __m512 column(int j) const {
        if constexpr (kS == 1) {
            return shiftLanes(evenNext, even, j);
        } else {
            return (j & 1) == 0 ? shiftLanes(evenNext, even, j / 2)
                                : shiftLanes(oddNext, odd, j / 2);
        }
    }
};

/// Output rows [oy, oy + kRows) of chunk c in the row layout, for a kKh x kKw kernel: each input
/// row the group reads is loaded once and feeds every output row and kernel column it meets. The
/// rows' sums are independent chains, so their multiply-adds overlap instead of waiting on each
/// other's latency. Input rows outside the image are skipped (the padding).
template <int kS, int kKh, int kKw, int kRows>
__attribute__((target("avx512f"))) inline void
rowGroup(const WidePlan& plan, const PlaneArgs& a, int64_t oy, int64_t c, __m512 lo, __m512 hi) {
    const Conv2d& p = plan.p;
    const int64_t top = oy * kS - p.pt;
    const float* origin = a.x + top * p.w + c * kLanes * kS - p.pl;
    const size_t m = static_cast<size_t>(c) * 3;
    const auto first = static_cast<__mmask16>(plan.loads[m]);
    const auto second = static_cast<__mmask16>(plan.loads[m + 1]);
    const auto third = static_cast<__mmask16>(plan.loads[m + 2]);
    __m512 acc[kRows]; // NOLINT(*-avoid-c-arrays): registers, indexed by unrolled constants
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
        acc[r] = _mm512_set1_ps(a.bias);
    }
    constexpr int kInputRows = (kRows - 1) * kS + kKh;
#pragma GCC unroll 16
    for (int ri = 0; ri < kInputRows; ++ri) {
        if (top + ri < 0 || top + ri >= p.h) {
            continue;
        }
        const RowTaps<kS, kKw> row(origin + ri * p.w, first, second, third, a.in);
#pragma GCC unroll 8
        for (int j = 0; j < kKw; ++j) {
            const __m512 v = row.column(j);
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r) {
                const int i = ri - r * kS; // the kernel row input row ri is for output row r
                if (i >= 0 && i < kKh) {
                    acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(a.w[i * kKw + j]), v, acc[r]);
                }
            }
        }
    }
    const auto lanes = static_cast<__mmask16>(plan.store[static_cast<size_t>(c)]);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
        const int64_t at = (oy + r) * p.ow + c * kLanes;
        finish(acc[r], a.residual != nullptr ? a.residual + at : nullptr, lanes, lo, hi, a.y + at);
    }
}

/// Row layout, output rows four at a time; kS is the stride, kKh x kKw the kernel.
template <int kS, int kKh, int kKw>
__attribute__((target("avx512f"))) void rowPlane(const WidePlan& plan, const PlaneArgs& a) {
    constexpr int kRows = 4;
    const Conv2d& p = plan.p;
    const __m512 lo = _mm512_set1_ps(a.lo);
    const __m512 hi = _mm512_set1_ps(a.hi);
    int64_t oy = 0;
    for (; oy + kRows <= p.oh; oy += kRows) {
        for (int64_t c = 0; c < plan.chunks; ++c) {
            rowGroup<kS, kKh, kKw, kRows>(plan, a, oy, c, lo, hi);
        }
    }
    for (; oy < p.oh; ++oy) {
        for (int64_t c = 0; c < plan.chunks; ++c) {
            rowGroup<kS, kKh, kKw, 1>(plan, a, oy, c, lo, hi);
        }
    }
}

using PlaneFn = void (*)(const WidePlan&, const PlaneArgs&);

PlaneFn planeFor(const Conv2d& p) {
    if (p.sh == 1) {
        return p.kh == 3 ? rowPlane<1, 3, 3> : rowPlane<1, 5, 5>;
    }
    return p.kh == 3 ? rowPlane<2, 3, 3> : rowPlane<2, 5, 5>;
}

/// Depthwise, dilation 1, a square 3x3 or 5x5 kernel with equal strides, output planes of its own:
/// every stride-2 one; at stride 1 those with rows of at least half a vector, except 3x3 ones on
/// rows of a vector or more, which the AVX2 flat pass runs as fast (it reads most rows in place),
/// and on rows shorter than that the channel-blocked kernel wins (its 8x8 transposes cheap on such
/// planes). Measured on MobileNetV2's and EfficientNet-B0's layers: 14x14 ones 10-20 % faster
/// here than blocked, 7x7 ones 30 % slower.
bool suits(const Conv2d& p) {
    const bool shape = p.isDepthwise() && p.dh == 1 && p.dw == 1 && p.kh == p.kw &&
                       (p.kh == 3 || p.kh == 5) && p.sh == p.sw && p.pt < p.kh && p.pl < p.kw &&
                       p.yImageStride == 0 && p.oh > 0 && p.ow > 0;
    if (!shape) {
        return false;
    }
    if (p.sh == 2) {
        return true;
    }
    return p.sh == 1 && p.ow >= kLanes / 2 && (p.kh == 5 || p.ow < kLanes);
}

} // namespace

bool depthwiseConv2dWide(const Conv2d& p, const float* x, const float* w,
                         const ConvEpilogue& epilogue, float* y) {
    if (!wideGemmKernelActive() || !suits(p)) {
        return false;
    }
    const WidePlan plan = makePlan(p);
    const PlaneFn plane = planeFor(p);
    const int64_t inPixels = p.h * p.w;
    const int64_t outPixels = p.outPixels();
    const int64_t taps = p.kh * p.kw;
    parallelFor(p.n * p.c, 1, [&](int64_t begin, int64_t end) {
        int64_t tailFrom = begin;
        for (int64_t nc = begin; nc < end; ++nc) {
            const int64_t c = nc % p.c;
            PlaneArgs args;
            args.x = x + nc * inPixels;
            args.in = {x, x + p.n * p.c * inPixels};
            args.w = w + c * taps;
            args.bias = epilogue.bias != nullptr ? epilogue.bias[c] : 0.0F;
            args.residual =
                epilogue.residual != nullptr ? epilogue.residual + nc * outPixels : nullptr;
            args.lo = epilogue.lo;
            args.hi = epilogue.hi;
            args.y = y + nc * outPixels;
            plane(plan, args);
            if (hasTail(epilogue) &&
                ((nc + 1 - tailFrom) * outPixels >= kTailBatch || nc + 1 == end)) {
                applyFusedTailHere(*epilogue.tail, y + tailFrom * outPixels,
                                   (nc + 1 - tailFrom) * outPixels);
                tailFrom = nc + 1;
            }
        }
    });
    return true;
}

#else

bool depthwiseConv2dWide(const Conv2d& /*p*/, const float* /*x*/, const float* /*w*/,
                         const ConvEpilogue& /*epilogue*/, float* /*y*/) {
    return false;
}

#endif

} // namespace qs::runtime
