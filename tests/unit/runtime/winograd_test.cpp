// Winograd F(2x2, 3x3) and F(4x4, 3x3) against the defining sum, block by block (the op samples
// run it with the automatic block size only, which holds every small image in one block), and
// its input gradient (the op samples' planes are below the size where the VJP uses it).
#include "core/runtime/parallel.h"
#include "core/runtime/winograd.h"
#include "tests/unit/runtime/direct_conv.h"
#include "tests/unit/runtime/random_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

namespace qs::runtime {
namespace {

using test::directInputGrad;
using test::directWeightGrad;

struct Case {
    int64_t n, c, h, w, m, pt, pl, pb, pr;
};

Conv2d geometry(const Case& k) {
    return Conv2d{k.n,
                  k.c,
                  k.h,
                  k.w,
                  k.m,
                  3,
                  3,
                  1,
                  1,
                  1,
                  1,
                  k.pt,
                  k.pl,
                  k.h + k.pt + k.pb - 2,
                  k.w + k.pl + k.pr - 2,
                  1};
}

/// y = clamp(conv(x, w) + bias + residual, lo, hi) by the defining sum, in double.
std::vector<float> directConv(const Conv2d& p, const std::vector<float>& x,
                              const std::vector<float>& w, const ConvEpilogue& e) {
    std::vector<float> y(static_cast<size_t>(p.n * p.m * p.oh * p.ow));
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t f = 0; f < p.m; ++f) {
            for (int64_t oy = 0; oy < p.oh; ++oy) {
                for (int64_t ox = 0; ox < p.ow; ++ox) {
                    double sum = e.bias != nullptr ? e.bias[f] : 0.0;
                    for (int64_t c = 0; c < p.c; ++c) {
                        for (int64_t i = 0; i < 3; ++i) {
                            for (int64_t j = 0; j < 3; ++j) {
                                const int64_t iy = oy + i - p.pt;
                                const int64_t ix = ox + j - p.pl;
                                if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) {
                                    continue;
                                }
                                sum += static_cast<double>(x[static_cast<size_t>(
                                           ((n * p.c + c) * p.h + iy) * p.w + ix)]) *
                                       w[static_cast<size_t>(((f * p.c + c) * 3 + i) * 3 + j)];
                            }
                        }
                    }
                    const auto at = static_cast<size_t>(((n * p.m + f) * p.oh + oy) * p.ow + ox);
                    if (e.residual != nullptr) {
                        sum += e.residual[at];
                    }
                    y[at] = std::clamp(static_cast<float>(sum), e.lo, e.hi);
                }
            }
        }
    }
    return y;
}

using test::randomVector;

/// The error bound against the defining sum: F(4x4, 3x3)'s transforms scale by up to 8 and its
/// weight transform by 1/6 and 1/24, so it rounds several times more than F(2x2, 3x3).
double tolerance(WinogradTile tile, double expected) {
    const double scale = tile == WinogradTile::f4x4 ? 10.0 : 1.0;
    return scale * (1e-5 + 1e-5 * std::abs(expected));
}

const char* nameOf(WinogradTile tile) {
    return tile == WinogradTile::f4x4 ? "F(4x4, 3x3)" : "F(2x2, 3x3)";
}

class WinogradTest : public ::testing::TestWithParam<std::tuple<int, WinogradTile>> {};

TEST_P(WinogradTest, MatchesTheDirectSumInEveryBlockLayout) {
    const int threadsBefore = numThreads();
    const auto [threads, tile] = GetParam();
    setNumThreads(threads);
    std::mt19937 rng(7);
    // Blocks of 1, 5, 16 and 37 tiles cut tile rows and images at every place, including a
    // block that ends one tile into the next image.
    const std::vector<Case> cases = {
        {1, 16, 8, 8, 16, 1, 1, 1, 1},   // even output, one image
        {2, 16, 7, 9, 18, 1, 1, 1, 1},   // odd output, batch 2
        {3, 17, 5, 23, 16, 0, 2, 2, 0},  // asymmetric pads, rows of 12 tiles
        {1, 24, 11, 40, 19, 2, 1, 0, 1}, // rows of 20 (F(4x4): 10) tiles: an overlapping tail
        {2, 16, 14, 37, 16, 1, 1, 1, 1}, // F(4x4): 9 whole tiles and a 1-column one per row
        {1, 16, 9, 66, 17, 1, 1, 1, 1},  // F(4x4): two vectors of 8 tiles and a 2-column one
        {2, 16, 13, 13, 16, 1, 1, 1, 1}, // SqueezeNet's 13 x 13: runs of fewer than 8 tiles
    };
    for (const Case& k : cases) {
        const Conv2d p = geometry(k);
        SCOPED_TRACE(::testing::Message() << nameOf(tile) << " n " << k.n << " c " << k.c << " "
                                          << k.h << "x" << k.w << " m " << k.m);
        const std::vector<float> x = randomVector(rng, p.n * p.c * p.h * p.w);
        const std::vector<float> w = randomVector(rng, p.m * p.c * 9);
        const std::vector<float> bias = randomVector(rng, p.m);
        const std::vector<float> residual = randomVector(rng, p.n * p.m * p.oh * p.ow);
        std::vector<float> packed(static_cast<size_t>(winogradWeightsSize(p.m, p.c, tile)));
        packWinogradWeights(w.data(), p.m, p.c, packed.data(), tile);
        for (const bool fused : {false, true}) {
            ConvEpilogue e;
            if (fused) {
                e = ConvEpilogue{bias.data(), residual.data(), 0.0F, 6.0F};
            }
            const std::vector<float> expected = directConv(p, x, w, e);
            for (const int64_t block : {0, 1, 5, 16, 37}) {
                std::vector<float> y(expected.size(), std::nanf(""));
                winogradConv2d(p, x.data(), packed.data(), e, y.data(), block, tile);
                for (size_t i = 0; i < y.size(); ++i) {
                    ASSERT_NEAR(y[i], expected[i], tolerance(tile, expected[i]))
                        << "block " << block << (fused ? " fused" : "") << " element " << i;
                }
            }
        }
    }
    setNumThreads(threadsBefore);
}

INSTANTIATE_TEST_SUITE_P(ThreadsAndTiles, WinogradTest,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values(WinogradTile::f2x2,
                                                              WinogradTile::f4x4)));

class WinogradInputGrad : public ::testing::TestWithParam<WinogradTile> {};

TEST_P(WinogradInputGrad, MatchesTheDirectSum) {
    const WinogradTile tile = GetParam();
    std::mt19937 rng(11);
    const std::vector<Case> cases = {
        {1, 16, 8, 8, 16, 1, 1, 1, 1},   // same-size output
        {2, 16, 7, 9, 18, 0, 0, 0, 0},   // no pads: dx pads 2
        {1, 17, 6, 21, 16, 2, 0, 1, 2},  // asymmetric pads up to 2: dx pads 0 .. 2
        {1, 24, 11, 40, 19, 1, 1, 0, 1}, // wide rows
    };
    for (const Case& k : cases) {
        const Conv2d p = geometry(k);
        SCOPED_TRACE(::testing::Message() << nameOf(tile) << " n " << k.n << " c " << k.c << " "
                                          << k.h << "x" << k.w << " m " << k.m);
        const std::vector<float> w = randomVector(rng, p.m * p.c * 9);
        const std::vector<float> dy = randomVector(rng, p.n * p.m * p.oh * p.ow);
        const std::vector<float> expected = directInputGrad(p, dy, w);
        std::vector<float> dx(expected.size(), std::nanf(""));
        winogradInputGrad(p, w.data(), dy.data(), dx.data(), nullptr, tile);
        for (size_t i = 0; i < dx.size(); ++i) {
            ASSERT_NEAR(dx[i], expected[i], tolerance(tile, expected[i])) << "element " << i;
        }
    }
}

TEST_P(WinogradInputGrad, WithPackedWeightsMatchesTheDirectSum) {
    const WinogradTile tile = GetParam();
    std::mt19937 rng(12);
    // Planes below 28 x 28: the sweep's packed weights make them worth it.
    for (const Case& k : {Case{2, 16, 7, 7, 20, 1, 1, 1, 1}, Case{1, 18, 5, 9, 16, 2, 0, 0, 1}}) {
        const Conv2d p = geometry(k);
        ASSERT_TRUE(winogradInputGradApplies(p, true));
        const std::vector<float> w = randomVector(rng, p.m * p.c * 9);
        const std::vector<float> dy = randomVector(rng, p.n * p.m * p.oh * p.ow);
        std::vector<float> packed(
            static_cast<size_t>(winogradInputGradWeightsSize(p.m, p.c, tile)));
        packWinogradInputGradWeights(w.data(), p.m, p.c, packed.data(), tile);
        const std::vector<float> expected = directInputGrad(p, dy, w);
        std::vector<float> dx(expected.size(), std::nanf(""));
        winogradInputGrad(p, w.data(), dy.data(), dx.data(), packed.data(), tile);
        for (size_t i = 0; i < dx.size(); ++i) {
            ASSERT_NEAR(dx[i], expected[i], tolerance(tile, expected[i])) << "element " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Tiles, WinogradInputGrad,
                         ::testing::Values(WinogradTile::f2x2, WinogradTile::f4x4));

TEST(Winograd, TheLargeTileServesLayersWithFewWeights) {
    EXPECT_EQ(winogradTileFor(64, 64), WinogradTile::f4x4);
    EXPECT_EQ(winogradTileFor(128, 128), WinogradTile::f4x4);
    EXPECT_EQ(winogradTileFor(256, 64), WinogradTile::f4x4);
    EXPECT_EQ(winogradTileFor(256, 128), WinogradTile::f2x2);
    EXPECT_EQ(winogradTileFor(256, 256), WinogradTile::f2x2);
    // 36 positions against 16, the same panels each.
    EXPECT_EQ(winogradWeightsSize(64, 64),
              36 * winogradWeightsSize(64, 64, WinogradTile::f2x2) / 16);
    EXPECT_EQ(winogradWeightsSize(256, 256), winogradWeightsSize(256, 256, WinogradTile::f2x2));
    // dx's convolution gets the forward's variant.
    EXPECT_EQ(winogradInputGradWeightsSize(32, 512), winogradWeightsSize(512, 32));
}

TEST(Winograd, SweptInputGradTakesTheLargeTileOnceItsTilesFillAPanel) {
    // resnet18's 512-channel stage: 7 x 7 planes are 4 F(4x4) tiles per image.
    EXPECT_EQ(sweptInputGradTile(8, 7, 7, 512, 512), WinogradTile::f4x4);
    EXPECT_EQ(sweptInputGradTile(7, 7, 7, 512, 512), WinogradTile::f2x2);
    EXPECT_EQ(sweptInputGradTile(1, 28, 28, 256, 256), WinogradTile::f4x4);
    // 14 x 14: F(4x4) computes 16 x 16 and multiplies only 1.36 times less.
    EXPECT_EQ(sweptInputGradTile(8, 14, 14, 256, 256), WinogradTile::f2x2);
    EXPECT_EQ(sweptInputGradTile(8, 14, 14, 64, 64), WinogradTile::f4x4);
    EXPECT_EQ(sweptInputGradTile(8, 56, 56, 512, 512), WinogradTile::f4x4);
    // Below 32 tiles: the forward's variant, F(4x4) for few weights.
    EXPECT_EQ(sweptInputGradTile(1, 14, 14, 256, 256), WinogradTile::f2x2);
    EXPECT_EQ(sweptInputGradTile(1, 7, 7, 64, 64), WinogradTile::f4x4);
}

TEST(Winograd, PackedWeightsOfEveryFilterCountMatchOneFilterAtATime) {
    // The transforms run eight filters at a time across channel boundaries; a filter's packed
    // positions must not depend on its neighbours (the all-but-one-zero filters below).
    for (const WinogradTile tile : {WinogradTile::f2x2, WinogradTile::f4x4}) {
        for (const int64_t filters : {1, 5, 6, 7, 13}) {
            const int64_t channels = 3;
            std::mt19937 rng(static_cast<unsigned>(filters));
            std::normal_distribution<float> normal;
            std::vector<float> w(static_cast<size_t>(filters * channels * 9));
            for (float& v : w) {
                v = normal(rng);
            }
            std::vector<float> all(
                static_cast<size_t>(winogradWeightsSize(filters, channels, tile)));
            packWinogradWeights(w.data(), filters, channels, all.data(), tile);
            // Packed into a recycled buffer (NaN here), the padding filters of a short last
            // panel are written as zeros too: the result is the same.
            std::vector<float> recycled(all.size(), std::nanf(""));
            packWinogradWeights(w.data(), filters, channels, recycled.data(), tile);
            for (size_t i = 0; i < all.size(); ++i) {
                ASSERT_EQ(recycled[i], all[i]) << filters << " filters, element " << i;
            }
            for (int64_t f = 0; f < filters; ++f) {
                for (int64_t c = 0; c < channels; ++c) {
                    std::vector<float> only(w.size(), 0.0F);
                    const size_t at = static_cast<size_t>((f * channels + c) * 9);
                    std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(at), 9,
                                only.begin() + static_cast<std::ptrdiff_t>(at));
                    std::vector<float> one(all.size());
                    packWinogradWeights(only.data(), filters, channels, one.data(), tile);
                    // Every entry of `one` is zero but (f, c)'s, which must equal `all`'s.
                    int written = 0;
                    for (size_t i = 0; i < one.size(); ++i) {
                        if (one[i] != 0.0F) {
                            ASSERT_EQ(one[i], all[i]) << "filter " << f << ", channel " << c;
                            ++written;
                        }
                    }
                    EXPECT_GE(written, tile == WinogradTile::f4x4 ? 30 : 12)
                        << "filter " << f << ", channel " << c;
                }
            }
        }
    }
}

class WinogradWeightGrad : public ::testing::TestWithParam<int> {};

TEST_P(WinogradWeightGrad, MatchesTheDirectSumSummedAndPerSample) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(13);
    const std::vector<Case> cases = {
        {1, 16, 8, 8, 16, 1, 1, 1, 1},  // same-size output
        {3, 17, 7, 9, 18, 0, 0, 0, 0},  // odd output planes: half-empty tiles
        {2, 16, 6, 11, 20, 2, 0, 1, 3}, // asymmetric pads, one past 2
        {1, 20, 5, 5, 16, 3, 3, 3, 3},  // output larger than the input
    };
    for (const Case& k : cases) {
        for (const bool perSample : {false, true}) {
            const Conv2d p = geometry(k);
            SCOPED_TRACE(::testing::Message()
                         << "n " << k.n << " c " << k.c << " " << k.h << "x" << k.w << " m " << k.m
                         << " per sample " << perSample);
            const std::vector<float> x = randomVector(rng, p.n * p.c * p.h * p.w);
            const std::vector<float> dy = randomVector(rng, p.n * p.m * p.oh * p.ow);
            const std::vector<float> expected = directWeightGrad(p, x, dy, perSample);
            // dw need not be initialised: whatever it held is overwritten.
            std::vector<float> dw(expected.size(), std::nanf(""));
            winogradWeightGrad(p, x.data(), dy.data(), dw.data(), perSample);
            for (size_t i = 0; i < dw.size(); ++i) {
                const double want = expected[i];
                ASSERT_NEAR(dw[i], want, 1e-4 + 1e-5 * std::abs(want)) << "element " << i;
            }
        }
    }
    setNumThreads(threadsBefore);
}

INSTANTIATE_TEST_SUITE_P(Threads, WinogradWeightGrad, ::testing::Values(1, 2));

TEST(Winograd, WeightGradNeedsPlanesOf49Tiles) {
    const Conv2d large{1, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 14, 14, 1};
    EXPECT_TRUE(winogradWeightGradApplies(large));
    const Conv2d small{1, 16, 12, 12, 16, 3, 3, 1, 1, 1, 1, 1, 1, 12, 12, 1};
    EXPECT_FALSE(winogradWeightGradApplies(small));
    Conv2d strided = large;
    strided.sh = 2;
    EXPECT_FALSE(winogradWeightGradApplies(strided));
}

TEST(Winograd, InputGradNeedsPadsUpTo2AndLargePlanes) {
    const Conv2d large{1, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1, 1, 1, 28, 28, 1};
    EXPECT_TRUE(winogradInputGradApplies(large));
    const Conv2d small{1, 16, 14, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 14, 14, 1};
    EXPECT_FALSE(winogradInputGradApplies(small));
    // Pads of 3 on every side: 32 x 32 outputs, dx would need a pad of -1.
    const Conv2d padded{1, 16, 28, 28, 16, 3, 3, 1, 1, 1, 1, 3, 3, 32, 32, 1};
    EXPECT_FALSE(winogradInputGradApplies(padded));
    Conv2d strided = large;
    strided.sh = 2;
    EXPECT_FALSE(winogradInputGradApplies(strided));
}

TEST(Winograd, AppliesOnlyTo3x3Stride1UngroupedConvolutions) {
    Conv2d p{1, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 8, 8, 1};
    EXPECT_TRUE(winogradApplies(p));
    Conv2d strided = p;
    strided.sh = 2;
    EXPECT_FALSE(winogradApplies(strided));
    Conv2d dilated = p;
    dilated.dw = 2;
    EXPECT_FALSE(winogradApplies(dilated));
    Conv2d grouped = p;
    grouped.group = 2;
    EXPECT_FALSE(winogradApplies(grouped));
    Conv2d wide = p;
    wide.kw = 5;
    EXPECT_FALSE(winogradApplies(wide));
    Conv2d narrow = p;
    narrow.c = 8;
    EXPECT_FALSE(winogradApplies(narrow));
}

} // namespace
} // namespace qs::runtime
