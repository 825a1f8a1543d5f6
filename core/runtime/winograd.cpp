#include "core/runtime/winograd.h"

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/scratch.h"
#include "core/runtime/winograd_tiles.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace qs::runtime {
namespace {

// Both variants apply their transforms to rows and then to columns. Tile (ty, tx) of an image
// covers output pixels (T ty .. T ty + T - 1, T tx .. T tx + T - 1) for the tile edge T and reads
// the input pixels (T ty - pt .. + T + 1, T tx - pl .. + T + 1), zero outside the image.

/// A run of tiles along one tile row of one image: tiles (ty, tx0 .. tx0 + count - 1).
struct TileRun {
    int64_t image;
    int64_t ty;
    int64_t tx0;
    int64_t count;
};

/// Calls fn(offset, run) for the tile-row runs of tiles [t0, t1), offset counted from t0.
template <typename Fn>
void forEachTileRun(const WinogradTileGrid& grid, int64_t t0, int64_t t1, Fn fn) {
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
    ScratchFloats transformedInput;  ///< [position][channel][row stride >= block tiles]
    ScratchFloats transformedOutput; ///< [position][filter][block tiles]
};

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

#if defined(__AVX2__) && defined(__FMA__)
/// The epilogue of eight consecutive outputs at dst (residual at res, if any).
inline void storeWithEpilogue(__m256 v, const OutputEpilogue& e, float* dst, const float* res) {
    v = _mm256_add_ps(v, _mm256_set1_ps(e.bias));
    if (res != nullptr) {
        v = _mm256_add_ps(v, _mm256_loadu_ps(res));
    }
    // The bound first: a NaN stays NaN (maxps/minps return the second operand for it).
    _mm256_storeu_ps(dst,
                     _mm256_min_ps(_mm256_set1_ps(e.hi), _mm256_max_ps(_mm256_set1_ps(e.lo), v)));
}
#endif

/// What the kernels need of a variant F(T x T, 3x3) besides its transforms: T x T output pixels
/// per tile from (T + 2)^2 input pixels, one GEMM per position of the transformed tile.
template <int64_t Tile>
struct TileShape {
    static constexpr int64_t kTile = Tile;
    static constexpr int64_t kAlpha = Tile + 2;
    static constexpr int64_t kPositions = kAlpha * kAlpha;
    using Rows = std::array<const float*, kAlpha>;     ///< the input rows a tile row reads
    using Outputs = std::array<float*, kTile>;         ///< the output rows of a tile row
    using Residuals = std::array<const float*, kTile>; ///< their residual rows, if any
};

/// F(2x2, 3x3): 4x4 input tiles, 16 positions.
///   input  B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
///   weight G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
///   output A^T = [1 1 1 0; 0 1 -1 -1]
struct F2x2 : TileShape<2> {

    /// The input transform of tile t (its first column at rows[i] + 2 t): out[pos posStride + t].
    static void inputTile(const Rows& rows, int64_t t, float* out, int64_t posStride) {
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

    /// The output transform of tile t (GEMM outputs m[pos ld + t]): its outputs row by row.
    static std::array<float, 4> outputTile(const float* m, int64_t ld, int64_t t) {
        std::array<std::array<float, 2>, 4> s{}; // rows of M A
        for (int64_t i = 0; i < 4; ++i) {
            const float m0 = m[(i * 4 + 0) * ld + t];
            const float m1 = m[(i * 4 + 1) * ld + t];
            const float m2 = m[(i * 4 + 2) * ld + t];
            const float m3 = m[(i * 4 + 3) * ld + t];
            s[static_cast<size_t>(i)] = {m0 + m1 + m2, m1 - m2 - m3};
        }
        return {s[0][0] + s[1][0] + s[2][0], s[0][1] + s[1][1] + s[2][1],
                s[1][0] - s[2][0] - s[3][0], s[1][1] - s[2][1] - s[3][1]};
    }

    /// U = G g G^T of the 3x3 filter g (row-major): position pos to at[pos panelSize].
    /// Filters transformed at once by filterTiles.
    static constexpr int kLanes = 8;

    /// U = G g G^T of `count` (at most kLanes) filters, g[tap][lane], into at[lane]: position
    /// i * 4 + k at at[lane][(i * 4 + k) * panelSize]. Exact in float (G's entries are 0, 1/2 and
    /// 1); lane by lane, so that the compiler vectorises across the filters.
    static void filterTiles(const std::array<std::array<double, kLanes>, 9>& g, int count,
                            const std::array<float*, kLanes>& at, int64_t panelSize) {
        using Lanes = std::array<float, kLanes>;
        const auto transform = [&](const auto& g0, const auto& g1, const auto& g2,
                                   std::array<Lanes, 4>& out) {
            for (size_t l = 0; l < kLanes; ++l) {
                const auto a0 = static_cast<float>(g0[l]);
                const auto a1 = static_cast<float>(g1[l]);
                const auto a2 = static_cast<float>(g2[l]);
                out[0][l] = a0;
                out[1][l] = 0.5F * (a0 + a1 + a2);
                out[2][l] = 0.5F * (a0 - a1 + a2);
                out[3][l] = a2;
            }
        };
        std::array<std::array<Lanes, 4>, 3> columns{}; // G g, column j
        for (size_t j = 0; j < 3; ++j) {
            transform(g[j], g[3 + j], g[6 + j], columns[j]);
        }
        std::array<Lanes, 4> row{};
        for (size_t i = 0; i < 4; ++i) {
            transform(columns[0][i], columns[1][i], columns[2][i], row);
            for (size_t k = 0; k < 4; ++k) {
                const int64_t offset = static_cast<int64_t>(i * 4 + k) * panelSize;
                for (size_t l = 0; l < static_cast<size_t>(count); ++l) {
                    at[l][offset] = row[k][l];
                }
            }
        }
    }

#if defined(__AVX2__) && defined(__FMA__)
    /// Elements 0, 2, .., 14 and 1, 3, .., 15 of src[0 .. 16).
    static void deinterleave(const float* src, __m256& even, __m256& odd) {
        const __m256 a = _mm256_loadu_ps(src);
        const __m256 b = _mm256_loadu_ps(src + 8);
        // Within lanes: (a0 a2 b0 b2 | a4 a6 b4 b6); then the 64-bit pairs in order.
        const __m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        const __m256 o = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        even =
            _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
        odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
    }

    /// inputTile for tiles t .. t + 7 (reads 2 t .. 2 t + 17 of each row).
    static void inputTiles8(const Rows& rows, int64_t t, float* out, int64_t posStride) {
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

    /// outputTile for tiles t .. t + 7, every output column inside the image: writes 16 pixels of
    /// each output row r with dst[r] at dst[r] + 2 t, epilogue applied.
    static void outputTiles8(const float* m, int64_t ld, int64_t t, const OutputEpilogue& e,
                             const Outputs& dst, const Residuals& res) {
        __m256 s[4][2]; // NOLINT: std::array drops __m256 alignment attributes
        for (int64_t i = 0; i < 4; ++i) {
            const __m256 m0 = _mm256_loadu_ps(m + (i * 4 + 0) * ld + t);
            const __m256 m1 = _mm256_loadu_ps(m + (i * 4 + 1) * ld + t);
            const __m256 m2 = _mm256_loadu_ps(m + (i * 4 + 2) * ld + t);
            const __m256 m3 = _mm256_loadu_ps(m + (i * 4 + 3) * ld + t);
            s[i][0] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
            s[i][1] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
        }
        const auto store = [&](__m256 c0, __m256 c1, float* row, const float* r) {
            // Interleave the tiles' two columns: (c0_0 c1_0 c0_1 c1_1 ..).
            const __m256 lo4 = _mm256_unpacklo_ps(c0, c1);
            const __m256 hi4 = _mm256_unpackhi_ps(c0, c1);
            storeWithEpilogue(_mm256_permute2f128_ps(lo4, hi4, 0x20), e, row + 2 * t,
                              r != nullptr ? r + 2 * t : nullptr);
            storeWithEpilogue(_mm256_permute2f128_ps(lo4, hi4, 0x31), e, row + 2 * t + 8,
                              r != nullptr ? r + 2 * t + 8 : nullptr);
        };
        store(_mm256_add_ps(_mm256_add_ps(s[0][0], s[1][0]), s[2][0]),
              _mm256_add_ps(_mm256_add_ps(s[0][1], s[1][1]), s[2][1]), dst[0], res[0]);
        if (dst[1] != nullptr) {
            store(_mm256_sub_ps(_mm256_sub_ps(s[1][0], s[2][0]), s[3][0]),
                  _mm256_sub_ps(_mm256_sub_ps(s[1][1], s[2][1]), s[3][1]), dst[1], res[1]);
        }
    }
#endif
};

/// F(4x4, 3x3) (Lavin and Gray's interpolation points 0, 1, -1, 2, -2): 6x6 input tiles, 36
/// positions, 36 multiplications per 16 outputs against F(2x2, 3x3)'s 16 per 4.
///   input  B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0;
///                 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
///   weight G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6;
///                 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
///   output A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
/// Its transforms scale by up to 8, so it rounds about ten times more than F(2x2, 3x3): some
/// 3e-6 of the output's rms per layer against 3e-7.
struct F4x4 : TileShape<4> {

    /// a b + c and c - a b, one rounding each, for floats and vectors alike: every product sits
    /// in one of these, so no compiler contraction can make the scalar tiles round differently
    /// from the vector ones (a tile takes either path depending on where its block starts, and
    /// results must not depend on the batch).
    static float fmadd(float a, float b, float c) { return std::fma(a, b, c); }

    static float fnmadd(float a, float b, float c) { return std::fma(-a, b, c); }

    static float splat(float /*like*/, float v) { return v; }
#if defined(__AVX2__) && defined(__FMA__)
    static __m256 fmadd(__m256 a, __m256 b, __m256 c) {
        return _mm256_fmadd_ps(a, b, c);
    }

    static __m256 fnmadd(__m256 a, __m256 b, __m256 c) {
        return _mm256_fnmadd_ps(a, b, c);
    }

    static __m256 splat(__m256 /*like*/, float v) {
        return _mm256_set1_ps(v);
    }
#endif

    /// k = B^T d for six values d (floats or vectors of them: the same formulas for both paths).
    template <typename V>
    static void inputTransform(const V* d, V* k) {
        const V four = splat(V{}, 4.0F);
        const V five = splat(V{}, 5.0F);
        const V two = splat(V{}, 2.0F);
        const V t1 = fnmadd(four, d[2], d[4]); // d4 - 4 d2
        const V t2 = fnmadd(four, d[1], d[3]); // d3 - 4 d1
        const V t3 = d[4] - d[2];
        const V t4 = d[3] - d[1];
        k[0] = fmadd(four, d[0], fnmadd(five, d[2], d[4]));
        k[1] = t1 + t2;
        k[2] = t1 - t2;
        k[3] = fmadd(two, t4, t3);
        k[4] = fnmadd(two, t4, t3);
        k[5] = fmadd(four, d[1], fnmadd(five, d[3], d[5]));
    }

    /// o = A^T m for six values m.
    template <typename V>
    static void outputTransform(const V* m, V* o) {
        const V sum12 = m[1] + m[2];
        const V diff12 = m[1] - m[2];
        const V sum34 = m[3] + m[4];
        const V diff34 = m[3] - m[4];
        o[0] = m[0] + sum12 + sum34;
        o[1] = fmadd(splat(V{}, 2.0F), diff34, diff12);
        o[2] = fmadd(splat(V{}, 4.0F), sum34, sum12);
        o[3] = fmadd(splat(V{}, 8.0F), diff34, diff12) + m[5];
    }

    /// The second, column-wise pass of a 2-D transform: for each column k of rows[6][Columns],
    /// out = transform(column) (Out values) and store(i, k, out[i]); V is a float or a vector
    /// of eight tiles' floats.
    template <size_t Out, typename V, size_t Columns, typename Transform, typename Store>
    static void transformColumns(const V (&rows)[6][Columns], Transform transform, // NOLINT
                                 Store store) {
        for (size_t k = 0; k < Columns; ++k) {
            V column[6]; // NOLINT: C array of vectors
            V out[Out];  // NOLINT
            for (size_t i = 0; i < 6; ++i) {
                column[i] = rows[i][k];
            }
            transform(column, out);
            for (size_t i = 0; i < Out; ++i) {
                store(i, k, out[i]);
            }
        }
    }

    static void inputTile(const Rows& rows, int64_t t, float* out, int64_t posStride) {
        float r[6][6]; // NOLINT: rows of d B
        for (size_t i = 0; i < 6; ++i) {
            inputTransform(rows[i] + 4 * t, r[i]);
        }
        transformColumns<6>(
            r, [](const float* d, float* k) { inputTransform(d, k); },
            [&](size_t i, size_t k, float v) {
                out[static_cast<int64_t>(i * 6 + k) * posStride + t] = v;
            });
    }

    /// Outputs of tile t row by row (16).
    static std::array<float, 16> outputTile(const float* m, int64_t ld, int64_t t) {
        float s[6][4]; // NOLINT: rows of M A
        for (int64_t i = 0; i < 6; ++i) {
            float row[6]; // NOLINT
            for (int64_t j = 0; j < 6; ++j) {
                row[j] = m[(i * 6 + j) * ld + t];
            }
            outputTransform(row, s[i]);
        }
        std::array<float, 16> y{};
        transformColumns<4>(
            s, [](const float* m, float* o) { outputTransform(m, o); },
            [&](size_t r, size_t c, float v) { y[r * 4 + c] = v; });
        return y;
    }

    /// Filters transformed at once by filterTiles.
    static constexpr int kLanes = 8;

    /// U = G g G^T of `count` (at most kLanes) filters, g[tap][lane], into at[lane]: position
    /// i * 6 + k at at[lane][(i * 6 + k) * panelSize]. In double, as 1/6, 1/12 and 1/24 are not
    /// exact in float, multiplied by the reciprocals (within an ulp of double of the quotients, far
    /// below float's rounding); lane by lane, so that the compiler vectorises across the filters.
    /// One filter at a time, with a division per product, a 512 x 512 layer took 36 ms on one
    /// thread (11-12 ms in lanes).
    static void filterTiles(const std::array<std::array<double, kLanes>, 9>& g, int count,
                            const std::array<float*, kLanes>& at, int64_t panelSize) {
        constexpr double kSixth = 1.0 / 6.0;
        constexpr double kTwelfth = 1.0 / 12.0;
        constexpr double kTwentyFourth = 1.0 / 24.0;
        using Lanes = std::array<double, kLanes>;
        const auto transform = [&](const Lanes& g0, const Lanes& g1, const Lanes& g2,
                                   std::array<Lanes, 6>& out) {
            for (size_t l = 0; l < kLanes; ++l) {
                const double outer = g0[l] * kTwentyFourth + g2[l] * kSixth;
                out[0][l] = g0[l] * 0.25;
                out[1][l] = -(g0[l] + g1[l] + g2[l]) * kSixth;
                out[2][l] = -(g0[l] - g1[l] + g2[l]) * kSixth;
                out[3][l] = outer + g1[l] * kTwelfth;
                out[4][l] = outer - g1[l] * kTwelfth;
                out[5][l] = g2[l];
            }
        };
        std::array<std::array<Lanes, 6>, 3> columns{}; // G g, column j
        for (size_t j = 0; j < 3; ++j) {
            transform(g[j], g[3 + j], g[6 + j], columns[j]);
        }
        std::array<Lanes, 6> row{};
        for (size_t i = 0; i < 6; ++i) {
            transform(columns[0][i], columns[1][i], columns[2][i], row);
            for (size_t k = 0; k < 6; ++k) {
                const int64_t offset = static_cast<int64_t>(i * 6 + k) * panelSize;
                for (size_t l = 0; l < static_cast<size_t>(count); ++l) {
                    at[l][offset] = static_cast<float>(row[k][l]);
                }
            }
        }
    }

#if defined(__AVX2__) && defined(__FMA__)
    /// Four floats at p in the low lane and four at p + 16 in the high one.
    static __m256 loadLanes(const float* p) {
        return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p)), _mm_loadu_ps(p + 16),
                                    1);
    }

    /// Transposes the 4x4 blocks of a, b, c, d lane by lane.
    static void transposeLanes(__m256& a, __m256& b, __m256& c, __m256& d) {
        const __m256 t0 = _mm256_unpacklo_ps(a, b); // a0 b0 a1 b1
        const __m256 t1 = _mm256_unpackhi_ps(a, b); // a2 b2 a3 b3
        const __m256 t2 = _mm256_unpacklo_ps(c, d); // c0 d0 c1 d1
        const __m256 t3 = _mm256_unpackhi_ps(c, d); // c2 d2 c3 d3
        a = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
        b = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
        c = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
        d = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    }

    /// inputTile for tiles t .. t + 7 (reads 4 t .. 4 t + 35 of each row). Lanes load tiles
    /// (t + j, t + 4 + j), so the lane-wise transpose leaves each column with the tiles in order.
    static void inputTiles8(const Rows& rows, int64_t t, float* out, int64_t posStride) {
        __m256 r[6][6]; // NOLINT: rows of d B
        for (size_t i = 0; i < 6; ++i) {
            const float* s = rows[i] + 4 * t;
            __m256 d[6]; // NOLINT: column j of the eight tiles
            d[0] = loadLanes(s);
            d[1] = loadLanes(s + 4);
            d[2] = loadLanes(s + 8);
            d[3] = loadLanes(s + 12);
            const __m256 next = loadLanes(s + 16);
            // Columns 4 and 5 are columns 0 and 1 of the tiles one further on.
            const __m256 u0 = _mm256_unpacklo_ps(d[1], d[2]);
            const __m256 u1 = _mm256_unpacklo_ps(d[3], next);
            d[4] = _mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(1, 0, 1, 0));
            d[5] = _mm256_shuffle_ps(u0, u1, _MM_SHUFFLE(3, 2, 3, 2));
            transposeLanes(d[0], d[1], d[2], d[3]);
            inputTransform(d, r[i]);
        }
        transformColumns<6>(
            r, [](const __m256* d, __m256* k) { inputTransform(d, k); },
            [&](size_t i, size_t k, __m256 v) {
                _mm256_storeu_ps(out + static_cast<int64_t>(i * 6 + k) * posStride + t, v);
            });
    }

    /// outputTile for tiles t .. t + 7, every output column inside the image: writes 32 pixels
    /// of each output row r with dst[r] at dst[r] + 4 t, epilogue applied.
    static void outputTiles8(const float* m, int64_t ld, int64_t t, const OutputEpilogue& e,
                             const Outputs& dst, const Residuals& res) {
        __m256 s[6][4]; // NOLINT: rows of M A
        for (int64_t i = 0; i < 6; ++i) {
            __m256 row[6]; // NOLINT
            for (int64_t j = 0; j < 6; ++j) {
                row[j] = _mm256_loadu_ps(m + (i * 6 + j) * ld + t);
            }
            outputTransform(row, s[i]);
        }
        __m256 y[4][4]; // NOLINT: y[r][c], output row r, column c of each tile
        transformColumns<4>(
            s, [](const __m256* m, __m256* o) { outputTransform(m, o); },
            [&](size_t r, size_t c, __m256 v) { y[r][c] = v; });
        for (size_t r = 0; r < 4; ++r) {
            if (dst[r] == nullptr) {
                continue;
            }
            // Lane-wise transpose: (tile t + j | tile t + 4 + j), four columns each.
            transposeLanes(y[r][0], y[r][1], y[r][2], y[r][3]);
            float* row = dst[r] + 4 * t;
            const float* residual = res[r] != nullptr ? res[r] + 4 * t : nullptr;
            const auto at = [&](int64_t i) { return residual != nullptr ? residual + i : nullptr; };
            storeWithEpilogue(_mm256_permute2f128_ps(y[r][0], y[r][1], 0x20), e, row, at(0));
            storeWithEpilogue(_mm256_permute2f128_ps(y[r][2], y[r][3], 0x20), e, row + 8, at(8));
            storeWithEpilogue(_mm256_permute2f128_ps(y[r][0], y[r][1], 0x31), e, row + 16, at(16));
            storeWithEpilogue(_mm256_permute2f128_ps(y[r][2], y[r][3], 0x31), e, row + 24, at(24));
        }
    }
#endif
};

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
template <typename F>
void transformInputRun(const float* first, int64_t width, int64_t count, float* out,
                       int64_t posStride) {
    typename F::Rows rows{};
    for (size_t i = 0; i < rows.size(); ++i) {
        rows[i] = first + static_cast<int64_t>(i) * width;
    }
    int64_t t = 0;
#if defined(__AVX2__) && defined(__FMA__)
    for (; t + 8 <= count; t += 8) {
        F::inputTiles8(rows, t, out, posStride);
    }
    if (t < count && count >= 8) {
        // The last tiles as one more vector that overlaps the previous one.
        F::inputTiles8(rows, count - 8, out, posStride);
        t = count;
    }
#endif
    for (; t < count; ++t) {
        F::inputTile(rows, t, out, posStride);
    }
}

#if defined(__AVX2__) && defined(__FMA__)
/// The output transform of tiles t .. t + 7 of a run whose last tiles these are (fewer than eight
/// left: all of a run on planes under 32 pixels wide, such as SqueezeNet's 27 x 27 and 13 x 13,
/// whose tiles one at a time took twice the GEMMs' time; or a tile cut by the image's edge): into
/// a local block without the epilogue, then the `columns` output columns inside the image from
/// tile t on. The GEMM outputs read past the run's last tile lie within the block's scratch
/// (positionStride leaves a line after the filters' rows).
template <typename F>
void outputLastTiles(const float* m, int64_t ld, int64_t t, int64_t columns,
                     const OutputEpilogue& e, const typename F::Outputs& dst,
                     const typename F::Residuals& res) {
    constexpr int64_t kTile = F::kTile;
    constexpr OutputEpilogue kNone{0.0F, -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::infinity()};
    std::array<std::array<float, 8 * kTile>, kTile> block{};
    typename F::Outputs local{};
    for (size_t r = 0; r < local.size(); ++r) {
        local[r] = dst[r] != nullptr ? block[r].data() : nullptr;
    }
    F::outputTiles8(m + t, ld, 0, kNone, local, typename F::Residuals{});
    for (size_t r = 0; r < dst.size(); ++r) {
        if (dst[r] == nullptr) {
            continue;
        }
        for (int64_t c = 0; c < columns; ++c) {
            const int64_t at = kTile * t + c;
            dst[r][at] =
                e(block[r][static_cast<size_t>(c)], res[r] != nullptr ? res[r] + at : nullptr);
        }
    }
}
#endif

/// Output transform of one tile run of one filter (the positions' rows of the GEMM outputs at
/// `m`, row stride `ld`) into the output plane, epilogue included.
template <typename F>
void transformOutputRun(const Conv2d& p, const float* m, int64_t ld, const TileRun& run,
                        int64_t filter, const ConvEpilogue& epilogue, float* y) {
    constexpr int64_t kTile = F::kTile;
    const int64_t planeOffset = (run.image * p.m + filter) * p.outPixels();
    const int64_t outPlane = run.image * p.outImageStride() + filter * p.outPixels();
    const OutputEpilogue e{epilogue.bias != nullptr ? epilogue.bias[filter] : 0.0F, epilogue.lo,
                           epilogue.hi};
    const int64_t oy = kTile * run.ty;
    const int64_t x0 = kTile * run.tx0;
    typename F::Outputs dst{};
    typename F::Residuals res{};
    for (size_t r = 0; r < dst.size(); ++r) {
        const int64_t offset = (oy + static_cast<int64_t>(r)) * p.ow + x0;
        if (oy + static_cast<int64_t>(r) < p.oh) {
            dst[r] = y + outPlane + offset;
            res[r] =
                epilogue.residual != nullptr ? epilogue.residual + planeOffset + offset : nullptr;
        }
    }
    int64_t t = 0;
#if defined(__AVX2__) && defined(__FMA__)
    // Tiles whose output columns all lie inside the image.
    const int64_t whole = std::min(run.count, (p.ow - x0) / kTile);
    for (; t + 8 <= whole; t += 8) {
        F::outputTiles8(m, ld, t, e, dst, res);
    }
    if (t < whole && whole >= 8) {
        // Overlaps the previous vector: its tiles are written again with the same values (the
        // residual is never the output itself).
        F::outputTiles8(m, ld, whole - 8, e, dst, res);
        t = whole;
    }
    if (t < run.count) {
        outputLastTiles<F>(m, ld, t, std::min(kTile * (run.count - t), p.ow - x0 - kTile * t), e,
                           dst, res);
        t = run.count;
    }
#endif
    for (; t < run.count; ++t) {
        const auto v = F::outputTile(m, ld, t);
        const int64_t columns = std::min(kTile, p.ow - x0 - kTile * t);
        for (size_t r = 0; r < dst.size(); ++r) {
            if (dst[r] == nullptr) {
                continue;
            }
            for (int64_t c = 0; c < columns; ++c) {
                const int64_t at = kTile * t + c;
                dst[r][at] = e(v[r * kTile + static_cast<size_t>(c)],
                               res[r] != nullptr ? res[r] + at : nullptr);
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

/// Tiles per block: up to 4 MiB of transformed input and output (positions x (channels +
/// filters) floats per tile), at least one strip, in blocks of equal size so that no block runs
/// all the GEMMs over the weights for a few leftover tiles. Blocks larger than the 1 MiB L2
/// measured faster than L2-sized ones (ResNet-18's 3x3 layers, one thread): each block streams
/// all transformed weights, and the transformed tiles stream well from L3. As many blocks
/// as threads or a multiple of them: each thread runs whole blocks, and SqueezeNet's 55 x 55
/// layers at batch 8 made five, three on one thread and two on the other.
int64_t tilesPerBlock(const Conv2d& p, int64_t positions, int64_t total) {
    constexpr int64_t kBudget = int64_t{4} << 20;
    const int64_t perTile = positions * (p.c + p.m) * static_cast<int64_t>(sizeof(float));
    const int64_t most = std::max(kGemmCols, kBudget / perTile);
    int64_t blocks = (total + most - 1) / most;
    const int64_t threads = numThreads();
    if (blocks >= threads) {
        blocks = (blocks + threads - 1) / threads * threads;
    }
    return std::max<int64_t>(1, (total + blocks - 1) / blocks);
}

/// Tiles [t0, t1) of the batch: input transform, one GEMM per position, output transform.
/// `inner` splits each stage over the threads (used when there are fewer blocks than threads).
template <typename F>
void runBlock(const Conv2d& p, const WinogradTileGrid& grid, const float* x,
              const float* packedWeights, const ConvEpilogue& epilogue, float* y, int64_t t0,
              int64_t t1, bool inner, BlockScratch& scratch) {
    constexpr int64_t kTile = F::kTile;
    constexpr int64_t kPositions = F::kPositions;
    const int64_t tiles = t1 - t0;
    // Row stride of the transformed input: whole strips, and an odd number of them so that the
    // rows the GEMM reads one after another do not share cache sets.
    const int64_t ldv = roundUpToStrip(tiles) | kGemmCols;
    // The positions of a tile are written (input) and read (output) together: their strides
    // are 4 KiB plus one cache line, so that they fall into different cache sets.
    const int64_t inputStride = positionStride(p.c * ldv);
    const int64_t outputStride = positionStride(p.m * tiles);
    float* v = scratch.transformedInput.get(static_cast<size_t>(kPositions * inputStride));
    float* mOut = scratch.transformedOutput.get(static_cast<size_t>(kPositions * outputStride));
    std::vector<std::pair<int64_t, TileRun>> runs; // (offset in the block, run)
    forEachTileRun(grid, t0, t1,
                   [&runs](int64_t offset, const TileRun& run) { runs.emplace_back(offset, run); });
    const int64_t threads = inner ? numThreads() : 1;
    // Padded input rows: tile column tx reads padded columns T tx .. T tx + T + 1; the vector
    // transform of F(4x4, 3x3) reads two columns more.
    const int64_t width = kTile * (grid.cols + 1);

    const auto inputChannels = [&](int64_t c0, int64_t c1) {
        thread_local ScratchFloats padding;
        for (int64_t ch = c0; ch < c1; ++ch) {
            // Runs of one image at a time: pad the input rows their tile rows read, once.
            for (size_t i = 0; i < runs.size();) {
                const int64_t image = runs[i].second.image;
                size_t j = i;
                while (j < runs.size() && runs[j].second.image == image) {
                    ++j;
                }
                const int64_t ty0 = runs[i].second.ty;
                const int64_t rows = kTile * (runs[j - 1].second.ty - ty0) + F::kAlpha;
                float* padded = padding.get(static_cast<size_t>(rows * width));
                padRows(p, x + (image * p.c + ch) * p.h * p.w, kTile * ty0 - p.pt, rows, width,
                        padded);
                for (; i < j; ++i) {
                    const auto& [offset, run] = runs[i];
                    const float* first = padded + kTile * (run.ty - ty0) * width + kTile * run.tx0;
                    transformInputRun<F>(first, width, run.count, v + ch * ldv + offset,
                                         inputStride);
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
                transformOutputRun<F>(p, mOut + f * tiles + offset, outputStride, run, f, epilogue,
                                      y);
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

template <typename F>
void convolve(const Conv2d& p, const float* x, const float* packedWeights,
              const ConvEpilogue& epilogue, float* y, int64_t blockTiles) {
    const WinogradTileGrid grid(p, F::kTile);
    const int64_t total = p.n * grid.perImage;
    const int64_t block = blockTiles > 0 ? blockTiles : tilesPerBlock(p, F::kPositions, total);
    const int64_t blocks = (total + block - 1) / block;
    if (blocks < numThreads()) {
        thread_local BlockScratch scratch;
        for (int64_t b = 0; b < blocks; ++b) {
            runBlock<F>(p, grid, x, packedWeights, epilogue, y, b * block,
                        std::min(total, (b + 1) * block), true, scratch);
        }
        return;
    }
    parallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
        // Reused across calls: fresh pages would cost page faults on every convolution.
        thread_local BlockScratch scratch;
        for (int64_t b = begin; b < end; ++b) {
            runBlock<F>(p, grid, x, packedWeights, epilogue, y, b * block,
                        std::min(total, (b + 1) * block), false, scratch);
        }
    });
}

/// The variant `tile` asks for, or the one winogradTileFor picks for these weights.
WinogradTile resolve(WinogradTile tile, int64_t filters, int64_t channels) {
    return tile == WinogradTile::automatic ? winogradTileFor(filters, channels) : tile;
}

int64_t positionsOf(WinogradTile tile) {
    return tile == WinogradTile::f4x4 ? F4x4::kPositions : F2x2::kPositions;
}

/// packTransformed's panel of filters [first, last) by F::filterTiles, kLanes filters at a time.
template <typename F, typename Taps>
void transformInLanes(int64_t first, int64_t last, int64_t channels, Taps taps, float* panel,
                      int64_t panelSize) {
    std::array<std::array<double, F::kLanes>, 9> g{};
    std::array<float*, F::kLanes> at{};
    int count = 0;
    for (int64_t c = 0; c < channels; ++c) {
        for (int64_t f = first; f < last; ++f) {
            const std::array<float, 9> one = taps(f, c);
            for (size_t tap = 0; tap < 9; ++tap) {
                g[tap][static_cast<size_t>(count)] = one[tap];
            }
            at[static_cast<size_t>(count)] = panel + c * kGemmRows + (f - first);
            if (++count == F::kLanes) {
                F::filterTiles(g, count, at, panelSize);
                count = 0;
            }
        }
    }
    if (count > 0) {
        F::filterTiles(g, count, at, panelSize);
    }
}

/// U = G g G^T of every (filter, channel) 3x3 filter g = taps(f, c) (row-major), written straight
/// into the positions' GEMM panels (packWeights' layout: panel of kGemmRows filters, then
/// channel, then the filter within the panel; padding filters zero).
template <typename F, typename Taps>
void packTransformed(int64_t filters, int64_t channels, Taps taps, float* packed) {
    const int64_t panelSize = packedWeightsSize(filters, channels);
    // Panels on the threads: a model's Winograd weights take tens of milliseconds to transform,
    // paid when the executor is created (and on the first backward sweep for dx's).
    const int64_t panels = (filters + kGemmRows - 1) / kGemmRows;
    // Channel after channel, the panel's filters innermost: each position's kGemmRows floats of
    // one channel are adjacent.
    parallelFor(panels, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t panelIndex = p0; panelIndex < p1; ++panelIndex) {
            const int64_t first = panelIndex * kGemmRows;
            const int64_t last = std::min(filters, first + kGemmRows);
            float* panel = packed + first * channels;
            if (last - first < kGemmRows) {
                // Only a short last panel has padding filters, which must be zero. The whole
                // buffer was zeroed here before, on one thread: a third of resnet18's weight
                // packing, page faults included, for the padding of one panel.
                for (int64_t position = 0; position < F::kPositions; ++position) {
                    std::fill_n(panel + position * panelSize, kGemmRows * channels, 0.0F);
                }
            }
            transformInLanes<F>(first, last, channels, taps, panel, panelSize);
        }
    });
}

template <typename Taps>
void packTransformed(WinogradTile tile, int64_t filters, int64_t channels, Taps taps,
                     float* packed) {
    if (resolve(tile, filters, channels) == WinogradTile::f4x4) {
        packTransformed<F4x4>(filters, channels, taps, packed);
    } else {
        packTransformed<F2x2>(filters, channels, taps, packed);
    }
}

} // namespace

bool winogradApplies(const Conv2d& p) {
    return p.kh == 3 && p.kw == 3 && p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 &&
           p.group == 1 && p.c >= 16 && p.m >= 16;
}

WinogradTile winogradTileFor(int64_t filters, int64_t channels) {
    return filters * channels <= kWinogradLargeTileMostWeights ? WinogradTile::f4x4
                                                               : WinogradTile::f2x2;
}

int64_t winogradWeightsSize(int64_t filters, int64_t channels, WinogradTile tile) {
    return positionsOf(resolve(tile, filters, channels)) * packedWeightsSize(filters, channels);
}

void packWinogradWeights(const float* w, int64_t filters, int64_t channels, float* packed,
                         WinogradTile tile) {
    packTransformed(
        tile, filters, channels,
        [&](int64_t f, int64_t c) {
            std::array<float, 9> g{};
            std::copy_n(w + (f * channels + c) * 9, 9, g.begin());
            return g;
        },
        packed);
}

void winogradConv2d(const Conv2d& p, const float* x, const float* packedWeights,
                    const ConvEpilogue& epilogue, float* y, int64_t blockTiles, WinogradTile tile) {
    if (resolve(tile, p.m, p.c) == WinogradTile::f4x4) {
        convolve<F4x4>(p, x, packedWeights, epilogue, y, blockTiles);
    } else {
        convolve<F2x2>(p, x, packedWeights, epilogue, y, blockTiles);
    }
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

WinogradTile sweptInputGradTile(int64_t images, int64_t height, int64_t width, int64_t filters,
                                int64_t channels) {
    const int64_t tiles = images * ((height + 3) / 4) * ((width + 3) / 4);
    // Multiplies per image: 36 positions per F(4x4) tile against 16 per F(2x2) tile. Planes
    // whose sizes F(4x4) covers with a wide margin (14: 16 rows for 14) save too little for its
    // heavier transforms.
    const int64_t large = 36 * ((height + 3) / 4) * ((width + 3) / 4);
    const int64_t small = 16 * ((height + 1) / 2) * ((width + 1) / 2);
    return tiles >= 32 && 2 * small >= 3 * large ? WinogradTile::f4x4
                                                 : winogradTileFor(channels, filters);
}

int64_t winogradInputGradWeightsSize(int64_t filters, int64_t channels, WinogradTile tile) {
    return winogradWeightsSize(channels, filters, tile);
}

void packWinogradInputGradWeights(const float* w, int64_t filters, int64_t channels, float* packed,
                                  WinogradTile tile) {
    // Filter c of dx's convolution, channel m: w[m, c] turned by 180 degrees.
    packTransformed(
        tile, channels, filters,
        [&](int64_t f, int64_t c) {
            const float* src = w + (c * channels + f) * 9;
            return std::array<float, 9>{src[8], src[7], src[6], src[5], src[4],
                                        src[3], src[2], src[1], src[0]};
        },
        packed);
}

void winogradInputGrad(const Conv2d& p, const float* w, const float* dy, float* dx,
                       const float* packed, WinogradTile tile) {
    const Conv2d q = inputGradGeometry(p);
    if (packed == nullptr) {
        thread_local ScratchFloats scratch;
        float* weights =
            scratch.get(static_cast<size_t>(winogradInputGradWeightsSize(p.m, p.c, tile)));
        packWinogradInputGradWeights(w, p.m, p.c, weights, tile);
        packed = weights;
    }
    winogradConv2d(q, dy, packed, ConvEpilogue{}, dx, 0, tile);
}

} // namespace qs::runtime
