#include "core/runtime/depthwise_wide.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/wide_rows.h"

#include <cstdint>

namespace qs::runtime {

#if defined(__x86_64__)
namespace {

using wide_rows::kLanes;

/// Outputs a thread finishes before running the fused tail over them, while they are in cache.
constexpr int64_t kTailBatch = 4096;

/// The channel's parameters for one plane.
struct PlaneArgs {
    const float* x = nullptr;
    wide_rows::InputBounds in;
    const float* w = nullptr; ///< kh kw taps, row-major
    float bias = 0.0F;
    const float* residual = nullptr;
    float lo = 0.0F;
    float hi = 0.0F;
    float* y = nullptr;
};

/// What every plane of one convolution shares.
struct WidePlan {
    Conv2d p{};
    wide_rows::RowChunks chunks;
};

/// A tap's multiply-add: acc + w[i kKw + j] v.
template <int kKw>
struct MultiplyAdd {
    const float* w;

    __attribute__((target("avx512f"))) __m512 operator()(__m512 acc, __m512 v, int i, int j) const {
        return _mm512_fmadd_ps(_mm512_set1_ps(w[i * kKw + j]), v, acc);
    }
};

/// Output rows [oy, oy + kRows) of chunk c: the sums (wide_rows::sweepRowGroup), then the
/// epilogue: residual, clamp (min(hi, max(lo, v)) keeps NaN, as the GEMM's tiles do), store.
template <int kS, int kK, int kRows>
__attribute__((target("avx512f"))) inline void
rowGroup(const WidePlan& plan, const PlaneArgs& a, int64_t oy, int64_t c, __m512 lo, __m512 hi) {
    const Conv2d& p = plan.p;
    const int64_t top = oy * kS - p.pt;
    __m512 acc[kRows]; // NOLINT(*-avoid-c-arrays): registers, indexed by unrolled constants
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
        acc[r] = _mm512_set1_ps(a.bias);
    }
    wide_rows::sweepRowGroup<kS, kK, kK, kRows>(a.x + top * p.w + c * kLanes * kS - p.pl, p.w, top,
                                                p.h, plan.chunks.loads.data() + c * 3,
                                                plan.chunks.vectors[static_cast<size_t>(c)], a.in,
                                                _mm512_setzero_ps(), acc, MultiplyAdd<kK>{a.w});
    const auto lanes = static_cast<__mmask16>(plan.chunks.store[static_cast<size_t>(c)]);
    // The masked forms with every lane on: GCC 12 warns of the undefined pass-through inside the
    // unmasked ones.
    constexpr __mmask16 kAll = 0xFFFF;
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
        const int64_t at = (oy + r) * p.ow + c * kLanes;
        __m512 v = acc[r];
        if (a.residual != nullptr) {
            // No bounds: a partial chunk's residual takes a masked load (a residual is rare).
            v = _mm512_add_ps(
                v, wide_rows::loadLanes(lanes, a.residual + at, {}, _mm512_setzero_ps()));
        }
        v = _mm512_mask_max_ps(v, kAll, lo, v);
        wide_rows::storeLanes(lanes, a.y + at, _mm512_mask_min_ps(v, kAll, hi, v));
    }
}

/// One plane, output rows four at a time; kS is the stride, kK x kK the kernel.
template <int kS, int kK>
__attribute__((target("avx512f"))) void rowPlane(const WidePlan& plan, const PlaneArgs& a) {
    constexpr int kRows = 4;
    const Conv2d& p = plan.p;
    const __m512 lo = _mm512_set1_ps(a.lo);
    const __m512 hi = _mm512_set1_ps(a.hi);
    int64_t oy = 0;
    for (; oy + kRows <= p.oh; oy += kRows) {
        for (int64_t c = 0; c < plan.chunks.chunks; ++c) {
            rowGroup<kS, kK, kRows>(plan, a, oy, c, lo, hi);
        }
    }
    for (; oy < p.oh; ++oy) {
        for (int64_t c = 0; c < plan.chunks.chunks; ++c) {
            rowGroup<kS, kK, 1>(plan, a, oy, c, lo, hi);
        }
    }
}

using PlaneFn = void (*)(const WidePlan&, const PlaneArgs&);

PlaneFn planeFor(const Conv2d& p) {
    if (p.sh == 1) {
        return p.kh == 3 ? rowPlane<1, 3> : rowPlane<1, 5>;
    }
    return p.kh == 3 ? rowPlane<2, 3> : rowPlane<2, 5>;
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
    const WidePlan plan{p, wide_rows::RowChunks(p.w, p.ow, p.sw, p.pl, p.kw)};
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
