#include "core/runtime/winograd.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/winograd_tiles.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

// Transforms of F(2x2, 3x3), each applied to rows and then to columns:
//   input  B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   weight G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   output A^T = [1 1 1 0; 0 1 -1 -1]
// Tile (ty, tx) of an image covers output pixels (2 ty .. 2 ty + 1, 2 tx .. 2 tx + 1) and reads
// input pixels (2 ty - pt .. + 3, 2 tx - pl .. + 3), zero outside the image.

constexpr int64_t kPositions = kWinogradPositions;

using TileGrid = WinogradTileGrid;

/// A run of tiles along one tile row of one image: tiles (ty, tx0 .. tx0 + count - 1).
struct TileRun {
    int64_t image;
    int64_t ty;
    int64_t tx0;
    int64_t count;
};

/// Calls fn(offset, run) for the tile-row runs of tiles [t0, t1), offset counted from t0.
template <typename Fn>
void forEachTileRun(const TileGrid& grid, int64_t t0, int64_t t1, Fn fn) {
    for (int64_t t = t0; t < t1;) {
        const int64_t image = t / grid.perImage;
        const int64_t inImage = t % grid.perImage;
        const int64_t tx0 = inImage % grid.cols;
        const int64_t count = std::min(grid.cols - tx0, t1 - t);
        fn(t - t0, TileRun{image, inImage / grid.cols, tx0, count});
        t += count;
    }
}

/// Per-thread buffers of one block of tiles.
struct BlockScratch {
    std::vector<float> transformedInput;  ///< [position][channel][row stride >= block tiles]
    std::vector<float> transformedOutput; ///< [position][filter][block tiles]
};

/// The input transform of one tile from its four input rows (each starting at the tile's first
/// column): out[pos posStride] for the 16 positions.
inline void inputTile(const std::array<const float*, 4>& rows, int64_t t, float* out,
                      int64_t posStride) {
    std::array<std::array<float, 4>, 4> r{}; // rows of d B
    for (size_t i = 0; i < 4; ++i) {
        const float* d = rows[i] + 2 * t;
        r[i] = {d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3]};
    }
    for (size_t k = 0; k < 4; ++k) {
        const auto column = static_cast<int64_t>(k);
        out[(0 + column) * posStride + t] = r[0][k] - r[2][k];
        out[(4 + column) * posStride + t] = r[1][k] + r[2][k];
        out[(8 + column) * posStride + t] = r[2][k] - r[1][k];
        out[(12 + column) * posStride + t] = r[1][k] - r[3][k];
    }
}

/// What the epilogue does to one output value (bias, residual, clamp).
struct OutputEpilogue {
    float bias;
    float lo;
    float hi;

    float operator()(float v, const float* residual) const {
        v += bias + (residual != nullptr ? *residual : 0.0F);
        return std::min(std::max(v, lo), hi);
    }
};

/// The output transform of one tile (GEMM outputs m[pos ld + t]): the tile's 2 x 2 outputs.
inline std::array<float, 4> outputTile(const float* m, int64_t ld, int64_t t) {
    std::array<std::array<float, 2>, 4> s{}; // rows of M A
    for (int64_t i = 0; i < 4; ++i) {
        const float m0 = m[(i * 4 + 0) * ld + t];
        const float m1 = m[(i * 4 + 1) * ld + t];
        const float m2 = m[(i * 4 + 2) * ld + t];
        const float m3 = m[(i * 4 + 3) * ld + t];
        s[static_cast<size_t>(i)] = {m0 + m1 + m2, m1 - m2 - m3};
    }
    return {s[0][0] + s[1][0] + s[2][0], s[0][1] + s[1][1] + s[2][1], s[1][0] - s[2][0] - s[3][0],
            s[1][1] - s[2][1] - s[3][1]};
}

#if defined(__AVX2__) && defined(__FMA__)
/// Elements 0, 2, .., 14 and 1, 3, .., 15 of src[0 .. 16).
inline void deinterleave(const float* src, __m256& even, __m256& odd) {
    const __m256 a = _mm256_loadu_ps(src);
    const __m256 b = _mm256_loadu_ps(src + 8);
    // Within lanes: (a0 a2 b0 b2 | a4 a6 b4 b6); then the 64-bit pairs in order.
    const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
    const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
    even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
    odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

/// inputTile for tiles t .. t + 7 (reads 2 t .. 2 t + 17 of each row).
inline void inputTiles8(const std::array<const float*, 4>& rows, int64_t t, float* out,
                        int64_t posStride) {
    __m256 r[4][4]; // NOLINT: std::array drops __m256 alignment attributes
    for (size_t i = 0; i < 4; ++i) {
        __m256 e0;
        __m256 o0;
        __m256 e1;
        __m256 o1;
        deinterleave(rows[i] + 2 * t, e0, o0);
        deinterleave(rows[i] + 2 * t + 2, e1, o1);
        r[i][0] = _mm256_sub_ps(e0, e1);
        r[i][1] = _mm256_add_ps(o0, e1);
        r[i][2] = _mm256_sub_ps(e1, o0);
        r[i][3] = _mm256_sub_ps(o0, o1);
    }
    for (size_t k = 0; k < 4; ++k) {
        const auto column = static_cast<int64_t>(k);
        _mm256_storeu_ps(out + (0 + column) * posStride + t, _mm256_sub_ps(r[0][k], r[2][k]));
        _mm256_storeu_ps(out + (4 + column) * posStride + t, _mm256_add_ps(r[1][k], r[2][k]));
        _mm256_storeu_ps(out + (8 + column) * posStride + t, _mm256_sub_ps(r[2][k], r[1][k]));
        _mm256_storeu_ps(out + (12 + column) * posStride + t, _mm256_sub_ps(r[1][k], r[3][k]));
    }
}

/// outputTile for tiles t .. t + 7, both columns inside the image: writes 16 pixels of output row
/// 0 at dst0 + 2 t and, when dst1 is not null, of row 1 at dst1 + 2 t, epilogue applied.
inline void outputTiles8(const float* m, int64_t ld, int64_t t, const OutputEpilogue& e,
                         float* dst0, const float* res0, float* dst1, const float* res1) {
    __m256 s[4][2]; // NOLINT: std::array drops __m256 alignment attributes
    for (int64_t i = 0; i < 4; ++i) {
        const __m256 m0 = _mm256_loadu_ps(m + (i * 4 + 0) * ld + t);
        const __m256 m1 = _mm256_loadu_ps(m + (i * 4 + 1) * ld + t);
        const __m256 m2 = _mm256_loadu_ps(m + (i * 4 + 2) * ld + t);
        const __m256 m3 = _mm256_loadu_ps(m + (i * 4 + 3) * ld + t);
        s[i][0] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        s[i][1] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
    }
    const __m256 bias = _mm256_set1_ps(e.bias);
    const __m256 lo = _mm256_set1_ps(e.lo);
    const __m256 hi = _mm256_set1_ps(e.hi);
    const auto store = [&](__m256 c0, __m256 c1, float* dst, const float* res) {
        // Interleave the tiles' two columns: (c0_0 c1_0 c0_1 c1_1 ..).
        const __m256 lo4 = _mm256_unpacklo_ps(c0, c1);
        const __m256 hi4 = _mm256_unpackhi_ps(c0, c1);
        __m256 first = _mm256_add_ps(_mm256_permute2f128_ps(lo4, hi4, 0x20), bias);
        __m256 second = _mm256_add_ps(_mm256_permute2f128_ps(lo4, hi4, 0x31), bias);
        if (res != nullptr) {
            first = _mm256_add_ps(first, _mm256_loadu_ps(res + 2 * t));
            second = _mm256_add_ps(second, _mm256_loadu_ps(res + 2 * t + 8));
        }
        // The bound first: a NaN stays NaN (maxps/minps return the second operand for it).
        _mm256_storeu_ps(dst + 2 * t, _mm256_min_ps(hi, _mm256_max_ps(lo, first)));
        _mm256_storeu_ps(dst + 2 * t + 8, _mm256_min_ps(hi, _mm256_max_ps(lo, second)));
    };
    store(_mm256_add_ps(_mm256_add_ps(s[0][0], s[1][0]), s[2][0]),
          _mm256_add_ps(_mm256_add_ps(s[0][1], s[1][1]), s[2][1]), dst0, res0);
    if (dst1 != nullptr) {
        store(_mm256_sub_ps(_mm256_sub_ps(s[1][0], s[2][0]), s[3][0]),
              _mm256_sub_ps(_mm256_sub_ps(s[1][1], s[2][1]), s[3][1]), dst1, res1);
    }
}
#endif

/// Input rows iy0 .. iy0 + count - 1 of one plane, each behind `pl` zero columns and zero-filled
/// to `width` columns; rows outside the plane are zeros. Tiles then read it without bounds checks.
void padRows(const Conv2d& p, const float* plane, int64_t iy0, int64_t count, int64_t width,
             float* out) {
    const int64_t inside = std::clamp<int64_t>(width - p.pl, 0, p.w);
    for (int64_t i = 0; i < count; ++i) {
        float* row = out + i * width;
        const int64_t iy = iy0 + i;
        if (iy < 0 || iy >= p.h) {
            std::fill(row, row + width, 0.0F);
            continue;
        }
        std::fill(row, row + p.pl, 0.0F);
        std::copy_n(plane + iy * p.w, inside, row + p.pl);
        std::fill(row + p.pl + inside, row + width, 0.0F);
    }
}

/// Input transform of `count` tiles along one tile row whose first input row starts at `first`
/// in a padded plane (row stride `width`): position pos of tile t goes to out[pos posStride + t].
void transformInputRun(const float* first, int64_t width, int64_t count, float* out,
                       int64_t posStride) {
    const std::array<const float*, 4> rows{first, first + width, first + 2 * width,
                                           first + 3 * width};
    int64_t t = 0;
#if defined(__AVX2__) && defined(__FMA__)
    for (; t + 8 <= count; t += 8) {
        inputTiles8(rows, t, out, posStride);
    }
    if (t < count && count >= 8) {
        // The last tiles as one more vector that overlaps the previous one.
        inputTiles8(rows, count - 8, out, posStride);
        t = count;
    }
#endif
    for (; t < count; ++t) {
        inputTile(rows, t, out, posStride);
    }
}

/// Output transform of one tile run of one filter (16 rows of the GEMM outputs at `m`, row stride
/// `ld`) into the output plane, epilogue included.
void transformOutputRun(const Conv2d& p, const float* m, int64_t ld, const TileRun& run,
                        int64_t filter, const ConvEpilogue& epilogue, float* y) {
    const int64_t pixels = p.outPixels();
    const int64_t planeOffset = (run.image * p.m + filter) * pixels;
    const OutputEpilogue e{epilogue.bias != nullptr ? epilogue.bias[filter] : 0.0F, epilogue.lo,
                           epilogue.hi};
    const int64_t oy = 2 * run.ty;
    const int64_t x0 = 2 * run.tx0;
    float* dst0 = y + planeOffset + oy * p.ow + x0;
    float* dst1 = oy + 1 < p.oh ? dst0 + p.ow : nullptr;
    const float* res0 =
        epilogue.residual != nullptr ? epilogue.residual + planeOffset + oy * p.ow + x0 : nullptr;
    const float* res1 = res0 != nullptr && dst1 != nullptr ? res0 + p.ow : nullptr;
    // Tiles whose two output columns both lie inside the image.
    const int64_t whole = std::min(run.count, (p.ow - x0) / 2);
    int64_t t = 0;
#if defined(__AVX2__) && defined(__FMA__)
    for (; t + 8 <= whole; t += 8) {
        outputTiles8(m, ld, t, e, dst0, res0, dst1, res1);
    }
    if (t < whole && whole >= 8) {
        // Overlaps the previous vector: its tiles are written again with the same values (the
        // residual is never the output itself).
        outputTiles8(m, ld, whole - 8, e, dst0, res0, dst1, res1);
        t = whole;
    }
#endif
    const auto at = [](const float* res, int64_t i) { return res != nullptr ? res + i : nullptr; };
    for (; t < run.count; ++t) {
        const std::array<float, 4> v = outputTile(m, ld, t);
        const int64_t columns = t < whole ? 2 : 1;
        for (int64_t c = 0; c < columns; ++c) {
            dst0[2 * t + c] = e(v[static_cast<size_t>(c)], at(res0, 2 * t + c));
            if (dst1 != nullptr) {
                dst1[2 * t + c] = e(v[static_cast<size_t>(2 + c)], at(res1, 2 * t + c));
            }
        }
    }
}

/// `floats` rounded up to a multiple of 4 KiB, plus one 64-byte cache line.
int64_t positionStride(int64_t floats) {
    constexpr int64_t kPage = 1024;
    constexpr int64_t kLine = 16;
    return (floats + kPage - 1) / kPage * kPage + kLine;
}

int64_t roundUpToStrip(int64_t n) {
    return ((n + kGemmCols - 1) / kGemmCols) * kGemmCols;
}

/// Tiles per block: up to 4 MiB of transformed input and output (16 (channels + filters) floats
/// per tile), at least one strip, in blocks of equal size so that no block runs all 16 GEMMs over
/// the weights for a few leftover tiles. Blocks larger than the 1 MiB L2 measured faster than
/// L2-sized ones (ResNet-18's 3x3 layers, one thread): each block streams all transformed
/// weights, and the transformed tiles stream well from L3.
int64_t tilesPerBlock(const Conv2d& p, int64_t total) {
    constexpr int64_t kBudget = int64_t{4} << 20;
    const int64_t perTile = kPositions * (p.c + p.m) * static_cast<int64_t>(sizeof(float));
    const int64_t most = std::max(kGemmCols, kBudget / perTile);
    const int64_t blocks = (total + most - 1) / most;
    return (total + blocks - 1) / blocks;
}

/// Tiles [t0, t1) of the batch: input transform, 16 GEMMs, output transform. `inner` splits each
/// stage over the threads (used when there are fewer blocks than threads).
void runBlock(const Conv2d& p, const TileGrid& grid, const float* x, const float* packedWeights,
              const ConvEpilogue& epilogue, float* y, int64_t t0, int64_t t1, bool inner,
              BlockScratch& scratch) {
    const int64_t tiles = t1 - t0;
    // Row stride of the transformed input: whole strips, and an odd number of them so that the
    // rows the GEMM reads one after another do not share cache sets.
    const int64_t ldv = roundUpToStrip(tiles) | kGemmCols;
    // The 16 positions of a tile are written (input) and read (output) together: their strides
    // are 4 KiB plus one cache line, so that they fall into different cache sets.
    const int64_t inputStride = positionStride(p.c * ldv);
    const int64_t outputStride = positionStride(p.m * tiles);
    scratch.transformedInput.resize(static_cast<size_t>(kPositions * inputStride));
    scratch.transformedOutput.resize(static_cast<size_t>(kPositions * outputStride));
    float* v = scratch.transformedInput.data();
    float* mOut = scratch.transformedOutput.data();
    std::vector<std::pair<int64_t, TileRun>> runs; // (offset in the block, run)
    forEachTileRun(grid, t0, t1,
                   [&runs](int64_t offset, const TileRun& run) { runs.emplace_back(offset, run); });
    const int64_t threads = inner ? numThreads() : 1;
    // Padded input rows: tile column tx reads padded columns 2 tx .. 2 tx + 3.
    const int64_t width = 2 * grid.cols + 2;

    const auto inputChannels = [&](int64_t c0, int64_t c1) {
        thread_local std::vector<float> padded;
        for (int64_t ch = c0; ch < c1; ++ch) {
            // Runs of one image at a time: pad the input rows their tile rows read, once.
            for (size_t i = 0; i < runs.size();) {
                const int64_t image = runs[i].second.image;
                size_t j = i;
                while (j < runs.size() && runs[j].second.image == image) {
                    ++j;
                }
                const int64_t ty0 = runs[i].second.ty;
                const int64_t rows = 2 * (runs[j - 1].second.ty - ty0) + 4;
                padded.resize(static_cast<size_t>(rows * width));
                padRows(p, x + (image * p.c + ch) * p.h * p.w, 2 * ty0 - p.pt, rows, width,
                        padded.data());
                for (; i < j; ++i) {
                    const auto& [offset, run] = runs[i];
                    const float* first = padded.data() + 2 * (run.ty - ty0) * width + 2 * run.tx0;
                    transformInputRun(first, width, run.count, v + ch * ldv + offset, inputStride);
                }
            }
        }
    };
    const auto gemms = [&](int64_t pos0, int64_t pos1) {
        const int64_t panelSize = packedWeightsSize(p.m, p.c);
        for (int64_t pos = pos0; pos < pos1; ++pos) {
            const GemmOutput out{mOut + pos * outputStride, tiles, nullptr, 0};
            gemmRowMajorB(p.m, tiles, p.c, packedWeights + pos * panelSize, v + pos * inputStride,
                          ldv, out, ConvEpilogue{});
        }
    };
    const auto outputFilters = [&](int64_t f0, int64_t f1) {
        for (int64_t f = f0; f < f1; ++f) {
            for (const auto& [offset, run] : runs) {
                transformOutputRun(p, mOut + f * tiles + offset, outputStride, run, f, epilogue, y);
            }
        }
    };
    if (threads > 1) {
        parallelFor(p.c, 1, inputChannels);
        parallelFor(kPositions, 1, gemms);
        parallelFor(p.m, 1, outputFilters);
    } else {
        inputChannels(0, p.c);
        gemms(0, kPositions);
        outputFilters(0, p.m);
    }
}

} // namespace

bool winogradApplies(const Conv2d& p) {
    return p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
           p.group == 1 && p.c >= 16 && p.m >= 16;
}

int64_t winogradWeightsSize(int64_t filters, int64_t channels) {
    return kPositions * packedWeightsSize(filters, channels);
}

namespace {

/// Filter f's transformed taps, channel by channel, into packTransformed's layout.
template <typename Taps>
void packFilter(int64_t f, int64_t channels, int64_t panelSize, const Taps& taps, float* packed) {
    float* panel = packed + (f / kGemmRows) * kGemmRows * channels + f % kGemmRows;
    for (int64_t c = 0; c < channels; ++c) {
        const std::array<float, 9> g = taps(f, c);
        // G g: 4 rows of 3.
        std::array<std::array<float, 3>, 4> gg{};
        for (size_t j = 0; j < 3; ++j) {
            const float g0 = g[j];
            const float g1 = g[3 + j];
            const float g2 = g[6 + j];
            gg[0][j] = g0;
            gg[1][j] = 0.5F * (g0 + g1 + g2);
            gg[2][j] = 0.5F * (g0 - g1 + g2);
            gg[3][j] = g2;
        }
        // (G g) G^T: 4 x 4, position i 4 + k.
        float* at = panel + c * kGemmRows;
        for (int64_t i = 0; i < 4; ++i) {
            const auto& [a0, a1, a2] = gg[static_cast<size_t>(i)];
            at[(i * 4 + 0) * panelSize] = a0;
            at[(i * 4 + 1) * panelSize] = 0.5F * (a0 + a1 + a2);
            at[(i * 4 + 2) * panelSize] = 0.5F * (a0 - a1 + a2);
            at[(i * 4 + 3) * panelSize] = a2;
        }
    }
}

/// U = G g G^T of every (filter, channel) 3x3 filter g = taps(f, c) (row-major), written straight
/// into the 16 positions' GEMM panels (packWeights' layout: panel of kGemmRows filters, then
/// channel, then the filter within the panel; padding filters zero).
template <typename Taps>
void packTransformed(int64_t filters, int64_t channels, Taps taps, float* packed) {
    const int64_t panelSize = packedWeightsSize(filters, channels);
    if (filters % kGemmRows != 0) {
        std::fill(packed, packed + kPositions * panelSize, 0.0F);
    }
    // Panels on the threads: a model's Winograd weights take tens of milliseconds to transform,
    // paid when the executor is created (and on the first backward sweep for dx's).
    const int64_t panels = (filters + kGemmRows - 1) / kGemmRows;
    parallelFor(panels, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t f = p0 * kGemmRows; f < std::min(filters, p1 * kGemmRows); ++f) {
            packFilter(f, channels, panelSize, taps, packed);
        }
    });
}

} // namespace

void packWinogradWeights(const float* w, int64_t filters, int64_t channels, float* packed) {
    packTransformed(
        filters, channels,
        [&](int64_t f, int64_t c) {
            std::array<float, 9> g{};
            std::copy_n(w + (f * channels + c) * 9, 9, g.begin());
            return g;
        },
        packed);
}

void winogradConv2d(const Conv2d& p, const float* x, const float* packedWeights,
                    const ConvEpilogue& epilogue, float* y, int64_t blockTiles) {
    const TileGrid grid(p);
    const int64_t total = p.n * grid.perImage;
    const int64_t block = blockTiles > 0 ? blockTiles : tilesPerBlock(p, total);
    const int64_t blocks = (total + block - 1) / block;
    if (blocks < numThreads()) {
        thread_local BlockScratch scratch;
        for (int64_t b = 0; b < blocks; ++b) {
            runBlock(p, grid, x, packedWeights, epilogue, y, b * block,
                     std::min(total, (b + 1) * block), true, scratch);
        }
        return;
    }
    parallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
        // Reused across calls: fresh pages would cost page faults on every convolution.
        thread_local BlockScratch scratch;
        for (int64_t b = begin; b < end; ++b) {
            runBlock(p, grid, x, packedWeights, epilogue, y, b * block,
                     std::min(total, (b + 1) * block), false, scratch);
        }
    });
}

namespace {

/// Pads of the convolution that computes dx: 2 - p's pads, bottom and right from the sizes.
Conv2d inputGradGeometry(const Conv2d& p) {
    const int64_t pb = p.oh + 2 - p.h - p.pt;
    const int64_t pr = p.ow + 2 - p.w - p.pl;
    Conv2d q = p;
    q.c = p.m;
    q.m = p.c;
    q.h = p.oh;
    q.w = p.ow;
    q.oh = p.h;
    q.ow = p.w;
    q.pt = 2 - p.pt;
    q.pl = 2 - p.pl;
    // Recorded through the output size; a negative pad would crop, which the kernel cannot.
    q.group = (pb >= 0 && pb <= 2 && pr >= 0 && pr <= 2) ? 1 : 0;
    return q;
}

} // namespace

bool winogradInputGradApplies(const Conv2d& p, bool weightsPacked) {
    const Conv2d q = inputGradGeometry(p);
    return winogradApplies(p) && q.group == 1 && q.pt >= 0 && q.pl >= 0 &&
           (weightsPacked || p.oh * p.ow >= 784);
}

int64_t winogradInputGradWeightsSize(int64_t filters, int64_t channels) {
    return winogradWeightsSize(channels, filters);
}

void packWinogradInputGradWeights(const float* w, int64_t filters, int64_t channels,
                                  float* packed) {
    // Filter c of dx's convolution, channel m: w[m, c] turned by 180 degrees.
    packTransformed(
        channels, filters,
        [&](int64_t f, int64_t c) {
            const float* src = w + (c * channels + f) * 9;
            return std::array<float, 9>{src[8], src[7], src[6], src[5], src[4],
                                        src[3], src[2], src[1], src[0]};
        },
        packed);
}

void winogradInputGrad(const Conv2d& p, const float* w, const float* dy, float* dx,
                       const float* packed) {
    const Conv2d q = inputGradGeometry(p);
    if (packed == nullptr) {
        thread_local std::vector<float> scratch;
        scratch.resize(static_cast<size_t>(winogradInputGradWeightsSize(p.m, p.c)));
        packWinogradInputGradWeights(w, p.m, p.c, scratch.data());
        packed = scratch.data();
    }
    winogradConv2d(q, dy, packed, ConvEpilogue{}, dx);
}

} // namespace qs::runtime
