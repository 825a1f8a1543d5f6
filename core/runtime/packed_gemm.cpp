#include "core/runtime/packed_gemm.h"

#include "core/runtime/parallel.h"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

constexpr int64_t kTile = kGemmRows * kGemmCols;
/// Depth of one pass over A and B: a 6 x 256 A panel and a 256 x 16 B strip stay in L1.
constexpr int64_t kDepthBlock = 256;
/// Columns of B per block.
constexpr int64_t kMaxColumnBlock = 512;
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

#if defined(__AVX2__) && defined(__FMA__)
/// tile (6 x 16, row stride ldt) (+)= a (depth x 6, packed) * b (depth x 16, packed).
inline void microKernel(int64_t depth, const float* a, const float* b, float* tile, int64_t ldt,
                        const TileStore& how) {
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
        b += kGemmCols;
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
            lo = _mm256_min_ps(_mm256_max_ps(lo, lower), upper);
            hi = _mm256_min_ps(_mm256_max_ps(hi, lower), upper);
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

/// Edge tiles of at most 4 columns: a column at a time, the 6 rows of a packed A step in the lanes
/// of one vector (lanes 6 and 7 read the next step and are dropped), so a tile costs kCols
/// multiply-adds per step instead of the full tile's 12. Independent sums over interleaved steps
/// hide the multiply-add latency. Writes columns [0, kCols) of tile (6 x 16, row stride kGemmCols).
template <int kCols>
void columnKernel(int64_t depth, const float* a, const float* b, float* tile) {
    constexpr int kUnroll = kCols <= 2 ? 4 : 2;
    __m256 acc[kUnroll][kCols]; // NOLINT(*-avoid-c-arrays): std::array drops the alignment
    for (auto& steps : acc) {
        for (__m256& sum : steps) {
            sum = _mm256_setzero_ps();
        }
    }
    const auto step = [&](int u, __m256 column, int64_t k) {
        for (int j = 0; j < kCols; ++j) {
            acc[u][j] =
                _mm256_fmadd_ps(column, _mm256_broadcast_ss(b + k * kGemmCols + j), acc[u][j]);
        }
    };
    // Full loads read 2 floats past the step, so the last step loads under a mask: the end of A
    // may be the end of the buffer.
    int64_t k = 0;
    for (; k + kUnroll < depth; k += kUnroll) {
        for (int u = 0; u < kUnroll; ++u) {
            step(u, _mm256_loadu_ps(a + (k + u) * kGemmRows), k + u);
        }
    }
    for (; k + 1 < depth; ++k) {
        step(0, _mm256_loadu_ps(a + k * kGemmRows), k);
    }
    if (k < depth) {
        const __m256i rows = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
        step(0, _mm256_maskload_ps(a + k * kGemmRows, rows), k);
    }
    for (int j = 0; j < kCols; ++j) {
        __m256 sum = acc[0][j];
        for (int u = 1; u < kUnroll; ++u) {
            sum = _mm256_add_ps(sum, acc[u][j]);
        }
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, sum);
        for (int64_t r = 0; r < kGemmRows; ++r) {
            tile[r * kGemmCols + j] = lanes[r];
        }
    }
}

/// Edge tiles of at most 8 columns: the 6 x 16 micro-kernel on the strip's first 8 columns only,
/// two steps at a time. Writes columns [0, 8) of tile (6 x 16, row stride kGemmCols).
void halfKernel(int64_t depth, const float* a, const float* b, float* tile) {
    __m256 even[kGemmRows]; // NOLINT(*-avoid-c-arrays): std::array drops the alignment
    __m256 odd[kGemmRows];  // NOLINT(*-avoid-c-arrays)
    for (int64_t r = 0; r < kGemmRows; ++r) {
        even[r] = _mm256_setzero_ps();
        odd[r] = _mm256_setzero_ps();
    }
    int64_t k = 0;
    for (; k + 2 <= depth; k += 2) {
        const __m256 b0 = _mm256_loadu_ps(b + k * kGemmCols);
        const __m256 b1 = _mm256_loadu_ps(b + (k + 1) * kGemmCols);
        for (int64_t r = 0; r < kGemmRows; ++r) {
            even[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + k * kGemmRows + r), b0, even[r]);
            odd[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + (k + 1) * kGemmRows + r), b1, odd[r]);
        }
    }
    if (k < depth) {
        const __m256 b0 = _mm256_loadu_ps(b + k * kGemmCols);
        for (int64_t r = 0; r < kGemmRows; ++r) {
            even[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(a + k * kGemmRows + r), b0, even[r]);
        }
    }
    for (int64_t r = 0; r < kGemmRows; ++r) {
        _mm256_storeu_ps(tile + r * kGemmCols, _mm256_add_ps(even[r], odd[r]));
    }
}

/// scratch (6 x 16) = a b for an edge tile of `cols` columns, with the narrowest kernel that
/// covers them (only the first `cols` columns of scratch are meaningful).
void edgeKernel(int64_t depth, const float* a, const float* b, int64_t cols, float* scratch) {
    switch (cols) {
    case 1:
        columnKernel<1>(depth, a, b, scratch);
        return;
    case 2:
        columnKernel<2>(depth, a, b, scratch);
        return;
    case 3:
        columnKernel<3>(depth, a, b, scratch);
        return;
    case 4:
        columnKernel<4>(depth, a, b, scratch);
        return;
    default:
        if (cols <= 8) {
            halfKernel(depth, a, b, scratch);
            return;
        }
        microKernel(depth, a, b, scratch, kGemmCols, TileStore{});
    }
}
#else
/// Portable micro-kernel: the same tile product in plain loops.
inline void microKernel(int64_t depth, const float* a, const float* b, float* tile, int64_t ldt,
                        const TileStore& how) {
    float acc[kTile] = {};
    for (int64_t k = 0; k < depth; ++k) {
        for (int64_t r = 0; r < kGemmRows; ++r) {
            for (int64_t c = 0; c < kGemmCols; ++c) {
                acc[r * kGemmCols + c] += a[k * kGemmRows + r] * b[k * kGemmCols + c];
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

/// scratch (6 x 16) = a b for an edge tile (the portable build runs the full tile).
void edgeKernel(int64_t depth, const float* a, const float* b, int64_t /*cols*/, float* scratch) {
    microKernel(depth, a, b, scratch, kGemmCols, TileStore{});
}
#endif

/// The 6 x 16 output tiles of C for one depth block: full tiles run in place, edge tiles
/// through a scratch tile; the last depth block applies the epilogue.
struct TileJob {
    const GemmOutput& out;
    const ConvEpilogue& epilogue;
    int64_t m;
    int64_t n;
    bool first;
    bool last;

    /// Every tile of the A panel at `row` over `strips` strips (row stride `stripStride`) from
    /// column col0: full-width tiles in place, a narrower last one through a scratch tile.
    void runPanel(int64_t depth, const float* a, const float* b, int64_t stripStride,
                  int64_t strips, int64_t row, int64_t col0) const {
        const int64_t rows = std::min(kGemmRows, m - row);
        TileStore how{!first, last, nullptr, nullptr, epilogue.lo, epilogue.hi, rows};
        if (last && epilogue.bias != nullptr) {
            how.bias = epilogue.bias + out.channel0 + row;
        }
        float* c = out.c + row * out.ldc;
        for (int64_t s = 0; s < strips; ++s) {
            const int64_t col = col0 + s * kGemmCols;
            if (n - col < kGemmCols) {
                runEdge(depth, a, b + s * stripStride, row, col);
                continue;
            }
            if (last && out.residual != nullptr) {
                how.residual = out.residual + row * out.ldc + col;
            }
            microKernel(depth, a, b + s * stripStride, c + col, out.ldc, how);
        }
    }

    void runEdge(int64_t depth, const float* a, const float* b, int64_t row, int64_t col) const {
        const int64_t rows = std::min(kGemmRows, m - row);
        const int64_t cols = n - col;
        float* c = out.c + row * out.ldc + col;
        float scratch[kTile];
        edgeKernel(depth, a, b, cols, scratch);
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
/// small enough that every thread gets a block.
int64_t columnBlock(int64_t n) {
    const int64_t parts =
        std::max<int64_t>(numThreads(), (n + kMaxColumnBlock - 1) / kMaxColumnBlock);
    const int64_t even = (n + parts - 1) / parts;
    return std::max(kGemmCols, ((even + kGemmCols - 1) / kGemmCols) * kGemmCols);
}

/// All tiles of columns [j0, j0 + count) once their B strips are packed.
void columnBlockProduct(int64_t m, int64_t k, const float* packedA, const float* strips, int64_t j0,
                        int64_t count, const GemmOutput& out, const ConvEpilogue& epilogue,
                        int64_t n) {
    const int64_t stripCount = (count + kGemmCols - 1) / kGemmCols;
    // Equal depth blocks: a short last block would reload and store C for little work.
    const int64_t blocks = (k + kDepthBlock - 1) / kDepthBlock;
    const int64_t step = (k + blocks - 1) / blocks;
    for (int64_t k0 = 0; k0 < k; k0 += step) {
        const int64_t depth = std::min(step, k - k0);
        const TileJob job{out, epilogue, m, n, k0 == 0, k0 + depth == k};
        const float* b = strips + k0 * kGemmCols;
        const int64_t stripStride = k * kGemmCols;
        if (depth * count * static_cast<int64_t>(sizeof(float)) <= kPanelOuterBytes) {
            // Shallow: one A panel (L1) against every strip of the block (L2); the tiles of a
            // panel run along the same rows of C, so its stores stream into few cache lines.
            for (int64_t row = 0; row < m; row += kGemmRows) {
                const float* a = packedA + (row * k + k0 * kGemmRows);
                job.runPanel(depth, a, b, stripStride, stripCount, row, j0);
            }
            continue;
        }
        // Deep: one B strip (L1) against every A panel (L2), as in BLIS.
        for (int64_t s = 0; s < stripCount; ++s) {
            for (int64_t row = 0; row < m; row += kGemmRows) {
                const float* a = packedA + (row * k + k0 * kGemmRows);
                job.runPanel(depth, a, b + s * stripStride, stripStride, 1, row,
                             j0 + s * kGemmCols);
            }
        }
    }
}

} // namespace

int64_t packedWeightsSize(int64_t m, int64_t k) {
    return ((m + kGemmRows - 1) / kGemmRows) * kGemmRows * k;
}

void packWeights(const float* a, int64_t m, int64_t k, int64_t lda, float* packed) {
    for (int64_t row0 = 0; row0 < m; row0 += kGemmRows) {
        float* panel = packed + row0 * k;
        for (int64_t kk = 0; kk < k; ++kk) {
            for (int64_t r = 0; r < kGemmRows; ++r) {
                const int64_t row = row0 + r;
                panel[kk * kGemmRows + r] = row < m ? a[row * lda + kk] : 0.0F;
            }
        }
    }
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

void packedGemm(int64_t m, int64_t n, int64_t k, const float* packedA,
                const PackColumns& packColumns, const GemmOutput& out,
                const ConvEpilogue& epilogue) {
    const int64_t block = columnBlock(n);
    const int64_t blocks = (n + block - 1) / block;
    parallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
        // Reused across calls: packed B is the only per-call scratch, and fresh pages would cost
        // page faults on every convolution.
        thread_local std::vector<float> strips;
        strips.resize(static_cast<size_t>(k * ((block + kGemmCols - 1) / kGemmCols) * kGemmCols));
        for (int64_t blockIndex = begin; blockIndex < end; ++blockIndex) {
            const int64_t j0 = blockIndex * block;
            const int64_t count = std::min(block, n - j0);
            packColumns(j0, count, strips.data());
            columnBlockProduct(m, k, packedA, strips.data(), j0, count, out, epilogue, n);
        }
    });
}

} // namespace qs::runtime
