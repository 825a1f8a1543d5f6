// The packed GEMM behind Conv: the AVX-512 micro-kernel (two strips per tile) against the AVX2
// one, and both against a plain triple loop, over shapes that exercise every path: the shallow
// (panel-outer) and deep (strip-outer) depth blocks, odd strip counts, edge strips of every
// width, partial last panels of A, the row split of small N, and the fused epilogue.

#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace qs::runtime {
namespace {

std::vector<float> randomVector(std::mt19937& rng, int64_t size) {
    std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
    std::vector<float> v(static_cast<size_t>(size));
    for (float& x : v) {
        x = uniform(rng);
    }
    return v;
}

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
        {13, 80, 300},   // 5 strips (a pair, a pair, a single), two depth blocks, 1 padding row
        {64, 1000, 70},  // 63 strips and an edge of 8 columns
        {20, 1033, 512}, // deep order (strip-outer): strip pairs, then a lone edge strip of 9
        {7, 45, 17},     // two strips and an edge of 13 columns
        {96, 200, 576},  // row split (small N) over three depth blocks
        {32, 3136, 64},  // a 1x1 convolution on a 56x56 image
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
