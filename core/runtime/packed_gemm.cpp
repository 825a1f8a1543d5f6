#include "core/runtime/packed_gemm.h"

#include "core/runtime/fused_tail.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"
#include "core/runtime/transpose8x8.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

constexpr int64_t kTile = kGemmRows * kGemmCols;
/// Panels of A a tall tile spans (tallMicroKernel, tallColumnKernel).
constexpr int64_t kTallPanels = 4;
/// Depth of one pass over A and B: a 6 x 256 A panel and a 256 x 16 B strip stay in L1.
constexpr int64_t kDepthBlock = 256;
/// Shallower blocks keep to pairs of strips: with 64 steps the wider tile's 24 stores weighed
/// more than its saved loads (ResNet-50's 64-deep 1x1 convolutions ran 1 % slower).
constexpr int64_t kQuadMinDepth = 128;
/// Columns of B per block.
constexpr int64_t kMaxColumnBlock = 512;
/// Below this many columns, threads split the rows of A rather than the columns.
constexpr int64_t kRowSplitColumns = 256;
/// Depth blocks of B up to this size run panel by panel, larger ones strip by strip.
constexpr int64_t kPanelOuterBytes = int64_t{256} << 10;

/// What the micro-kernel does when it stores a tile: add what the tile already holds (a later
/// depth block), and on the last depth block apply the epilogue (bias of the tile's rows,
/// residual at the tile's offsets, clamp).
struct TileStore {
    bool accumulate = false;
    bool finish = false;
    const float* bias = nullptr;     ///< bias of the tile's first row, or nullptr
    const float* residual = nullptr; ///< residual at the tile's origin, row stride ldt
    float lo = 0.0F;
    float hi = 0.0F;
    int64_t rows = kGemmRows; ///< rows stored (the last panel of A may be partly padding)
};

/// Prefetches the kColumns floats at `row` (whole strips): a line per strip, and the last float's
/// line, which is one more when the row does not start a cache line.
template <int64_t kColumns>
inline void prefetchColumns(const float* row) {
    for (int64_t j = 0; j < kColumns; j += kGemmCols) {
        __builtin_prefetch(row + j);
    }
    __builtin_prefetch(row + kColumns - 1);
}

/// Prefetches the rows of the tile (`how.rows` rows of kColumns floats at row stride ldt) that a
/// micro-kernel stores, or adds to, when its depth loop ends: issued as the kernel starts, they
/// arrive during the loop. C of a large output (a 56 x 56 or 112 x 112 plane per image, a batch
/// of them) is in no cache, and a tile writes 6 to 12 rows thousands of floats apart, one or two
/// lines each: more streams than the hardware prefetchers follow, so each store missed to
/// memory. With C rotating over eight images, ResNet's 7 x 7 stem as a GEMM (64 x 147 x 12544)
/// ran at 49 GFLOP/s on one thread and at 57 with this; ResNet-50's 64 -> 256 1x1 convolution at
/// 104 and 116.
template <int64_t kColumns>
inline void prefetchTile(const TileStore& how, const float* tile, int64_t ldt) {
    for (int64_t r = 0; r < how.rows; ++r) {
        prefetchColumns<kColumns>(tile + r * ldt);
    }
}

#if defined(__AVX2__) && defined(__FMA__)
/// tile (6 x 16, row stride ldt) (+)= a (depth x 6, packed) * b (depth x 16, row stride bStep).
/// nextA (or nullptr): the A block that runs after this one, prefetched in step. With few
/// columns (small N) a block of A is done quickly, and the weights of a layer, used once per
/// image, come from memory in short runs that the hardware prefetcher picks up late.
inline void microKernel(int64_t depth, const float* a, const float* b, int64_t bStep, float* tile,
                        int64_t ldt, const TileStore& how, const float* nextA) {
    prefetchTile<kGemmCols>(how, tile, ldt);
    __m256 c00 = _mm256_setzero_ps();
    __m256 c01 = _mm256_setzero_ps();
    __m256 c10 = _mm256_setzero_ps();
    __m256 c11 = _mm256_setzero_ps();
    __m256 c20 = _mm256_setzero_ps();
    __m256 c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps();
    __m256 c31 = _mm256_setzero_ps();
    __m256 c40 = _mm256_setzero_ps();
    __m256 c41 = _mm256_setzero_ps();
    __m256 c50 = _mm256_setzero_ps();
    __m256 c51 = _mm256_setzero_ps();
    for (int64_t k = 0; k < depth; ++k) {
        if (nextA != nullptr) {
            __builtin_prefetch(nextA + k * kGemmRows);
        }
        const __m256 b0 = _mm256_loadu_ps(b);
        const __m256 b1 = _mm256_loadu_ps(b + 8);
        __m256 av = _mm256_broadcast_ss(a);
        c00 = _mm256_fmadd_ps(av, b0, c00);
        c01 = _mm256_fmadd_ps(av, b1, c01);
        av = _mm256_broadcast_ss(a + 1);
        c10 = _mm256_fmadd_ps(av, b0, c10);
        c11 = _mm256_fmadd_ps(av, b1, c11);
        av = _mm256_broadcast_ss(a + 2);
        c20 = _mm256_fmadd_ps(av, b0, c20);
        c21 = _mm256_fmadd_ps(av, b1, c21);
        av = _mm256_broadcast_ss(a + 3);
        c30 = _mm256_fmadd_ps(av, b0, c30);
        c31 = _mm256_fmadd_ps(av, b1, c31);
        av = _mm256_broadcast_ss(a + 4);
        c40 = _mm256_fmadd_ps(av, b0, c40);
        c41 = _mm256_fmadd_ps(av, b1, c41);
        av = _mm256_broadcast_ss(a + 5);
        c50 = _mm256_fmadd_ps(av, b0, c50);
        c51 = _mm256_fmadd_ps(av, b1, c51);
        a += kGemmRows;
        b += bStep;
    }
    const __m256 lower = _mm256_set1_ps(how.lo);
    const __m256 upper = _mm256_set1_ps(how.hi);
    const auto store = [&](int64_t row, __m256 lo, __m256 hi) {
        if (row >= how.rows) {
            return;
        }
        float* dst = tile + row * ldt;
        if (how.accumulate) {
            lo = _mm256_add_ps(lo, _mm256_loadu_ps(dst));
            hi = _mm256_add_ps(hi, _mm256_loadu_ps(dst + 8));
        }
        if (how.finish) {
            if (how.bias != nullptr) {
                const __m256 bias = _mm256_broadcast_ss(how.bias + row);
                lo = _mm256_add_ps(lo, bias);
                hi = _mm256_add_ps(hi, bias);
            }
            if (how.residual != nullptr) {
                lo = _mm256_add_ps(lo, _mm256_loadu_ps(how.residual + row * ldt));
                hi = _mm256_add_ps(hi, _mm256_loadu_ps(how.residual + row * ldt + 8));
            }
            // The bound first: maxps/minps return their second operand for a NaN, which then
            // stays NaN (as std::max(v, lo) does and the edge tiles' epilogue does).
            lo = _mm256_min_ps(upper, _mm256_max_ps(lower, lo));
            hi = _mm256_min_ps(upper, _mm256_max_ps(lower, hi));
        }
        _mm256_storeu_ps(dst, lo);
        _mm256_storeu_ps(dst + 8, hi);
    };
    store(0, c00, c01);
    store(1, c10, c11);
    store(2, c20, c21);
    store(3, c30, c31);
    store(4, c40, c41);
    store(5, c50, c51);
}

/// Whether wideMicroKernel may run: the processor and the OS support AVX-512F (checked once) and
/// setWideGemmKernel has not turned it off.
std::atomic<bool>& wideKernelSwitch() {
    static std::atomic<bool> enabled{__builtin_cpu_supports("avx512f") != 0};
    return enabled;
}

/// Row `row` of a 6 x 32 tile (columns 0-15 in lo, 16-31 in hi), stored as microKernel does.
__attribute__((target("avx512f"))) inline void
wideStoreRow(const TileStore& how, float* tile, int64_t ldt, int64_t row, __m512 lo, __m512 hi) {
    if (row >= how.rows) {
        return;
    }
    float* dst = tile + row * ldt;
    if (how.accumulate) {
        lo = _mm512_add_ps(lo, _mm512_loadu_ps(dst));
        hi = _mm512_add_ps(hi, _mm512_loadu_ps(dst + kGemmCols));
    }
    if (how.finish) {
        if (how.bias != nullptr) {
            const __m512 bias = _mm512_set1_ps(how.bias[row]);
            lo = _mm512_add_ps(lo, bias);
            hi = _mm512_add_ps(hi, bias);
        }
        if (how.residual != nullptr) {
            lo = _mm512_add_ps(lo, _mm512_loadu_ps(how.residual + row * ldt));
            hi = _mm512_add_ps(hi, _mm512_loadu_ps(how.residual + row * ldt + kGemmCols));
        }
        const __m512 lower = _mm512_set1_ps(how.lo);
        const __m512 upper = _mm512_set1_ps(how.hi);
        lo = _mm512_min_ps(upper, _mm512_max_ps(lower, lo)); // NaN stays NaN, as in microKernel
        hi = _mm512_min_ps(upper, _mm512_max_ps(lower, hi));
    }
    _mm512_storeu_ps(dst, lo);
    _mm512_storeu_ps(dst + kGemmCols, hi);
}

/// The 6 x 32 tile of two adjacent strips, b0 and b1 (16 columns each, row stride bStep), in
/// AVX-512 registers: where the processor has 512-bit multiply-adds (ONNX Runtime's MLAS uses them
/// there too) twice the columns per step of microKernel. Each element sees the same multiply-adds
/// in the same order as in microKernel, and the same epilogue, so the results are bit-identical.
/// nextB (or nullptr): 32 columns of B at the same row stride, prefetched row by row.
__attribute__((target("avx512f"))) void wideMicroKernel(int64_t depth, const float* a,
                                                        const float* b0, const float* b1,
                                                        int64_t bStep, float* tile, int64_t ldt,
                                                        const TileStore& how, const float* nextA,
                                                        const float* nextB) {
    prefetchTile<2 * kGemmCols>(how, tile, ldt);
    __m512 c00 = _mm512_setzero_ps();
    __m512 c01 = _mm512_setzero_ps();
    __m512 c10 = _mm512_setzero_ps();
    __m512 c11 = _mm512_setzero_ps();
    __m512 c20 = _mm512_setzero_ps();
    __m512 c21 = _mm512_setzero_ps();
    __m512 c30 = _mm512_setzero_ps();
    __m512 c31 = _mm512_setzero_ps();
    __m512 c40 = _mm512_setzero_ps();
    __m512 c41 = _mm512_setzero_ps();
    __m512 c50 = _mm512_setzero_ps();
    __m512 c51 = _mm512_setzero_ps();
    for (int64_t k = 0; k < depth; ++k) {
        if (nextA != nullptr) {
            __builtin_prefetch(nextA + k * kGemmRows);
        }
        if (nextB != nullptr) {
            prefetchColumns<2 * kGemmCols>(nextB + k * bStep);
        }
        const __m512 x0 = _mm512_loadu_ps(b0);
        const __m512 x1 = _mm512_loadu_ps(b1);
        __m512 av = _mm512_set1_ps(a[0]);
        c00 = _mm512_fmadd_ps(av, x0, c00);
        c01 = _mm512_fmadd_ps(av, x1, c01);
        av = _mm512_set1_ps(a[1]);
        c10 = _mm512_fmadd_ps(av, x0, c10);
        c11 = _mm512_fmadd_ps(av, x1, c11);
        av = _mm512_set1_ps(a[2]);
        c20 = _mm512_fmadd_ps(av, x0, c20);
        c21 = _mm512_fmadd_ps(av, x1, c21);
        av = _mm512_set1_ps(a[3]);
        c30 = _mm512_fmadd_ps(av, x0, c30);
        c31 = _mm512_fmadd_ps(av, x1, c31);
        av = _mm512_set1_ps(a[4]);
        c40 = _mm512_fmadd_ps(av, x0, c40);
        c41 = _mm512_fmadd_ps(av, x1, c41);
        av = _mm512_set1_ps(a[5]);
        c50 = _mm512_fmadd_ps(av, x0, c50);
        c51 = _mm512_fmadd_ps(av, x1, c51);
        a += kGemmRows;
        b0 += bStep;
        b1 += bStep;
    }
    wideStoreRow(how, tile, ldt, 0, c00, c01);
    wideStoreRow(how, tile, ldt, 1, c10, c11);
    wideStoreRow(how, tile, ldt, 2, c20, c21);
    wideStoreRow(how, tile, ldt, 3, c30, c31);
    wideStoreRow(how, tile, ldt, 4, c40, c41);
    wideStoreRow(how, tile, ldt, 5, c50, c51);
}

/// The 6 x 64 tile of four adjacent strips (16 columns each, row stride bStep): 24 sums, so each
/// broadcast of A feeds four multiply-adds instead of two (a step loads 4 vectors of B and 6
/// values of A for 24 multiply-adds; wideMicroKernel's 2 and 6 for 12). Same multiply-adds in the
/// same order per element and the same epilogue as microKernel: bit-identical results.
__attribute__((target("avx512f"))) void
quadMicroKernel(int64_t depth, const float* a, const float* b0, const float* b1, const float* b2,
                const float* b3, int64_t bStep, float* tile, int64_t ldt, const TileStore& how,
                const float* nextA, const float* nextB) {
    // NOLINTNEXTLINE(*-avoid-c-arrays): every index is a constant once unrolled: registers
    __m512 c[kGemmRows][4] = {};
    prefetchTile<4 * kGemmCols>(how, tile, ldt);
    for (int64_t k = 0; k < depth; ++k) {
        if (nextA != nullptr) {
            __builtin_prefetch(nextA + k * kGemmRows);
        }
        if (nextB != nullptr) {
            prefetchColumns<4 * kGemmCols>(nextB + k * bStep);
        }
        const __m512 x0 = _mm512_loadu_ps(b0);
        const __m512 x1 = _mm512_loadu_ps(b1);
        const __m512 x2 = _mm512_loadu_ps(b2);
        const __m512 x3 = _mm512_loadu_ps(b3);
#pragma GCC unroll 6
        for (int64_t r = 0; r < kGemmRows; ++r) {
            const __m512 av = _mm512_set1_ps(a[r]);
            c[r][0] = _mm512_fmadd_ps(av, x0, c[r][0]);
            c[r][1] = _mm512_fmadd_ps(av, x1, c[r][1]);
            c[r][2] = _mm512_fmadd_ps(av, x2, c[r][2]);
            c[r][3] = _mm512_fmadd_ps(av, x3, c[r][3]);
        }
        a += kGemmRows;
        b0 += bStep;
        b1 += bStep;
        b2 += bStep;
        b3 += bStep;
    }
    TileStore right = how;
    if (right.residual != nullptr) {
        right.residual += 2 * kGemmCols;
    }
#pragma GCC unroll 6
    for (int64_t r = 0; r < kGemmRows; ++r) {
        wideStoreRow(how, tile, ldt, r, c[r][0], c[r][1]);
        wideStoreRow(right, tile + 2 * kGemmCols, ldt, r, c[r][2], c[r][3]);
    }
}

/// The 12 x 32 tile of two panels of A (a0, a1: rows 0-5 and 6-11) against two adjacent strips
/// (b0, b1): 24 sums like quadMicroKernel, but each vector of B feeds twelve multiply-adds instead
/// of six, so a pass streams half the B per multiply-add (what a B from L2 bounds). Tiles of the
/// two panels at tile0 and tile1. Same multiply-adds in the same order per element and the same
/// epilogue as microKernel: bit-identical results. nextA: the next two panels (panel stride
/// a1 - a0), nextB: 32 columns of B at the same row stride, both prefetched (or nullptr).
__attribute__((target("avx512f"))) void
twoPanelMicroKernel(int64_t depth, const float* a0, const float* a1, const float* b0,
                    const float* b1, int64_t bStep, float* tile0, float* tile1, int64_t ldt,
                    const TileStore& how0, const TileStore& how1, const float* nextA,
                    const float* nextB) {
    // NOLINTNEXTLINE(*-avoid-c-arrays): every index is a constant once unrolled: registers
    __m512 c[2 * kGemmRows][2] = {};
    prefetchTile<2 * kGemmCols>(how0, tile0, ldt);
    prefetchTile<2 * kGemmCols>(how1, tile1, ldt);
    const int64_t panelStride = a1 - a0;
    for (int64_t k = 0; k < depth; ++k) {
        if (nextA != nullptr) {
            __builtin_prefetch(nextA + k * kGemmRows);
            __builtin_prefetch(nextA + panelStride + k * kGemmRows);
        }
        if (nextB != nullptr) {
            prefetchColumns<2 * kGemmCols>(nextB + k * bStep);
        }
        const __m512 x0 = _mm512_loadu_ps(b0);
        const __m512 x1 = _mm512_loadu_ps(b1);
#pragma GCC unroll 6
        for (int64_t r = 0; r < kGemmRows; ++r) {
            const __m512 av = _mm512_set1_ps(a0[r]);
            c[r][0] = _mm512_fmadd_ps(av, x0, c[r][0]);
            c[r][1] = _mm512_fmadd_ps(av, x1, c[r][1]);
        }
#pragma GCC unroll 6
        for (int64_t r = 0; r < kGemmRows; ++r) {
            const __m512 av = _mm512_set1_ps(a1[r]);
            c[kGemmRows + r][0] = _mm512_fmadd_ps(av, x0, c[kGemmRows + r][0]);
            c[kGemmRows + r][1] = _mm512_fmadd_ps(av, x1, c[kGemmRows + r][1]);
        }
        a0 += kGemmRows;
        a1 += kGemmRows;
        b0 += bStep;
        b1 += bStep;
    }
#pragma GCC unroll 6
    for (int64_t r = 0; r < kGemmRows; ++r) {
        wideStoreRow(how0, tile0, ldt, r, c[r][0], c[r][1]);
        wideStoreRow(how1, tile1, ldt, r, c[kGemmRows + r][0], c[kGemmRows + r][1]);
    }
}

/// Row `row` of a 6 x 16 tile in one register, stored as microKernel does.
__attribute__((target("avx512f"))) inline void singleStoreRow(const TileStore& how, float* tile,
                                                              int64_t ldt, int64_t row, __m512 v) {
    if (row >= how.rows) {
        return;
    }
    float* dst = tile + row * ldt;
    if (how.accumulate) {
        v = _mm512_add_ps(v, _mm512_loadu_ps(dst));
    }
    if (how.finish) {
        if (how.bias != nullptr) {
            v = _mm512_add_ps(v, _mm512_set1_ps(how.bias[row]));
        }
        if (how.residual != nullptr) {
            v = _mm512_add_ps(v, _mm512_loadu_ps(how.residual + row * ldt));
        }
        v = _mm512_min_ps(_mm512_set1_ps(how.hi), _mm512_max_ps(_mm512_set1_ps(how.lo), v));
    }
    _mm512_storeu_ps(dst, v);
}

/// The tiles of one strip (16 columns) against kPanels panels of A at once (6 kPanels rows;
/// panel q at a + q panelStride, its store by how[q]): the strip the paired kernels leave over
/// (at 7 x 7 pixels, 3 strips in 4) and an edge of 9 to 15 columns. Against one panel a strip
/// has 6 sums, too few chains to hide the multiply-add's latency, and a load of B per 6
/// multiply-adds: 150 GFLOP/s for SqueezeNet's 1000 x 512 classifier weights, against 236 for
/// the 6 x 64 tile; four panels keep 24 sums. Same multiply-adds in the same order per element
/// and the same epilogue as microKernel: bit-identical results.
template <int kPanels>
__attribute__((target("avx512f"))) void
tallMicroKernel(int64_t depth, const float* a, int64_t panelStride, const float* b, int64_t bStep,
                float* tile, int64_t ldt, const TileStore* how, const float* nextA,
                int64_t nextPanels) {
    // NOLINTBEGIN(*-avoid-c-arrays): every index is a constant once unrolled: registers
    __m512 c[kPanels][kGemmRows] = {};
    // A pointer per panel, each A value at a constant offset from one: with offsets from a
    // single pointer GCC ran out of index registers and reloaded them inside the loop.
    const float* panel[kPanels];
    // NOLINTEND(*-avoid-c-arrays)
#pragma GCC unroll 4
    for (int q = 0; q < kPanels; ++q) {
        panel[q] = a + q * panelStride;
        prefetchTile<kGemmCols>(how[q], tile + q * kGemmRows * ldt, ldt);
    }
    for (int64_t k = 0; k < depth; ++k) {
        if (nextA != nullptr) {
            // Each next panel every other step: 48 bytes apart, within a cache line.
            for (int64_t q = k & 1; q < nextPanels; q += 2) {
                __builtin_prefetch(nextA + q * panelStride + k * kGemmRows);
            }
        }
        const __m512 x = _mm512_loadu_ps(b);
#pragma GCC unroll 4
        for (int q = 0; q < kPanels; ++q) {
#pragma GCC unroll 6
            for (int64_t r = 0; r < kGemmRows; ++r) {
                c[q][r] = _mm512_fmadd_ps(_mm512_set1_ps(panel[q][r]), x, c[q][r]);
            }
            panel[q] += kGemmRows;
        }
        b += bStep;
    }
#pragma GCC unroll 4
    for (int q = 0; q < kPanels; ++q) {
#pragma GCC unroll 6
        for (int64_t r = 0; r < kGemmRows; ++r) {
            singleStoreRow(how[q], tile + q * kGemmRows * ldt, ldt, r, c[q][r]);
        }
    }
}

/// Sums of one stream of steps of columnKernel: column j of the tile, row r in lane r. Named
/// members rather than an array, so that they stay in registers.
template <int kCols>
struct ColumnSums {
    __m256 c0 = _mm256_setzero_ps();
    __m256 c1 = _mm256_setzero_ps();
    __m256 c2 = _mm256_setzero_ps();
    __m256 c3 = _mm256_setzero_ps();

    /// One step: the step's 6 rows of A (in lanes 0-5) times its kCols values of B.
    void add(__m256 column, const float* b) {
        c0 = _mm256_fmadd_ps(column, _mm256_broadcast_ss(b), c0);
        if constexpr (kCols > 1) {
            c1 = _mm256_fmadd_ps(column, _mm256_broadcast_ss(b + 1), c1);
        }
        if constexpr (kCols > 2) {
            c2 = _mm256_fmadd_ps(column, _mm256_broadcast_ss(b + 2), c2);
        }
        if constexpr (kCols > 3) {
            c3 = _mm256_fmadd_ps(column, _mm256_broadcast_ss(b + 3), c3);
        }
    }

    void add(const ColumnSums& other) {
        c0 = _mm256_add_ps(c0, other.c0);
        c1 = _mm256_add_ps(c1, other.c1);
        c2 = _mm256_add_ps(c2, other.c2);
        c3 = _mm256_add_ps(c3, other.c3);
    }

    /// Columns [0, kCols) of tile (row stride kGemmCols).
    void store(float* tile) const {
        alignas(32) float lanes[4][8]; // NOLINT(*-avoid-c-arrays)
        _mm256_store_ps(lanes[0], c0);
        _mm256_store_ps(lanes[1], c1);
        _mm256_store_ps(lanes[2], c2);
        _mm256_store_ps(lanes[3], c3);
        for (int64_t r = 0; r < kGemmRows; ++r) {
            for (int j = 0; j < kCols; ++j) {
                tile[r * kGemmCols + j] = lanes[j][r];
            }
        }
    }
};

/// Edge tiles of at most 4 columns: a column at a time, the 6 rows of a packed A step in the lanes
/// of one vector (lanes 6 and 7 read the next step and are dropped), so a step costs kCols
/// multiply-adds instead of the full tile's 12. Two or four streams of interleaved steps hide the
/// multiply-add latency. Writes columns [0, kCols) of tile (6 x 16, row stride kGemmCols).
template <int kCols>
void columnKernel(int64_t depth, const float* a, const float* b, int64_t ldb, float* tile) {
    constexpr bool kFourStreams = kCols <= 2; // 4 x 4 sums would not fit in 16 registers
    ColumnSums<kCols> s0;
    ColumnSums<kCols> s1;
    ColumnSums<kCols> s2;
    ColumnSums<kCols> s3;
    constexpr int64_t kGroup = kFourStreams ? 4 : 2;
    // A full load reads 2 floats past its step, so the last step loads under a mask (the end of
    // A may be the end of the buffer).
    int64_t k = 0;
    for (; k + kGroup < depth; k += kGroup) {
        s0.add(_mm256_loadu_ps(a + k * kGemmRows), b + k * ldb);
        s1.add(_mm256_loadu_ps(a + (k + 1) * kGemmRows), b + (k + 1) * ldb);
        if constexpr (kFourStreams) {
            s2.add(_mm256_loadu_ps(a + (k + 2) * kGemmRows), b + (k + 2) * ldb);
            s3.add(_mm256_loadu_ps(a + (k + 3) * kGemmRows), b + (k + 3) * ldb);
        }
    }
    for (; k + 1 < depth; ++k) {
        s0.add(_mm256_loadu_ps(a + k * kGemmRows), b + k * ldb);
    }
    if (k < depth) {
        const __m256i rows = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
        s0.add(_mm256_maskload_ps(a + k * kGemmRows, rows), b + k * ldb);
    }
    s0.add(s1);
    s2.add(s3);
    s0.add(s2);
    s0.store(tile);
}

/// Sums of one stream of steps of halfKernel: row r of the tile's first 8 columns.
struct HalfTileSums {
    __m256 r0 = _mm256_setzero_ps();
    __m256 r1 = _mm256_setzero_ps();
    __m256 r2 = _mm256_setzero_ps();
    __m256 r3 = _mm256_setzero_ps();
    __m256 r4 = _mm256_setzero_ps();
    __m256 r5 = _mm256_setzero_ps();

    /// One step: its 6 values of A times its first 8 values of B.
    void add(const float* a, const float* b) {
        const __m256 row = _mm256_loadu_ps(b);
        r0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a), row, r0);
        r1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 1), row, r1);
        r2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 2), row, r2);
        r3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 3), row, r3);
        r4 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 4), row, r4);
        r5 = _mm256_fmadd_ps(_mm256_broadcast_ss(a + 5), row, r5);
    }
};

/// Edge tiles of at most 8 columns: the micro-kernel on the strip's first 8 columns only, two
/// streams of steps. Writes columns [0, 8) of tile (6 x 16, row stride kGemmCols).
void halfKernel(int64_t depth, const float* a, const float* b, int64_t ldb, float* tile) {
    HalfTileSums even;
    HalfTileSums odd;
    int64_t k = 0;
    for (; k + 2 <= depth; k += 2) {
        even.add(a + k * kGemmRows, b + k * ldb);
        odd.add(a + (k + 1) * kGemmRows, b + (k + 1) * ldb);
    }
    if (k < depth) {
        even.add(a + k * kGemmRows, b + k * ldb);
    }
    _mm256_storeu_ps(tile, _mm256_add_ps(even.r0, odd.r0));
    _mm256_storeu_ps(tile + kGemmCols, _mm256_add_ps(even.r1, odd.r1));
    _mm256_storeu_ps(tile + 2 * kGemmCols, _mm256_add_ps(even.r2, odd.r2));
    _mm256_storeu_ps(tile + 3 * kGemmCols, _mm256_add_ps(even.r3, odd.r3));
    _mm256_storeu_ps(tile + 4 * kGemmCols, _mm256_add_ps(even.r4, odd.r4));
    _mm256_storeu_ps(tile + 5 * kGemmCols, _mm256_add_ps(even.r5, odd.r5));
}

/// bk[j] in lanes 0-5 and bk[ldb + j] (the next step's) in lanes 6-15.
__attribute__((target("avx512f"))) inline __m512 pairOfSteps(const float* bk, int64_t ldb, int j) {
    constexpr __mmask16 kSecondStep = 0x0FC0;
    return _mm512_mask_broadcastss_ps(_mm512_set1_ps(bk[j]), kSecondStep,
                                      _mm_load_ss(bk + ldb + j));
}

/// Lanes 6-11 of v in lanes 0-5 (the second step of a pair onto the first).
__attribute__((target("avx512f"))) inline __m512 laterStep(__m512 v) {
    const __m512i later =
        _mm512_set_epi32(15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 11, 10, 9, 8, 7, 6);
    constexpr __mmask16 kAll = 0xFFFF; // the masked form: GCC 12 warns inside the unmasked one
    return _mm512_mask_permutexvar_ps(v, kAll, later, v);
}

/// Column j of a tile (at column, row stride kGemmCols) from the sums of tallColumnKernel:
/// (s0 + s1) + (s2 + s3) per row, as columnKernel adds its streams (with two streams, s2 and s3
/// are zero).
__attribute__((target("avx512f"))) inline void storeColumnStreams(__m512 early, __m512 late,
                                                                  float* column) {
    const __m512 sum =
        _mm512_add_ps(_mm512_add_ps(early, laterStep(early)), _mm512_add_ps(late, laterStep(late)));
    alignas(64) float lanes[16]; // NOLINT(*-avoid-c-arrays)
    _mm512_store_ps(lanes, sum);
    for (int64_t r = 0; r < kGemmRows; ++r) {
        column[r * kGemmCols] = lanes[r];
    }
}

/// columnKernel<kCols> of kPanels panels at once (panel q at a + q panelStride, its tile at
/// scratch + q kTile) in AVX-512 registers, bit-identical to it: a vector holds two steps of a
/// panel (lanes 0-5 and 6-11), so one sum holds two of columnKernel's streams, and the panels'
/// sums are independent chains. One panel alone waits on the multiply-add's latency: the single
/// column of a 7 x 7 image (49 columns) took 12 % of a ResNet-50 1x1 convolution's time.
template <int kCols, int kPanels>
__attribute__((target("avx512f"))) void tallColumnKernel(int64_t depth, const float* a,
                                                         int64_t panelStride, const float* b,
                                                         int64_t ldb, float* scratch) {
    constexpr bool kFourStreams = kCols <= 2;
    constexpr int64_t kGroup = kFourStreams ? 4 : 2;
    constexpr __mmask16 kFirstStep = 0x003F;
    // NOLINTBEGIN(*-avoid-c-arrays): every index is a constant once unrolled: registers
    __m512 early[kPanels][kCols] = {}; // streams 0 and 1 (steps k, k + 1 of each group)
    __m512 late[kPanels][kCols] = {};  // streams 2 and 3
    const float* panel[kPanels];
    // NOLINTEND(*-avoid-c-arrays)
#pragma GCC unroll 4
    for (int q = 0; q < kPanels; ++q) {
        panel[q] = a + q * panelStride;
    }
    int64_t k = 0;
    // A plain load of two steps reads 4 floats into a third, inside the depth block here.
    for (; k + kGroup < depth; k += kGroup) {
#pragma GCC unroll 4
        for (int j = 0; j < kCols; ++j) {
            const __m512 first = pairOfSteps(b + k * ldb, ldb, j);
#pragma GCC unroll 4
            for (int q = 0; q < kPanels; ++q) {
                early[q][j] =
                    _mm512_fmadd_ps(_mm512_loadu_ps(panel[q] + k * kGemmRows), first, early[q][j]);
            }
            if constexpr (kFourStreams) {
                const __m512 second = pairOfSteps(b + (k + 2) * ldb, ldb, j);
#pragma GCC unroll 4
                for (int q = 0; q < kPanels; ++q) {
                    late[q][j] = _mm512_fmadd_ps(_mm512_loadu_ps(panel[q] + (k + 2) * kGemmRows),
                                                 second, late[q][j]);
                }
            }
        }
    }
    // The last steps one at a time into stream 0, as columnKernel does.
    for (; k < depth; ++k) {
#pragma GCC unroll 4
        for (int j = 0; j < kCols; ++j) {
            const __m512 bj = _mm512_set1_ps(b[k * ldb + j]);
#pragma GCC unroll 4
            for (int q = 0; q < kPanels; ++q) {
                early[q][j] = _mm512_mask3_fmadd_ps(
                    _mm512_maskz_loadu_ps(kFirstStep, panel[q] + k * kGemmRows), bj, early[q][j],
                    kFirstStep);
            }
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < kPanels; ++q) {
#pragma GCC unroll 4
        for (int j = 0; j < kCols; ++j) {
            storeColumnStreams(early[q][j], late[q][j], scratch + q * kTile + j);
        }
    }
}

template <int kCols>
void tallColumnsOf(int64_t panels, int64_t depth, const float* a, int64_t panelStride,
                   const float* b, int64_t ldb, float* scratch) {
    switch (panels) {
    case 1:
        tallColumnKernel<kCols, 1>(depth, a, panelStride, b, ldb, scratch);
        return;
    case 2:
        tallColumnKernel<kCols, 2>(depth, a, panelStride, b, ldb, scratch);
        return;
    case 3:
        tallColumnKernel<kCols, 3>(depth, a, panelStride, b, ldb, scratch);
        return;
    default:
        tallColumnKernel<kCols, kTallPanels>(depth, a, panelStride, b, ldb, scratch);
        return;
    }
}

/// Tiles (scratch + q kTile, 6 x 16) of an edge of `cols` (1 to 4) columns against `panels`
/// panels of A, by tallColumnKernel.
void tallColumnEdge(int64_t cols, int64_t panels, int64_t depth, const float* a,
                    int64_t panelStride, const float* b, int64_t ldb, float* scratch) {
    switch (cols) {
    case 1:
        tallColumnsOf<1>(panels, depth, a, panelStride, b, ldb, scratch);
        return;
    case 2:
        tallColumnsOf<2>(panels, depth, a, panelStride, b, ldb, scratch);
        return;
    case 3:
        tallColumnsOf<3>(panels, depth, a, panelStride, b, ldb, scratch);
        return;
    default:
        tallColumnsOf<4>(panels, depth, a, panelStride, b, ldb, scratch);
        return;
    }
}

/// scratch (6 x 16) = a b for an edge tile of `cols` columns, with the narrowest kernel that
/// covers them (only the first `cols` columns of scratch are meaningful). b has row stride ldb:
/// kGemmCols for a strip, less for an edge copied out of its strip (up to 8 columns).
void edgeKernel(int64_t depth, const float* a, const float* b, int64_t ldb, int64_t cols,
                float* scratch) {
    switch (cols) {
    case 1:
        columnKernel<1>(depth, a, b, ldb, scratch);
        return;
    case 2:
        columnKernel<2>(depth, a, b, ldb, scratch);
        return;
    case 3:
        columnKernel<3>(depth, a, b, ldb, scratch);
        return;
    case 4:
        columnKernel<4>(depth, a, b, ldb, scratch);
        return;
    default:
        if (cols <= 8) {
            halfKernel(depth, a, b, ldb, scratch);
            return;
        }
        microKernel(depth, a, b, ldb, scratch, kGemmCols, TileStore{}, nullptr);
    }
}

/// Edge strips of up to this many columns are copied out of their strip (see columnBlockProduct):
/// up to 8 always, 9 to 15 from a B read in place (its rows are not a strip's 16 columns apart).
constexpr int64_t kCompactEdgeCols = kGemmCols - 1;
#else
/// Portable micro-kernel: the same tile product in plain loops.
inline void microKernel(int64_t depth, const float* a, const float* b, int64_t bStep, float* tile,
                        int64_t ldt, const TileStore& how, const float* /*nextA*/) {
    float acc[kTile] = {};
    for (int64_t k = 0; k < depth; ++k) {
        for (int64_t r = 0; r < kGemmRows; ++r) {
            for (int64_t c = 0; c < kGemmCols; ++c) {
                acc[r * kGemmCols + c] += a[k * kGemmRows + r] * b[k * bStep + c];
            }
        }
    }
    for (int64_t r = 0; r < how.rows; ++r) {
        for (int64_t c = 0; c < kGemmCols; ++c) {
            float& dst = tile[r * ldt + c];
            float v = how.accumulate ? dst + acc[r * kGemmCols + c] : acc[r * kGemmCols + c];
            if (how.finish) {
                v += (how.bias != nullptr ? how.bias[r] : 0.0F) +
                     (how.residual != nullptr ? how.residual[r * ldt + c] : 0.0F);
                v = std::min(std::max(v, how.lo), how.hi);
            }
            dst = v;
        }
    }
}

/// scratch (6 x 16) = a b for an edge tile (the portable build runs the full tile, on strips).
void edgeKernel(int64_t depth, const float* a, const float* b, int64_t ldb, int64_t /*cols*/,
                float* scratch) {
    microKernel(depth, a, b, ldb, scratch, kGemmCols, TileStore{}, nullptr);
}

constexpr int64_t kCompactEdgeCols = 0;

void tallColumnEdge(int64_t cols, int64_t panels, int64_t depth, const float* a,
                    int64_t panelStride, const float* b, int64_t ldb, float* scratch) {
    for (int64_t q = 0; q < panels; ++q) {
        edgeKernel(depth, a + q * panelStride, b, ldb, cols, scratch + q * kTile);
    }
}

std::atomic<bool>& wideKernelSwitch() {
    static std::atomic<bool> enabled{false}; // no AVX-512 kernel in the portable build
    return enabled;
}

void wideMicroKernel(int64_t depth, const float* a, const float* b0, const float* b1, int64_t bStep,
                     float* tile, int64_t ldt, const TileStore& how, const float* nextA,
                     const float* /*nextB*/) {
    microKernel(depth, a, b0, bStep, tile, ldt, how, nextA);
    TileStore right = how;
    right.residual = how.residual != nullptr ? how.residual + kGemmCols : nullptr;
    microKernel(depth, a, b1, bStep, tile + kGemmCols, ldt, right, nullptr);
}

template <int kPanels>
void tallMicroKernel(int64_t depth, const float* a, int64_t panelStride, const float* b,
                     int64_t bStep, float* tile, int64_t ldt, const TileStore* how,
                     const float* /*nextA*/, int64_t /*nextPanels*/) {
    for (int q = 0; q < kPanels; ++q) {
        microKernel(depth, a + q * panelStride, b, bStep, tile + q * kGemmRows * ldt, ldt, how[q],
                    nullptr);
    }
}

void quadMicroKernel(int64_t depth, const float* a, const float* b0, const float* b1,
                     const float* b2, const float* b3, int64_t bStep, float* tile, int64_t ldt,
                     const TileStore& how, const float* nextA, const float* /*nextB*/) {
    wideMicroKernel(depth, a, b0, b1, bStep, tile, ldt, how, nextA, nullptr);
    TileStore right = how;
    right.residual = how.residual != nullptr ? how.residual + 2 * kGemmCols : nullptr;
    wideMicroKernel(depth, a, b2, b3, bStep, tile + 2 * kGemmCols, ldt, right, nullptr, nullptr);
}

void twoPanelMicroKernel(int64_t depth, const float* a0, const float* a1, const float* b0,
                         const float* b1, int64_t bStep, float* tile0, float* tile1, int64_t ldt,
                         const TileStore& how0, const TileStore& how1, const float* nextA,
                         const float* /*nextB*/) {
    wideMicroKernel(depth, a0, b0, b1, bStep, tile0, ldt, how0, nextA, nullptr);
    wideMicroKernel(depth, a1, b0, b1, bStep, tile1, ldt, how1, nullptr, nullptr);
}
#endif

/// The A panels of a tall tile: `panels` of them from `a` (panel stride panelStride), the
/// first at row `row` of C.
struct PanelGroup {
    const float* a;
    int64_t panelStride;
    int64_t panels;
    int64_t row;
};

/// The A panels a tall tile prefetches while it runs: `panels` from `a` (none for nullptr).
struct Prefetch {
    const float* a = nullptr;
    int64_t panels = 0;
};

/// The 6 x 16 output tiles of C for one depth block: full tiles run in place, edge tiles
/// through a scratch tile; the last depth block applies the epilogue.
struct TileJob {
    const GemmOutput& out;
    const ConvEpilogue& epilogue;
    int64_t m;
    int64_t n;
    bool first;
    bool last;
    const float* edge = nullptr; ///< the edge strip copied out (row stride edgeStride), or nullptr
    int64_t edgeStride = kGemmCols;
    int64_t bStep = kGemmCols; ///< floats from one row of a B strip to the next
    bool wide = false;         ///< the AVX-512 kernels: full strips paired, the odd one tall
    /// The pair of strips the next pass of the deep order reads (in place), prefetched by the
    /// first panel's tile of this pass; nullptr for none.
    const float* nextB = nullptr;
    /// The shallow order over B in place: the first panel's tiles prefetch the tile after them.
    bool aheadB = false;

    /// `strips` strips from column col0 (b, strip stride `stripStride`) against every A panel of
    /// the depth block at `a` (panel stride kGemmRows k), kTallPanels panels at a time. With
    /// the AVX-512 kernels the panels take an even number of full strips in 12 x 32 tiles, two
    /// panels and two strips at a time (a group's odd panel four or two strips at a time), and
    /// the group of panels the odd strip and an edge of more than 8 columns (tall tiles); else
    /// each panel takes every strip. With bringA the first tile of each panel (or pair of
    /// panels) prefetches the panels after it.
    void runRows(int64_t depth, const float* a, int64_t k, const float* b, int64_t stripStride,
                 int64_t strips, int64_t col0, bool bringA) const {
        const int64_t panelStride = kGemmRows * k;
        const int64_t full = std::min(strips, (n - col0) / kGemmCols);
        const int64_t edgeCol = col0 + full * kGemmCols;
        const EdgeTiles edgeTiles = edgeTilesFor(full < strips ? n - edgeCol : 0);
        const int64_t paired = wide ? full - full % 2 : full;
        for (int64_t row = 0; row < m; row += kTallPanels * kGemmRows) {
            const int64_t panels = std::min(kTallPanels, (m - row + kGemmRows - 1) / kGemmRows);
            const float* group = a + row * k;
            const PanelGroup tiles{group, panelStride, panels, row};
            runPanels(depth, tiles, bringA, b, stripStride, paired, full, col0, edgeTiles);
            // Without paired tiles, nothing else brings the next group's panels in.
            const int64_t nextRow = row + panels * kGemmRows;
            const Prefetch next{bringA && paired == 0 && nextRow < m ? group + panels * panelStride
                                                                     : nullptr,
                                std::min(kTallPanels, (m - nextRow + kGemmRows - 1) / kGemmRows)};
            if (paired < full) {
                runTall(depth, tiles, b + paired * stripStride, col0 + paired * kGemmCols, next);
            }
            if (edgeTiles == EdgeTiles::tall) {
                runTall(depth, tiles, b + full * stripStride, edgeCol,
                        paired < full ? Prefetch{} : next);
            } else if (edgeTiles == EdgeTiles::tallColumns) {
                runTallColumns(depth, tiles, b + full * stripStride, edgeCol);
            }
        }
    }

    /// How an edge of `cols` columns runs: per panel (edgeKernel), or with the AVX-512 kernels
    /// for a group of panels, by tallMicroKernel (more than 8 columns) or tallColumnKernel (up to
    /// 4).
    enum class EdgeTiles { none, perPanel, tall, tallColumns };

    EdgeTiles edgeTilesFor(int64_t cols) const {
        if (cols == 0) {
            return EdgeTiles::none;
        }
        if (wide && cols > 8) {
            return EdgeTiles::tall;
        }
        return wide && cols <= 4 ? EdgeTiles::tallColumns : EdgeTiles::perPanel;
    }

    /// The `paired` full strips from col0 (and edges run per panel) against the panels of
    /// `tiles`: two panels at a time with the AVX-512 kernels (12 x 32 tiles), a lone one on its
    /// own. With bringA each prefetches the panels after it.
    void runPanels(int64_t depth, const PanelGroup& tiles, bool bringA, const float* b,
                   int64_t stripStride, int64_t paired, int64_t full, int64_t col0,
                   EdgeTiles edgeTiles) const {
        const auto [group, panelStride, panels, row] = tiles;
        const float* edgeB = b + full * stripStride;
        const int64_t edgeCol = col0 + full * kGemmCols;
        for (int64_t q = 0; q < panels;) {
            const int64_t panelRow = row + q * kGemmRows;
            const float* panel = group + q * panelStride;
            const int64_t take = wide && paired >= 2 && q + 1 < panels ? 2 : 1;
            const float* nextA =
                bringA && panelRow + take * kGemmRows < m ? panel + take * panelStride : nullptr;
            if (take == 2) {
                runPanelPair(depth, panel, panelStride, nextA, b, stripStride, paired, panelRow,
                             col0);
            } else {
                runPanel(depth, panel, nextA, b, stripStride, paired, panelRow, col0);
            }
            for (int64_t t = 0; edgeTiles == EdgeTiles::perPanel && t < take; ++t) {
                runEdge(depth, panel + t * panelStride, edgeB, panelRow + t * kGemmRows, edgeCol);
            }
            q += take;
        }
    }

    /// The tiles of the A panel at `row` over `strips` full strips (strip stride `stripStride`)
    /// from column col0, in place. The first tile prefetches nextA, the A block that runs next
    /// (or nullptr).
    void runPanel(int64_t depth, const float* a, const float* nextA, const float* b,
                  int64_t stripStride, int64_t strips, int64_t row, int64_t col0) const {
        TileStore how = storeFor(row);
        float* c = out.c + row * out.ldc;
        for (int64_t s = 0; s < strips;) {
            const int64_t col = col0 + s * kGemmCols;
            if (last && out.residual != nullptr) {
                how.residual = out.residual + row * out.ldc + col;
            }
            s += runFullTile(depth, a, s == 0 ? nextA : nullptr, row, s, b, stripStride, strips,
                             c + col, how);
        }
    }

    /// The tiles of the two A panels at `row` and `row + 6` (a, a + panelStride) over `strips`
    /// full strips, an even number, in 12 x 32 tiles; the first prefetches nextA (two panels).
    void runPanelPair(int64_t depth, const float* a, int64_t panelStride, const float* nextA,
                      const float* b, int64_t stripStride, int64_t strips, int64_t row,
                      int64_t col0) const {
        TileStore how0 = storeFor(row);
        TileStore how1 = storeFor(row + kGemmRows);
        float* c0 = out.c + row * out.ldc;
        float* c1 = c0 + kGemmRows * out.ldc;
        for (int64_t s = 0; s + 2 <= strips; s += 2) {
            const int64_t col = col0 + s * kGemmCols;
            if (last && out.residual != nullptr) {
                how0.residual = out.residual + row * out.ldc + col;
                how1.residual = how0.residual + kGemmRows * out.ldc;
            }
            twoPanelMicroKernel(depth, a, a + panelStride, b + s * stripStride,
                                b + (s + 1) * stripStride, bStep, c0 + col, c1 + col, out.ldc, how0,
                                how1, s == 0 ? nextA : nullptr,
                                prefetchB(row, s, 2, strips, b, stripStride));
        }
    }

    /// How the tiles of the panel at `row` are stored (the residual left to the caller).
    TileStore storeFor(int64_t row) const {
        TileStore how{
            !first, last, nullptr, nullptr, epilogue.lo, epilogue.hi, std::min(kGemmRows, m - row)};
        if (last && epilogue.bias != nullptr) {
            how.bias = epilogue.bias + out.channel0 + row;
        }
        return how;
    }

    /// What of B the tile of `width` strips from strip s (of `strips` at b) of the panel at `row`
    /// prefetches: only the first panel's tiles do, in the shallow order the tile after theirs
    /// when one as wide follows (aheadB), in the deep order the next pass's pair (nextB).
    const float* prefetchB(int64_t row, int64_t s, int64_t width, int64_t strips, const float* b,
                           int64_t stripStride) const {
        if (row != 0) {
            return nullptr;
        }
        if (aheadB) {
            return s + 2 * width <= strips ? b + (s + width) * stripStride : nullptr;
        }
        return s == 0 ? nextB : nullptr;
    }

    /// The tile from strip s of the `strips` full strips at b (the panel at `row`): four or two
    /// strips at once through the AVX-512 kernels (four only from kQuadMinDepth steps; runRows
    /// hands them an even count), else one. Returns how many strips it took. The tile prefetches
    /// nextA and prefetchB's part of B.
    int64_t runFullTile(int64_t depth, const float* a, const float* nextA, int64_t row, int64_t s,
                        const float* b, int64_t stripStride, int64_t strips, float* tile,
                        const TileStore& how) const {
        const int64_t whole = strips - s;
        const float* at = b + s * stripStride;
        if (wide && depth >= kQuadMinDepth && whole >= 4) {
            quadMicroKernel(depth, a, at, at + stripStride, at + 2 * stripStride,
                            at + 3 * stripStride, bStep, tile, out.ldc, how, nextA,
                            prefetchB(row, s, 4, strips, b, stripStride));
            return 4;
        }
        if (wide && whole >= 2) {
            wideMicroKernel(depth, a, at, at + stripStride, bStep, tile, out.ldc, how, nextA,
                            prefetchB(row, s, 2, strips, b, stripStride));
            return 2;
        }
        microKernel(depth, a, at, bStep, tile, out.ldc, how, nextA);
        return 1;
    }

    /// The strip at b from column col, full or an edge (then the copied one where there is one),
    /// against `panels` panels of A from `row` (at a, panel stride panelStride) in one tall tile:
    /// in place, or through a scratch tile for an edge.
    void runTall(int64_t depth, const PanelGroup& group, const float* b, int64_t col,
                 const Prefetch& next) const {
        const auto [a, panelStride, panels, row] = group;
        std::array<TileStore, kTallPanels> how{};
        float scratch[kTallPanels * kTile];
        const bool isEdge = n - col < kGemmCols;
        float* tile = scratch;
        int64_t ldt = kGemmCols;
        const float* src = b;
        int64_t step = bStep;
        if (isEdge) {
            // Scratch rows past m are computed from A's zero padding and dropped.
            if (edge != nullptr) {
                src = edge;
                step = edgeStride;
            }
        } else {
            tile = out.c + row * out.ldc + col;
            ldt = out.ldc;
            for (int64_t q = 0; q < panels; ++q) {
                const int64_t panelRow = row + q * kGemmRows;
                how[static_cast<size_t>(q)] = storeFor(panelRow);
                if (last && out.residual != nullptr) {
                    how[static_cast<size_t>(q)].residual = out.residual + panelRow * out.ldc + col;
                }
            }
        }
        switch (panels) {
        case 1:
            tallMicroKernel<1>(depth, a, panelStride, src, step, tile, ldt, how.data(), next.a,
                               next.panels);
            break;
        case 2:
            tallMicroKernel<2>(depth, a, panelStride, src, step, tile, ldt, how.data(), next.a,
                               next.panels);
            break;
        case 3:
            tallMicroKernel<3>(depth, a, panelStride, src, step, tile, ldt, how.data(), next.a,
                               next.panels);
            break;
        default:
            tallMicroKernel<kTallPanels>(depth, a, panelStride, src, step, tile, ldt, how.data(),
                                         next.a, next.panels);
            break;
        }
        if (isEdge) {
            for (int64_t q = 0; q < panels; ++q) {
                finishEdge(scratch + q * kTile, row + q * kGemmRows, col);
            }
        }
    }

    /// The edge of at most 4 columns at b (or the copied one) from column col against `panels`
    /// panels of A from `row` at once.
    void runTallColumns(int64_t depth, const PanelGroup& group, const float* b, int64_t col) const {
        const auto [a, panelStride, panels, row] = group;
        float scratch[kTallPanels * kTile];
        tallColumnEdge(n - col, panels, depth, a, panelStride, edge != nullptr ? edge : b,
                       edge != nullptr ? edgeStride : bStep, scratch);
        for (int64_t q = 0; q < panels; ++q) {
            finishEdge(scratch + q * kTile, row + q * kGemmRows, col);
        }
    }

    void runEdge(int64_t depth, const float* a, const float* b, int64_t row, int64_t col) const {
        float scratch[kTile];
        if (edge != nullptr) {
            edgeKernel(depth, a, edge, edgeStride, n - col, scratch);
        } else {
            edgeKernel(depth, a, b, bStep, n - col, scratch);
        }
        finishEdge(scratch, row, col);
    }

    /// Columns [col, n) of the panel at `row` from scratch (6 x 16): stored, or added to C after
    /// the first depth block; the epilogue after the last.
    void finishEdge(const float* scratch, int64_t row, int64_t col) const {
        const int64_t rows = std::min(kGemmRows, m - row);
        const int64_t cols = n - col;
        float* c = out.c + row * out.ldc + col;
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t j = 0; j < cols; ++j) {
                float& dst = c[r * out.ldc + j];
                dst = first ? scratch[r * kGemmCols + j] : dst + scratch[r * kGemmCols + j];
            }
        }
        if (last) {
            const float* residual =
                out.residual != nullptr ? out.residual + row * out.ldc : nullptr;
            applyEpilogue(epilogue, out.channel0 + row, rows, out.ldc, col, col + cols,
                          out.c + row * out.ldc, residual);
        }
    }
};

/// Columns per block: within kMaxColumnBlock (a depth block of packed B, kDepthBlock x columns,
/// stays in L2 while every row block of A passes over it), split evenly into whole strips, and
/// as many blocks as threads or a multiple of them (each thread runs whole blocks: a 56 x 56
/// image made seven, four on one thread and three on the other).
int64_t columnBlock(int64_t n) {
    const int64_t threads = numThreads();
    const int64_t parts =
        (std::max<int64_t>(threads, (n + kMaxColumnBlock - 1) / kMaxColumnBlock) + threads - 1) /
        threads * threads;
    const int64_t even = (n + parts - 1) / parts;
    return std::max(kGemmCols, ((even + kGemmCols - 1) / kGemmCols) * kGemmCols);
}

/// This thread's buffer for `columns` columns of packed B, k deep. Reused across calls: packed B
/// is the only per-call scratch, and fresh pages would cost page faults on every convolution.
float* stripBuffer(int64_t k, int64_t columns) {
    thread_local ScratchFloats strips;
    return strips.get(static_cast<size_t>(k * ((columns + kGemmCols - 1) / kGemmCols) * kGemmCols));
}

/// The first `columns` columns of `depth` rows of a strip (row stride rowStep), at row stride
/// `outStride` (>= columns; the columns between stay as they are): nothing past the `columns`
/// is read, since an in-place B ends there.
void copyColumns(const float* strip, int64_t rowStep, int64_t depth, int64_t columns,
                 int64_t outStride, float* out) {
    for (int64_t kk = 0; kk < depth; ++kk) {
        std::copy_n(strip + kk * rowStep, columns, out + kk * outStride);
    }
}

/// Where the strips of B lie: row k of strip s at b + s stripStep + k rowStep (packed strips:
/// rowStep kGemmCols, stripStep k kGemmCols; a row-major matrix: rowStep ldb, stripStep kGemmCols).
struct StripLayout {
    int64_t rowStep;
    int64_t stripStep;
};

/// The epilogue's tail (if any) over columns [c0, c1) of `rows` rows of C: in one run when they
/// are whole rows, which lie back to back.
void tailOverColumns(const ConvEpilogue& epilogue, const GemmOutput& out, int64_t rows, int64_t c0,
                     int64_t c1) {
    if (!hasTail(epilogue) || c1 <= c0) {
        return;
    }
    if (c0 == 0 && c1 == out.ldc) {
        applyFusedTailHere(*epilogue.tail, out.c, rows * out.ldc);
        return;
    }
    for (int64_t r = 0; r < rows; ++r) {
        applyFusedTailHere(*epilogue.tail, out.c + r * out.ldc + c0, c1 - c0);
    }
}

/// All tiles of columns [j0, j0 + count) once their B strips are in place, then the tail over
/// columns [j0, tailTo) (tailTo -1: the same columns; j0: none, the caller runs it), so that a
/// narrow edge computed first joins the block before it instead of taking the tail in runs of a
/// few values per row.
void columnBlockProduct(int64_t m, int64_t k, const float* packedA, const float* strips,
                        const StripLayout& layout, int64_t j0, int64_t count, const GemmOutput& out,
                        const ConvEpilogue& epilogue, int64_t n, int64_t tailTo = -1) {
    const int64_t stripCount = (count + kGemmCols - 1) / kGemmCols;
    // Equal depth blocks: a short last block would reload and store C for little work.
    const int64_t blocks = (k + kDepthBlock - 1) / kDepthBlock;
    const int64_t step = (k + blocks - 1) / blocks;
    // A narrow last strip, copied out per depth block: every panel reads it, and each of its rows
    // is a cache line for 1 to 8 values (the bandwidth, not the arithmetic, bounded its kernel).
    // Wider edges of a B in place are copied too, at a strip's row stride, for the 16-column
    // kernel (packed B already has that stride).
    const int64_t edgeCols = j0 + count == n ? count % kGemmCols : 0;
    const int64_t edgeStride = edgeCols <= 4 ? edgeCols : (edgeCols <= 8 ? 8 : kGemmCols);
    const bool copyEdge = edgeCols > 0 && edgeCols <= kCompactEdgeCols &&
                          (edgeCols <= 8 || layout.rowStep != kGemmCols);
    // Zeroed where used (the columns past the edge's stay 0), not per call: Winograd calls this
    // once per position.
    std::array<float, kDepthBlock*(kCompactEdgeCols > 0 ? kGemmCols : 0)> edge;
    if (copyEdge) {
        std::fill_n(edge.begin(), step * edgeStride, 0.0F);
    }
    const bool wide = wideKernelSwitch().load(std::memory_order_relaxed);
    // Strips per pass of the deep order: a pair when the wide kernel takes two at once.
    const int64_t stripsPerPass = wide ? 2 : 1;
    for (int64_t k0 = 0; k0 < k; k0 += step) {
        const int64_t depth = std::min(step, k - k0);
        TileJob job{out, epilogue, m, n, k0 == 0 && !out.accumulate, k0 + depth == k};
        job.bStep = layout.rowStep;
        job.wide = wide;
        const float* b = strips + k0 * layout.rowStep;
        const int64_t stripStride = layout.stripStep;
        if (copyEdge) {
            copyColumns(b + (stripCount - 1) * stripStride, layout.rowStep, depth, edgeCols,
                        edgeStride, edge.data());
            job.edge = edge.data();
            job.edgeStride = edgeStride;
        }
        if (depth * count * static_cast<int64_t>(sizeof(float)) <= kPanelOuterBytes) {
            // Shallow: one A panel (L1) against every strip of the block (L2); the tiles of a
            // panel run along the same rows of C, so its stores stream into few cache lines.
            // B in place is first read by the first panel, a row of each strip per step, rows
            // apart by ldb: its tiles prefetch the tile after them (ResNet-50's 64 -> 64 1x1
            // convolutions at batch 8: 1.05 -> 0.94 ms).
            job.aheadB = wide && layout.rowStep != kGemmCols;
            job.runRows(depth, packedA + k0 * kGemmRows, k, b, stripStride, stripCount, j0, true);
            continue;
        }
        // Deep: one B strip (L1; a pair for the wide kernel) against every A panel (L2), as in
        // BLIS. A pair read in place is a row of 128 bytes every ldb floats: rows on pages of
        // their own (a 56 x 56 plane's), which the hardware prefetchers do not follow, so the
        // first panel of each pass fetched every row from L3 on demand (ResNet-50's 256 -> 64
        // 1x1 convolutions at batch 8: 5.6 -> 3.8 ms with the next pair prefetched meanwhile).
        for (int64_t s = 0; s < stripCount; s += stripsPerPass) {
            const bool prefetchNext =
                wide && layout.rowStep != kGemmCols && s + 2 * stripsPerPass <= stripCount;
            job.nextB = prefetchNext ? b + (s + stripsPerPass) * stripStride : nullptr;
            job.runRows(depth, packedA + k0 * kGemmRows, k, b + s * stripStride, stripStride,
                        std::min(stripsPerPass, stripCount - s), j0 + s * kGemmCols, s == 0);
        }
    }
    // The block of C is final and still in L2 (kMaxColumnBlock): its tail now rather than in a
    // pass over the whole output from memory.
    tailOverColumns(epilogue, out, m, j0, tailTo < 0 ? j0 + count : tailTo);
}

} // namespace

bool setWideGemmKernel([[maybe_unused]] bool enabled) {
    std::atomic<bool>& current = wideKernelSwitch();
    const bool before = current.load();
#if defined(__AVX2__) && defined(__FMA__)
    current.store(enabled && __builtin_cpu_supports("avx512f") != 0);
#else
    current.store(false);
#endif
    return before;
}

bool wideGemmKernelActive() {
    return wideKernelSwitch().load();
}

int64_t packedWeightsSize(int64_t m, int64_t k) {
    return ((m + kGemmRows - 1) / kGemmRows) * kGemmRows * k;
}

namespace {

/// Steps [k0, k) of the panel of `rows` rows of A at a (row stride lda), one step at a time.
void packPanelSteps(const float* a, int64_t rows, int64_t k0, int64_t k, int64_t lda,
                    float* panel) {
    for (int64_t kk = k0; kk < k; ++kk) {
        for (int64_t r = 0; r < kGemmRows; ++r) {
            panel[kk * kGemmRows + r] = r < rows ? a[r * lda + kk] : 0.0F;
        }
    }
}

#if defined(__AVX2__)
/// A full panel (kGemmRows rows of A at a, row stride lda), 8 steps at a time: the 6 x 8 block
/// transposed in registers (two zero rows make it 8 x 8), each step's 6 values stored as 4 + 2.
void packFullPanel(const float* a, int64_t k, int64_t lda, float* panel) {
    static_assert(kGemmRows == 6);
    int64_t kk = 0;
    for (; kk + 8 <= k; kk += 8) {
        Vectors8 rows{}; // rows 6 and 7 stay zero
        for (int64_t r = 0; r < kGemmRows; ++r) {
            rows.v[r] = _mm256_loadu_ps(a + r * lda + kk);
        }
        const Vectors8 steps = transposeVectors8x8(rows);
        for (int64_t j = 0; j < 8; ++j) {
            float* dst = panel + (kk + j) * kGemmRows;
            _mm_storeu_ps(dst, _mm256_castps256_ps128(steps.v[j]));
            _mm_storel_pi(reinterpret_cast<__m64*>(dst + 4), _mm256_extractf128_ps(steps.v[j], 1));
        }
    }
    packPanelSteps(a, kGemmRows, kk, k, lda, panel);
}
#else
void packFullPanel(const float* a, int64_t k, int64_t lda, float* panel) {
    packPanelSteps(a, kGemmRows, 0, k, lda, panel);
}
#endif

} // namespace

// Panels split over the threads once there are some 16 K floats to move: a MatMul packs its
// activations per call, ahead of a product the threads share (tiny_bert's 256 x 128 inputs).
void packWeights(const float* a, int64_t m, int64_t k, int64_t lda, float* packed) {
    const int64_t panels = (m + kGemmRows - 1) / kGemmRows;
    const int64_t minPanels =
        std::max<int64_t>(1, (int64_t{16} << 10) / std::max<int64_t>(1, k * kGemmRows));
    parallelFor(panels, minPanels, [&](int64_t begin, int64_t end) {
        for (int64_t q = begin; q < end; ++q) {
            const int64_t row0 = q * kGemmRows;
            const float* rows = a + row0 * lda;
            float* panel = packed + row0 * k;
            if (m - row0 >= kGemmRows) {
                packFullPanel(rows, k, lda, panel);
            } else {
                packPanelSteps(rows, m - row0, 0, k, lda, panel);
            }
        }
    });
}

int64_t packedGroupedWeightsSize(int64_t filters, int64_t depth, int64_t group) {
    return packedWeightsSize(filters / group, depth) * group;
}

void packGroupedWeights(const float* w, int64_t filters, int64_t depth, int64_t group,
                        float* packed) {
    const int64_t rows = filters / group;
    const int64_t panelSize = packedWeightsSize(rows, depth);
    for (int64_t grp = 0; grp < group; ++grp) {
        packWeights(w + grp * rows * depth, rows, depth, depth, packed + grp * panelSize);
    }
}

void packRowMajorStrips(const float* b, int64_t ldb, int64_t k, int64_t n, float* strips) {
    for (int64_t s = 0; s * kGemmCols < n; ++s) {
        float* strip = strips + s * k * kGemmCols;
        const float* src = b + s * kGemmCols;
        const int64_t width = std::min(kGemmCols, n - s * kGemmCols);
        if (width == kGemmCols) {
            // A fixed-size copy compiles to two vector moves; copy_n called memmove per row.
            for (int64_t kk = 0; kk < k; ++kk) {
                std::memcpy(strip + kk * kGemmCols, src + kk * ldb, sizeof(float) * kGemmCols);
            }
            continue;
        }
        for (int64_t kk = 0; kk < k; ++kk) {
            std::copy_n(src + kk * ldb, width, strip + kk * kGemmCols);
            std::fill_n(strip + kk * kGemmCols + width, kGemmCols - width, 0.0F);
        }
    }
}

namespace {

/// B strips for columns [j0, j0 + count): packed into `scratch` (room for them) and returned, or
/// a pointer into strips packed ahead of time.
using StripSource = std::function<const float*(int64_t j0, int64_t count, float* scratch)>;

/// packedGemm over any StripSource; `prepacked` says the source packs nothing (no scratch), and
/// then a product too small to pay for waking a pool thread (a transformer's projection at batch
/// 1) runs on the caller's. Convolutions split whatever their size: at two threads and batch 1
/// squeezenet1_1 and mobilenet_v2 were no faster with the same threshold.
/// `out` from row `row0` on: where a thread's share of A's rows writes.
GemmOutput rowsFrom(const GemmOutput& out, int64_t row0) {
    GemmOutput rows = out;
    rows.c += row0 * out.ldc;
    rows.residual = out.residual != nullptr ? out.residual + row0 * out.ldc : nullptr;
    rows.channel0 += row0;
    return rows;
}

void productOverStrips(int64_t m, int64_t n, int64_t k, const float* packedA,
                       const StripSource& stripsFor, bool prepacked, const GemmOutput& out,
                       const ConvEpilogue& epilogue) {
    const bool split = !prepacked || m * n * k >= 2 * kMinChunkWork;
    const StripLayout layout{kGemmCols, k * kGemmCols};
    if (split && numThreads() > 1 && n < kRowSplitColumns && m > kGemmRows) {
        // Few columns: split the rows of A instead, so that A is read once and every thread
        // gets as many tiles; B is packed once, the threads taking strips.
        const float* strips = nullptr;
        if (prepacked) {
            strips = stripsFor(0, n, nullptr);
        } else {
            float* buffer = stripBuffer(k, n);
            parallelFor((n + kGemmCols - 1) / kGemmCols, 1, [&](int64_t begin, int64_t end) {
                stripsFor(begin * kGemmCols, std::min(n, end * kGemmCols) - begin * kGemmCols,
                          buffer + begin * k * kGemmCols);
            });
            strips = buffer;
        }
        parallelFor((m + kGemmRows - 1) / kGemmRows, 1, [&](int64_t begin, int64_t end) {
            const int64_t row0 = begin * kGemmRows;
            const GemmOutput rows = rowsFrom(out, row0);
            columnBlockProduct(std::min(m, end * kGemmRows) - row0, k, packedA + row0 * k, strips,
                               layout, 0, n, rows, epilogue, n);
        });
        return;
    }
    const int64_t block = columnBlock(n);
    const int64_t blocks = (n + block - 1) / block;
    parallelFor(blocks, split ? 1 : blocks, [&](int64_t begin, int64_t end) {
        float* scratch = prepacked ? nullptr : stripBuffer(k, block);
        for (int64_t blockIndex = begin; blockIndex < end; ++blockIndex) {
            const int64_t j0 = blockIndex * block;
            const int64_t count = std::min(block, n - j0);
            columnBlockProduct(m, k, packedA, stripsFor(j0, count, scratch), layout, j0, count, out,
                               epilogue, n);
        }
    });
}

} // namespace

void packedGemm(int64_t m, int64_t n, int64_t k, const float* packedA,
                const PackColumns& packColumns, const GemmOutput& out,
                const ConvEpilogue& epilogue) {
    const StripSource pack = [&](int64_t j0, int64_t count, float* scratch) {
        packColumns(j0, count, scratch);
        return static_cast<const float*>(scratch);
    };
    productOverStrips(m, n, k, packedA, pack, false, out, epilogue);
}

int64_t packedStripsSize(int64_t k, int64_t n) {
    return k * ((n + kGemmCols - 1) / kGemmCols) * kGemmCols;
}

void gemmPrepackedB(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                    const float* strips, const GemmOutput& out) {
    thread_local ScratchFloats scratch;
    float* panels = scratch.get(static_cast<size_t>(packedWeightsSize(m, k)));
    packWeights(a, m, k, lda, panels);
    // Column blocks start on strip boundaries (columnBlock rounds to kGemmCols).
    const StripSource inPlace = [&](int64_t j0, int64_t /*count*/, float* /*scratch*/) {
        return strips + (j0 / kGemmCols) * k * kGemmCols;
    };
    productOverStrips(m, n, k, panels, inPlace, true, out, ConvEpilogue{});
}

namespace {

/// The depth [0, returned) of one full strip (rows `rows` of B, ldb apart) packed eight rows by
/// eight of depth at a time, transposed in registers: each store writes eight columns of one
/// depth row, where packTransposedRowMajorStrips's loop stores one float at a time, strided (the
/// weight gradients' x^T: 7 % of a weights-mode sweep).
int64_t packTransposedBlocks(const float* rows, int64_t ldb, int64_t k, float* strip) {
    int64_t done = 0;
#if defined(__AVX2__)
    for (; done + 8 <= k; done += 8) {
        for (int64_t half = 0; half < kGemmCols; half += 8) {
            const Vectors8 t = transposeRegisters8x8(rows + half * ldb + done, ldb);
            for (int64_t kk = 0; kk < 8; ++kk) {
                _mm256_storeu_ps(strip + (done + kk) * kGemmCols + half, t.v[kk]);
            }
        }
    }
#else
    (void)rows;
    (void)ldb;
    (void)k;
    (void)strip;
#endif
    return done;
}

} // namespace

// Each strip gathers kGemmCols rows of B (zero past n), a block of depth at a time so that the
// block's strip rows stay in L1 while the rows of B stream by.
void packTransposedRowMajorStrips(const float* b, int64_t ldb, int64_t k, int64_t n,
                                  float* strips) {
    constexpr int64_t kDepthChunk = 64;
    for (int64_t s = 0; s * kGemmCols < n; ++s) {
        float* strip = strips + s * k * kGemmCols;
        const int64_t width = std::min(kGemmCols, n - s * kGemmCols);
        const int64_t done =
            width == kGemmCols ? packTransposedBlocks(b + s * kGemmCols * ldb, ldb, k, strip) : 0;
        for (int64_t k0 = done; k0 < k; k0 += kDepthChunk) {
            const int64_t k1 = std::min(k, k0 + kDepthChunk);
            for (int64_t jj = 0; jj < kGemmCols; ++jj) {
                const float* row = jj < width ? b + (s * kGemmCols + jj) * ldb : nullptr;
                for (int64_t kk = k0; kk < k1; ++kk) {
                    strip[kk * kGemmCols + jj] = row != nullptr ? row[kk] : 0.0F;
                }
            }
        }
    }
}

void gemmABt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, bool accumulate) {
    if (m <= 0 || n <= 0) {
        return;
    }
    if (k <= 0) { // an empty sum
        if (!accumulate) {
            for (int64_t i = 0; i < m; ++i) {
                std::fill_n(c + i * ldc, n, 0.0F);
            }
        }
        return;
    }
    thread_local ScratchFloats scratch;
    float* packedA = scratch.get(static_cast<size_t>(packedWeightsSize(m, k)));
    packWeights(a, m, k, lda, packedA);
    const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
        packTransposedRowMajorStrips(b + j0 * ldb, ldb, k, count, strips);
    };
    GemmOutput out{c, ldc};
    out.accumulate = accumulate;
    packedGemm(m, n, k, packedA, pack, out, ConvEpilogue{});
}

void gemmRowMajorB(int64_t m, int64_t n, int64_t k, const float* packedA, const float* b,
                   int64_t ldb, const GemmOutput& out, const ConvEpilogue& epilogue) {
    columnBlockProduct(m, k, packedA, b, StripLayout{ldb, kGemmCols}, 0, n, out, epilogue, n);
}

bool packedGemmReadsBInPlace(int64_t m, int64_t n, int64_t ldb) {
    return n >= kGemmCols && (ldb % 128 != 0 || m <= kInPlaceSharedSetsMaxRows);
}

void packedGemmRowMajorB(int64_t m, int64_t n, int64_t k, const float* packedA, const float* b,
                         int64_t ldb, const GemmOutput& out, const ConvEpilogue& epilogue) {
    const int64_t whole = (n / kGemmCols) * kGemmCols;
    // An edge that columnBlockProduct copies out per depth block stays in the pass over B in
    // place: a pass of its own streamed all of A once more, from memory (a layer's weights are
    // cold, read once per inference).
    const int64_t inPlaceCols = n - whole <= kCompactEdgeCols ? n : whole;
    const StripLayout inPlace{ldb, kGemmCols};
    if (numThreads() > 1 && n < kRowSplitColumns && m > kGemmRows) {
        // Few columns: the threads split the rows of A (as productOverStrips does), every one
        // reading all of B in place (the portable build packs the last partial strip, here), so
        // the product is one parallel region (packing B first took a second one, and waking the
        // other thread twice cost what a small layer's product takes at batch 1).
        float* tail = stripBuffer(k, kGemmCols);
        if (inPlaceCols < n) {
            packRowMajorStrips(b + whole, ldb, k, n - whole, tail);
        }
        const int64_t panels = (m + kGemmRows - 1) / kGemmRows;
        const int64_t work = m * n * k;
        parallelFor(panels, work >= 2 * kMinChunkWork ? 1 : panels,
                    [&](int64_t begin, int64_t end) {
                        const int64_t row0 = begin * kGemmRows;
                        const int64_t count = std::min(m, end * kGemmRows) - row0;
                        const GemmOutput rows = rowsFrom(out, row0);
                        columnBlockProduct(count, k, packedA + row0 * k, b, inPlace, 0, inPlaceCols,
                                           rows, epilogue, n, 0);
                        if (inPlaceCols < n) {
                            columnBlockProduct(count, k, packedA + row0 * k, tail,
                                               StripLayout{kGemmCols, k * kGemmCols}, whole,
                                               n - whole, rows, epilogue, n, whole);
                        }
                        tailOverColumns(epilogue, rows, count, 0, n);
                    });
        return;
    }
    if (inPlaceCols < n) {
        // The portable build, without compact edges: the last strip would read past B's rows,
        // so it is packed, zero past n. Computed first, its tail left to the last block's.
        float* strip = stripBuffer(k, kGemmCols);
        packRowMajorStrips(b + whole, ldb, k, n - whole, strip);
        columnBlockProduct(m, k, packedA, strip, StripLayout{kGemmCols, k * kGemmCols}, whole,
                           n - whole, out, epilogue, n, whole);
    }
    const int64_t block = columnBlock(inPlaceCols);
    const int64_t blocks = (inPlaceCols + block - 1) / block;
    parallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t blockIndex = begin; blockIndex < end; ++blockIndex) {
            const int64_t j0 = blockIndex * block;
            const int64_t count = std::min(block, inPlaceCols - j0);
            columnBlockProduct(m, k, packedA, b + j0, inPlace, j0, count, out, epilogue, n,
                               j0 + count == inPlaceCols ? n : j0 + count);
        }
    });
}

} // namespace qs::runtime
