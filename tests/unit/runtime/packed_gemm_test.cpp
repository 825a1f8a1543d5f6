// The packed GEMM behind Conv: the AVX-512 micro-kernels (four strips per tile from 128 steps
// deep, two, and one for the last strip of an odd count) against the AVX2 one, and both against a
// plain triple loop, over shapes that exercise every path: the shallow (panel-outer) and deep
// (strip-outer) depth blocks, odd strip counts, edge strips of every width, partial last panels of
// A, the row split of small N, and the fused epilogue.

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "tests/unit/runtime/random_vector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace qs::runtime {
namespace {

using test::randomVector;

struct GemmCase {
    int64_t m;
    int64_t n;
    int64_t k;
};

/// C = epilogue(A B) through packedGemm, B packed from a row-major [k x n] matrix.
std::vector<float> runPackedGemm(const GemmCase& g, const std::vector<float>& a,
                                 const std::vector<float>& b, const ConvEpilogue& e,
                                 const std::vector<float>& residual) {
    std::vector<float> packedA(static_cast<size_t>(packedWeightsSize(g.m, g.k)));
    packWeights(a.data(), g.m, g.k, g.k, packedA.data());
    const PackColumns pack = [&](int64_t j0, int64_t count, float* strips) {
        const int64_t stripCount = (count + kGemmCols - 1) / kGemmCols;
        for (int64_t s = 0; s < stripCount; ++s) {
            for (int64_t kk = 0; kk < g.k; ++kk) {
                for (int64_t j = 0; j < kGemmCols; ++j) {
                    const int64_t col = j0 + s * kGemmCols + j;
                    strips[(s * g.k + kk) * kGemmCols + j] =
                        col < j0 + count ? b[static_cast<size_t>(kk * g.n + col)] : 0.0F;
                }
            }
        }
    };
    std::vector<float> c(static_cast<size_t>(g.m * g.n), std::nanf(""));
    GemmOutput out{c.data(), g.n, e.residual != nullptr ? residual.data() : nullptr, 0};
    packedGemm(g.m, g.n, g.k, packedA.data(), pack, out, e);
    return c;
}

TEST(PackedGemm, TheAvx512KernelEqualsTheAvx2OneBitForBitAndBothTheLoop) {
    const bool wideBefore = setWideGemmKernel(true);
    if (!wideGemmKernelActive()) {
        setWideGemmKernel(wideBefore);
        GTEST_SKIP() << "this processor has no AVX-512F: only the AVX2 kernel runs here";
    }
    std::mt19937 rng(11);
    const std::vector<GemmCase> cases = {
        {6, 32, 9},      // one wide tile
        {13, 80, 300},   // 5 strips: 12 x 32 tiles, then for the third panel (1 row, 5 padding
                         // rows) a quad and a single; two depth blocks of 150
        {64, 1000, 70},  // 63 strips and an edge of 8 columns
        {20, 1033, 512}, // deep order (strip-outer): strip pairs, then a lone edge strip of 9
        {7, 45, 17},     // two strips and an edge of 13 columns
        {96, 200, 576},  // row split (small N) over three depth blocks
        {32, 3136, 64},  // a 1x1 convolution on a 56x56 image
        {70, 49, 600},   // a 7x7 image: a pair, the odd strip, an edge of 1
        {12, 112, 256},  // 7 strips, two panels: three 12 x 32 tiles and a single
        {18, 112, 256},  // three panels: the third at the quad's least depth, a quad, a pair
        {18, 112, 127},  // one step shallower: the third in three pairs
        // Tall tiles (several panels at once) for the odd strip and the edges: panel groups of
        // 4 with 1 to 3 panels left over, edges of 1 to 4 columns (two steps per vector, tails
        // of 1 to 3 steps), 9 to 15 columns, and the deep order's last pass.
        {13, 50, 7},     // three panels: a pair, the odd strip, an edge of 2; depth 7
        {25, 35, 130},   // 4 + 1 panels: a pair, an edge of 3 (two streams); depth 130
        {31, 20, 258},   // 4 + 2 panels: the odd strip, an edge of 4; two depth blocks of 129
        {19, 33, 301},   // four panels: a pair, an edge of 1; depth blocks of 151 and 150
        {40, 61, 66},    // 4 + 3 panels: three strips, an edge of 13 through the tall tile
        {20, 1044, 300}, // deep order: the last pass a full strip and an edge of 4
        {9, 4, 5},       // an edge of 4 and nothing else, one partial panel pair
    };
    for (const int threads : {1, 2}) {
        setNumThreads(threads);
        for (const GemmCase& g : cases) {
            SCOPED_TRACE(::testing::Message()
                         << g.m << "x" << g.n << "x" << g.k << ", " << threads << " threads");
            const std::vector<float> a = randomVector(rng, g.m * g.k);
            const std::vector<float> b = randomVector(rng, g.k * g.n);
            const std::vector<float> bias = randomVector(rng, g.m);
            const std::vector<float> residual = randomVector(rng, g.m * g.n);
            for (const bool fused : {false, true}) {
                const ConvEpilogue e =
                    fused ? ConvEpilogue{bias.data(), residual.data(), 0.0F, 6.0F} : ConvEpilogue{};
                setWideGemmKernel(false);
                const std::vector<float> narrow = runPackedGemm(g, a, b, e, residual);
                setWideGemmKernel(true);
                const std::vector<float> wide = runPackedGemm(g, a, b, e, residual);
                for (int64_t i = 0; i < g.m; ++i) {
                    for (int64_t j = 0; j < g.n; ++j) {
                        double sum = 0.0;
                        for (int64_t kk = 0; kk < g.k; ++kk) {
                            sum += static_cast<double>(a[static_cast<size_t>(i * g.k + kk)]) *
                                   b[static_cast<size_t>(kk * g.n + j)];
                        }
                        if (fused) {
                            sum += bias[static_cast<size_t>(i)] +
                                   residual[static_cast<size_t>(i * g.n + j)];
                            sum = std::min(std::max(sum, 0.0), 6.0);
                        }
                        const auto at = static_cast<size_t>(i * g.n + j);
                        ASSERT_EQ(wide[at], narrow[at])
                            << "row " << i << " column " << j << (fused ? " fused" : "");
                        ASSERT_NEAR(wide[at], sum, 1e-4 * (1.0 + std::abs(sum)))
                            << "row " << i << " column " << j << (fused ? " fused" : "");
                    }
                }
            }
        }
    }
    setWideGemmKernel(wideBefore);
    setNumThreads(0);
}

} // namespace
} // namespace qs::runtime

namespace qs::runtime {
namespace {

class GemmAddABtTest : public ::testing::TestWithParam<int> {};

// C += A B^T against the double loop, C starting from values of its own: both column orders and
// the row split (n below 256), several depth blocks (k above 256), edge strips, partial panels,
// row strides past the matrices' widths; and the same call nested inside a parallelFor chunk,
// which runs on that chunk's thread.
TEST_P(GemmAddABtTest, AddsAtimesBTransposedToC) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(41);
    for (const GemmCase g : {GemmCase{7, 37, 5}, GemmCase{20, 300, 700}, GemmCase{64, 147, 3136},
                             GemmCase{13, 1100, 49}, GemmCase{1, 16, 1}}) {
        SCOPED_TRACE(::testing::Message() << g.m << " x " << g.n << " x " << g.k);
        const int64_t lda = g.k + 3;
        const int64_t ldb = g.k + 1;
        const int64_t ldc = g.n + 2;
        const std::vector<float> a = randomVector(rng, g.m * lda);
        const std::vector<float> b = randomVector(rng, g.n * ldb);
        const std::vector<float> c0 = randomVector(rng, g.m * ldc);
        std::vector<double> expected(c0.begin(), c0.end());
        for (int64_t i = 0; i < g.m; ++i) {
            for (int64_t j = 0; j < g.n; ++j) {
                double sum = 0.0;
                for (int64_t kk = 0; kk < g.k; ++kk) {
                    sum += static_cast<double>(a[static_cast<size_t>(i * lda + kk)]) *
                           b[static_cast<size_t>(j * ldb + kk)];
                }
                expected[static_cast<size_t>(i * ldc + j)] += sum;
            }
        }
        for (const bool nested : {false, true}) {
            std::vector<float> c = c0;
            const auto run = [&] {
                gemmABt(g.m, g.n, g.k, a.data(), lda, b.data(), ldb, c.data(), ldc, true);
            };
            if (nested) {
                parallelFor(2, 1, [&](int64_t begin, int64_t) {
                    if (begin == 0) {
                        run();
                    }
                });
            } else {
                run();
            }
            for (int64_t i = 0; i < g.m; ++i) {
                for (int64_t j = 0; j < ldc; ++j) {
                    const auto at = static_cast<size_t>(i * ldc + j);
                    // Past column n the row stride's padding stays as it was.
                    const double want = j < g.n ? expected[at] : c0[at];
                    ASSERT_NEAR(c[at], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(g.k))))
                        << (nested ? "nested, " : "") << "row " << i << " column " << j;
                }
            }
        }
        // Written instead of added to: C's columns held NaN before, its padding stays.
        std::vector<float> c = c0;
        for (int64_t i = 0; i < g.m; ++i) {
            std::fill_n(c.begin() + i * ldc, g.n, std::nanf(""));
        }
        gemmABt(g.m, g.n, g.k, a.data(), lda, b.data(), ldb, c.data(), ldc, false);
        for (int64_t i = 0; i < g.m; ++i) {
            for (int64_t j = 0; j < ldc; ++j) {
                const auto at = static_cast<size_t>(i * ldc + j);
                const double want = j < g.n ? expected[at] - c0[at] : c0[at];
                ASSERT_NEAR(c[at], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(g.k))))
                    << "written, row " << i << " column " << j;
            }
        }
    }
    setNumThreads(threadsBefore);
}

INSTANTIATE_TEST_SUITE_P(Threads, GemmAddABtTest, ::testing::Values(1, 2));

// A pointwise convolution reads its input as B in place: every whole strip of columns straight
// from the rows of B (row stride ldb, wider than n, as an image's rows are not), a last partial
// strip copied out per depth block in the same pass (7 x 7 images: 49 = 3 x 16 + 1; 196 = 12 x 16
// + 4; 13 x 13 and 27 x 27: 9; 5, 8, 12 and 15 columns; more than one depth block). Nothing past
// B is read (B is sized exactly: ASan). The same tiles as packing every
// strip, so the same bits, with the fused epilogue, on one and two threads (few columns: the
// threads split the rows, 64 x 200 x 200, or one thread takes a product too small to split,
// 32 x 200 x 64); a row stride of 384 floats, whose rows share cache sets, under 64 rows of A
// (16 x 384 x 32); blocks deep enough (256 and 2 x 150 steps of 512 columns) for the pass over
// one pair of strips to prefetch the next pair, shallower ones whose first panel's tiles
// prefetch the next (24 x 784 x 96 in pairs, 64 x 200 x 200 in fours); and where it does not
// apply.
TEST_P(GemmAddABtTest, RowMajorBInPlaceEqualsPackedBBitForBit) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(43);
    for (const GemmCase g :
         {GemmCase{24, 784, 96}, GemmCase{7, 300, 5}, GemmCase{13, 1100, 49}, GemmCase{5, 40, 20},
          GemmCase{64, 200, 200}, GemmCase{32, 200, 64}, GemmCase{192, 49, 96},
          GemmCase{20, 196, 30}, GemmCase{9, 37, 40}, GemmCase{12, 49, 600}, GemmCase{16, 169, 64},
          GemmCase{10, 729, 24}, GemmCase{7, 47, 300}, GemmCase{40, 1000, 256},
          GemmCase{30, 1040, 300}, GemmCase{16, 384, 32}}) {
        SCOPED_TRACE(::testing::Message() << g.m << " x " << g.n << " x " << g.k);
        const std::vector<float> a = randomVector(rng, g.m * g.k);
        const std::vector<float> b = randomVector(rng, g.k * g.n);
        const std::vector<float> bias = randomVector(rng, g.m);
        const ConvEpilogue e{bias.data(), nullptr, 0.0F, 0.5F};
        const std::vector<float> packed = runPackedGemm(g, a, b, e, {});
        std::vector<float> packedA(static_cast<size_t>(packedWeightsSize(g.m, g.k)));
        packWeights(a.data(), g.m, g.k, g.k, packedA.data());
        ASSERT_TRUE(packedGemmReadsBInPlace(g.m, g.n, g.n));
        std::vector<float> inPlace(static_cast<size_t>(g.m * g.n), std::nanf(""));
        packedGemmRowMajorB(g.m, g.n, g.k, packedA.data(), b.data(), g.n,
                            GemmOutput{inPlace.data(), g.n}, e);
        for (size_t i = 0; i < packed.size(); ++i) {
            ASSERT_EQ(inPlace[i], packed[i]) << "element " << i;
        }
    }
    EXPECT_FALSE(packedGemmReadsBInPlace(16, 15, 15)) << "no whole strip";
    EXPECT_FALSE(packedGemmReadsBInPlace(kInPlaceSharedSetsMaxRows + 1, 256, 256))
        << "rows sharing cache sets, read by many rows of A";
    EXPECT_TRUE(packedGemmReadsBInPlace(kInPlaceSharedSetsMaxRows, 256, 256))
        << "rows sharing cache sets, read by few rows of A";
    EXPECT_TRUE(packedGemmReadsBInPlace(256, 200, 200)) << "the row split";
    setNumThreads(threadsBefore);
}

/// Row 0 of A holds a NaN: every column of C's row 0 must be NaN, row 1 none, with the AVX2 and
/// AVX-512 kernels, with and without a clamp.
void checkNaNRow(std::mt19937& rng, const GemmCase& g) {
    SCOPED_TRACE(::testing::Message() << g.m << "x" << g.n << "x" << g.k);
    std::vector<float> a = randomVector(rng, g.m * g.k);
    a[3] = std::nanf(""); // row 0
    const std::vector<float> b = randomVector(rng, g.k * g.n);
    const std::vector<float> bias = randomVector(rng, g.m);
    for (const bool wide : {false, true}) {
        setWideGemmKernel(wide);
        for (const bool clamped : {false, true}) {
            const ConvEpilogue e =
                clamped ? ConvEpilogue{bias.data(), nullptr, 0.0F, 6.0F} : ConvEpilogue{};
            const std::vector<float> c = runPackedGemm(g, a, b, e, {});
            for (int64_t j = 0; j < g.n; ++j) {
                EXPECT_TRUE(std::isnan(c[static_cast<size_t>(j)]))
                    << (wide ? "wide, " : "") << (clamped ? "clamped, " : "") << "column " << j;
                EXPECT_FALSE(std::isnan(c[static_cast<size_t>(g.n + j)])) << "row 1 column " << j;
            }
        }
    }
}

// A NaN in A reaches every column of its row as NaN through full tiles (quad and pair), the odd
// strip and the edge alike, with and without a clamp (as std::max(v, lo) keeps it), in both
// kernels: the intrinsics return their second operand for a NaN, so the bound must come first.
// Panels as packWeights' header defines them, for partial last panels, depths around the
// 8-step blocks of the transposing path, a row stride wider than the depth, and sizes the
// threads split.
TEST(PackedGemm, PackedWeightsHoldEachPanelsRowsStepByStepWithZerosPastM) {
    const int threadsBefore = numThreads();
    std::mt19937 rng(11);
    for (const int threads : {1, 2}) {
        setNumThreads(threads);
        for (const int64_t m : {1, 5, 6, 7, 13, 256, 1003}) {
            for (const int64_t k : {1, 7, 8, 9, 17, 128, 131}) {
                const int64_t lda = k + 3;
                const std::vector<float> a = randomVector(rng, m * lda);
                std::vector<float> packed(static_cast<size_t>(packedWeightsSize(m, k)), -7.0F);
                packWeights(a.data(), m, k, lda, packed.data());
                for (int64_t row0 = 0; row0 < m; row0 += kGemmRows) {
                    for (int64_t kk = 0; kk < k; ++kk) {
                        for (int64_t r = 0; r < kGemmRows; ++r) {
                            const float expected =
                                row0 + r < m ? a[static_cast<size_t>((row0 + r) * lda + kk)] : 0.0F;
                            ASSERT_EQ(packed[static_cast<size_t>(row0 * k + kk * kGemmRows + r)],
                                      expected)
                                << "m " << m << " k " << k << " row " << row0 + r << " step " << kk
                                << " threads " << threads;
                        }
                    }
                }
            }
        }
    }
    setNumThreads(threadsBefore);
}

TEST(PackedGemm, ANaNStaysNaNThroughTheEpilogue) {
    const bool wideBefore = setWideGemmKernel(true);
    std::mt19937 rng(13);
    // Four strips (the quad kernel), a pair, the odd strip (tall), an edge of 5 columns; then
    // an edge of 3 (the tall column kernel) and one of 11 (a tall tile through scratch).
    for (const GemmCase& g : {GemmCase{8, 117, 130}, GemmCase{8, 115, 130}, GemmCase{8, 43, 9}}) {
        checkNaNRow(rng, g);
    }
    setWideGemmKernel(wideBefore);
}

} // namespace
} // namespace qs::runtime
