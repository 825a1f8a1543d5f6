// The shallow convolution kernel (shallow_conv.h) against the defining sum: strides, pads,
// dilations, rectangular and 1-D kernels, output channels past a block of six, the two ways its
// vectors cover a plane (per output row, or sweeping rows at stride 1), every epilogue part and a
// fused tail, an output that is a Concat's slice, batches that split by image and ones that do
// not, on one and two threads.
#include "core/runtime/fused_tail.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"
#include "core/runtime/shallow_conv.h"
#include "tests/unit/runtime/direct_conv.h"
#include "tests/unit/runtime/random_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace qs::runtime {
namespace {

struct Case {
    int64_t n, c, h, w, m, kh, kw, s, d, pt, pl, pb, pr;
};

Conv2d geometry(const Case& k) {
    Conv2d p{};
    p.n = k.n;
    p.c = k.c;
    p.h = k.h;
    p.w = k.w;
    p.m = k.m;
    p.kh = k.kh;
    p.kw = k.kw;
    p.sh = k.kh > 1 ? k.s : 1;
    p.sw = k.s;
    p.dh = k.d;
    p.dw = k.d;
    p.pt = k.pt;
    p.pl = k.pl;
    p.oh = (k.h + k.pt + k.pb - k.d * (k.kh - 1) - 1) / p.sh + 1;
    p.ow = (k.w + k.pl + k.pr - k.d * (k.kw - 1) - 1) / p.sw + 1;
    p.group = 1;
    return p;
}

using test::randomVector;

/// clamp(conv(x, w) + bias + residual, lo, hi), then the tail: the defining sum in double.
std::vector<float> expectedOutput(const Conv2d& p, const std::vector<float>& x,
                                  const std::vector<float>& w, const ConvEpilogue& e) {
    std::vector<double> sums(static_cast<size_t>(p.n * p.m * p.outPixels()), 0.0);
    test::forEachProduct(p, [&](int64_t, int64_t xi, int64_t wi, int64_t yi) {
        sums[static_cast<size_t>(yi)] +=
            static_cast<double>(x[static_cast<size_t>(xi)]) * w[static_cast<size_t>(wi)];
    });
    std::vector<float> y(sums.size());
    for (size_t i = 0; i < y.size(); ++i) {
        const auto channel = static_cast<int64_t>(i) / p.outPixels() % p.m;
        double sum = sums[i] + (e.bias != nullptr ? e.bias[channel] : 0.0);
        sum += e.residual != nullptr ? e.residual[i] : 0.0;
        y[i] = std::clamp(static_cast<float>(sum), e.lo, e.hi);
    }
    if (e.tail != nullptr) {
        applyFusedTailReference(*e.tail, y.data(), static_cast<int64_t>(y.size()));
    }
    return y;
}

class ShallowConvTest : public ::testing::TestWithParam<int> {};

TEST_P(ShallowConvTest, MatchesTheDefiningSum) {
    if (!wideGemmKernelActive()) {
        GTEST_SKIP() << "the shallow kernel runs on AVX-512 only";
    }
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(11);
    const std::vector<Case> cases = {
        // n, c, h, w, m, kh, kw, s, d, pads t l b r
        {1, 3, 33, 34, 64, 3, 3, 2, 1, 1, 1, 1, 1},  // a stem: stride 2, rows cut per run
        {2, 16, 13, 13, 19, 3, 3, 1, 1, 1, 1, 1, 1}, // stride 1: vectors sweep rows of 15
        {3, 5, 20, 41, 7, 3, 3, 1, 1, 0, 2, 2, 0},   // asymmetric pads, a batch of 3
        {1, 4, 17, 9, 13, 5, 3, 1, 2, 3, 1, 2, 2},   // dilation 2, a 5 x 3 kernel
        {2, 3, 30, 30, 8, 7, 7, 2, 1, 3, 3, 3, 3},   // ResNet's 7 x 7 stem
        {1, 6, 1, 50, 12, 1, 5, 3, 1, 0, 2, 0, 2},   // a 1-D kernel with stride 3
        {1, 2, 6, 6, 1, 2, 2, 1, 1, 0, 0, 0, 0},     // one filter, no pads
        {2, 4, 3, 3, 6, 3, 3, 1, 1, 1, 1, 1, 1},     // rows of 5: too short to sweep
    };
    const FusedTail tail = {
        {TailOp::save, 0.0F, 0.0F}, {TailOp::sigmoid, 0.0F, 0.0F}, {TailOp::mulSaved, 0.0F, 0.0F}};
    for (const Case& k : cases) {
        const Conv2d p = geometry(k);
        SCOPED_TRACE(::testing::Message() << "n " << k.n << " c " << k.c << " " << k.h << "x" << k.w
                                          << " m " << k.m << " kernel " << k.kh << "x" << k.kw
                                          << " stride " << k.s << " dilation " << k.d);
        ASSERT_TRUE(shallowConvApplies(p));
        const std::vector<float> x = randomVector(rng, p.n * p.c * p.h * p.w);
        const std::vector<float> w = randomVector(rng, p.m * p.colRows());
        const std::vector<float> bias = randomVector(rng, p.m);
        const std::vector<float> residual = randomVector(rng, p.n * p.m * p.outPixels());
        for (int variant = 0; variant < 3; ++variant) {
            ConvEpilogue e;
            if (variant == 1) {
                e = ConvEpilogue{bias.data(), residual.data(), -0.25F, 0.5F};
            } else if (variant == 2) {
                e = ConvEpilogue{bias.data(), nullptr, 0.0F, std::numeric_limits<float>::infinity(),
                                 &tail};
            }
            const std::vector<float> expected = expectedOutput(p, x, w, e);
            std::vector<float> y(expected.size(), std::nanf(""));
            shallowConv2d(p, x.data(), w.data(), e, y.data());
            for (size_t i = 0; i < y.size(); ++i) {
                ASSERT_NEAR(y[i], expected[i], 1e-5 + 1e-5 * std::abs(expected[i]))
                    << "variant " << variant << " element " << i;
            }
        }
    }
    setNumThreads(threadsBefore);
}

// A Concat's slice: each image's channels land at an offset inside a wider output, and nothing
// outside them is written.
TEST_P(ShallowConvTest, WritesAConcatSliceAndNothingAround) {
    if (!wideGemmKernelActive()) {
        GTEST_SKIP() << "the shallow kernel runs on AVX-512 only";
    }
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(5);
    Conv2d p = geometry({2, 8, 11, 12, 10, 3, 3, 1, 1, 1, 1, 1, 1});
    const int64_t sliceChannels = 25;
    const int64_t channel0 = 9;
    p.yImageStride = sliceChannels * p.outPixels();
    const std::vector<float> x = randomVector(rng, p.n * p.c * p.h * p.w);
    const std::vector<float> w = randomVector(rng, p.m * p.colRows());
    const ConvEpilogue e;
    Conv2d dense = p;
    dense.yImageStride = 0;
    const std::vector<float> expected = expectedOutput(dense, x, w, e);
    std::vector<float> out(static_cast<size_t>(p.n * p.yImageStride), -7.0F);
    shallowConv2d(p, x.data(), w.data(), e, out.data() + channel0 * p.outPixels());
    for (int64_t n = 0; n < p.n; ++n) {
        for (int64_t c = 0; c < sliceChannels; ++c) {
            for (int64_t q = 0; q < p.outPixels(); ++q) {
                const float got =
                    out[static_cast<size_t>(n * p.yImageStride + c * p.outPixels() + q)];
                if (c < channel0 || c >= channel0 + p.m) {
                    ASSERT_EQ(got, -7.0F) << "image " << n << " channel " << c;
                    continue;
                }
                const float want =
                    expected[static_cast<size_t>((n * p.m + c - channel0) * p.outPixels() + q)];
                ASSERT_NEAR(got, want, 1e-5 + 1e-5 * std::abs(want)) << "image " << n;
            }
        }
    }
    setNumThreads(threadsBefore);
}

INSTANTIATE_TEST_SUITE_P(Threads, ShallowConvTest, ::testing::Values(1, 2));

} // namespace
} // namespace qs::runtime
