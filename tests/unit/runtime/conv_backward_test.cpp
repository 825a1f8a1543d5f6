// dx and dw of the GEMM-based convolutions (the packed GEMM: W^T packed per call or ahead of time
// and col2im for dx, dy x^T for dw) against the defining sums, over groups, strides, dilations,
// pads, 1-D shapes and pixel counts that leave partial strips; and the executor's sweep, which
// packs dx's weights once and reuses them.
#include "core/graph/graph_builder.h"
#include "core/runtime/conv_backward.h"
#include "core/runtime/executor.h"
#include "core/runtime/parallel.h"
#include "tests/unit/runtime/direct_conv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace qs::runtime {
namespace {

using test::directInputGrad;
using test::directWeightGrad;

std::vector<float> randomValues(std::mt19937& rng, int64_t count) {
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) {
        x = normal(rng);
    }
    return v;
}

struct Case {
    int64_t n, c, h, w, m, kh, kw, s, d, pad, group;
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
    p.sh = k.h == 1 ? 1 : k.s;
    p.sw = k.s;
    p.dh = k.d;
    p.dw = k.d;
    p.pt = k.h == 1 ? 0 : k.pad;
    p.pl = k.pad;
    p.oh = (p.h + 2 * p.pt - (p.kh - 1) * p.dh - 1) / p.sh + 1;
    p.ow = (p.w + 2 * p.pl - (p.kw - 1) * p.dw - 1) / p.sw + 1;
    p.group = k.group;
    return p;
}

/// The cases' geometries, and a 1x1 stride-1 convolution padded at the bottom and right only,
/// whose output is larger than its input (not the pointwise fast path).
std::vector<Conv2d> withEndPads(const std::vector<Case>& cases) {
    std::vector<Conv2d> out;
    for (const Case& k : cases) {
        out.push_back(geometry(k));
    }
    out.push_back(Conv2d{2, 8, 5, 6, 10, 1, 1, 1, 1, 1, 1, 0, 0, 6, 7, 1});
    return out;
}

std::string describe(const Conv2d& p) {
    return "n " + std::to_string(p.n) + " c " + std::to_string(p.c) + " " + std::to_string(p.h) +
           "x" + std::to_string(p.w) + " -> " + std::to_string(p.oh) + "x" + std::to_string(p.ow) +
           " m " + std::to_string(p.m) + " k " + std::to_string(p.kh) + "x" + std::to_string(p.kw) +
           " s " + std::to_string(p.sw) + " d " + std::to_string(p.dw) + " g " +
           std::to_string(p.group);
}

class ConvBackwardTest : public ::testing::TestWithParam<int> {};

TEST_P(ConvBackwardTest, GemmInputGradMatchesTheDefiningSum) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(31);
    const std::vector<Case> cases = {
        {2, 24, 9, 11, 40, 1, 1, 1, 1, 0, 1},  // pointwise: dx written directly, 99 pixels
        {3, 16, 14, 14, 20, 1, 1, 2, 1, 0, 1}, // strided 1x1 (ResNet's downsample)
        {1, 12, 13, 10, 7, 3, 3, 2, 1, 1, 1},  // strided 3x3, filters below one panel
        {2, 8, 11, 11, 12, 3, 3, 1, 2, 2, 2},  // dilated, two groups
        {1, 6, 9, 9, 9, 5, 5, 1, 1, 2, 3},     // 5x5, three groups
        {2, 10, 1, 37, 14, 1, 3, 1, 1, 1, 1},  // 1-D
        {1, 64, 7, 7, 70, 3, 3, 1, 2, 2, 1},   // few pixels (dilated: never Winograd): rows split
        {2, 5, 12, 13, 6, 3, 3, 3, 2, 2, 1},   // stride 3, dilated: taps in all three phases
        {1, 7, 10, 9, 5, 4, 4, 2, 1, 1, 1},    // 4x4 stride 2, odd width: uneven phases
    };
    for (const Conv2d& p : withEndPads(cases)) {
        SCOPED_TRACE(describe(p));
        const std::vector<float> w = randomValues(rng, p.m * p.colRows());
        const std::vector<float> dy = randomValues(rng, p.n * p.m * p.outPixels());
        const std::vector<float> expected = directInputGrad(p, dy, w);
        std::vector<float> packed(
            static_cast<size_t>(gemmInputGradWeightsSize(p.m, p.colRows(), p.group)));
        packGemmInputGradWeights(w.data(), p.m, p.colRows(), p.group, packed.data());
        const Shape shape = {p.n, p.c, p.h, p.w};
        for (const bool prepacked : {false, true}) {
            const float* recycled = nullptr;
            {
                // A recycled buffer full of NaN: dx must not depend on what its buffer held.
                Tensor dirty = Tensor::allocate(graph::DataType::Float, shape);
                std::fill_n(dirty.mutableData<float>(), dirty.numElements(), std::nanf(""));
                recycled = dirty.data<float>();
            }
            const Tensor dx = convInputGrad(p, shape, w.data(), dy.data(),
                                            {.gemm = prepacked ? packed.data() : nullptr});
            ASSERT_EQ(dx.data<float>(), recycled) << "dx did not get the recycled buffer";
            ASSERT_EQ(dx.numElements(), static_cast<int64_t>(expected.size()));
            for (size_t i = 0; i < expected.size(); ++i) {
                ASSERT_NEAR(dx.data<float>()[i], expected[i], 1e-5 + 1e-5 * std::abs(expected[i]))
                    << (prepacked ? "prepacked, " : "") << "element " << i;
            }
        }
    }
    setNumThreads(threadsBefore);
}

// Batch 1 at two threads takes the shared-columns path (the GEMM on both threads), batch 3 the
// image split (one GEMM per image on each thread, nested calls inline).
TEST_P(ConvBackwardTest, GemmWeightGradMatchesTheDefiningSumSummedAndPerSample) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(33);
    const std::vector<Case> cases = {
        {1, 24, 9, 11, 40, 1, 1, 1, 1, 0, 1},  // pointwise: the columns are the image
        {3, 16, 14, 14, 20, 1, 1, 2, 1, 0, 1}, // strided 1x1
        {3, 12, 13, 10, 7, 3, 3, 2, 1, 1, 1},  // strided 3x3
        {1, 8, 11, 11, 12, 3, 3, 1, 2, 2, 2},  // dilated, two groups
        {3, 6, 9, 9, 9, 5, 5, 1, 1, 2, 3},     // 5x5, three groups
        {2, 10, 1, 37, 14, 1, 3, 1, 1, 1, 1},  // 1-D
        {1, 64, 23, 23, 70, 3, 3, 1, 1, 1, 1}, // more pixels than one depth block
    };
    for (const Conv2d& p : withEndPads(cases)) {
        SCOPED_TRACE(describe(p));
        const std::vector<float> x = randomValues(rng, p.n * p.c * p.h * p.w);
        const std::vector<float> dy = randomValues(rng, p.n * p.m * p.outPixels());
        for (const bool perSample : {false, true}) {
            const std::vector<float> expected = directWeightGrad(p, x, dy, perSample);
            // dw need not be initialised: whatever it held is overwritten.
            std::vector<float> dw(expected.size(), std::nanf(""));
            gemmConvWeightGrad(p, x.data(), dy.data(), dw.data(), perSample);
            for (size_t i = 0; i < expected.size(); ++i) {
                ASSERT_NEAR(dw[i], expected[i], 1e-4 + 1e-5 * std::abs(expected[i]))
                    << (perSample ? "per sample, " : "") << "element " << i;
            }
        }
    }
    setNumThreads(threadsBefore);
}

INSTANTIATE_TEST_SUITE_P(Threads, ConvBackwardTest, ::testing::Values(1, 2));

/// x -> Conv 3x3 stride 2 (a) -> Conv 1x1 in two groups (b): both dx through the GEMM.
graph::Graph makeGemmPair(const std::vector<float>& wa, const std::vector<float>& wb) {
    graph::GraphBuilder b(13);
    const graph::ValueId x = b.input("x", {-1, 16, 15, 15});
    const graph::ValueId a = b.op("Conv", "a", {x, b.weight("wa", {24, 16, 3, 3}, wa)},
                                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}},
                                   {"strides", std::vector<int64_t>{2, 2}, {}}});
    b.output(
        b.op("Conv", "b", {a, b.weight("wb", {20, 12, 1, 1}, wb)}, {{"group", int64_t{2}, {}}}));
    return b.take();
}

TEST(ConvBackward, SweepsWithTheExecutorsPackedDxWeightsMatchTheDefiningSum) {
    std::mt19937 rng(32);
    const std::vector<float> wa = randomValues(rng, 24 * 16 * 9);
    const std::vector<float> wb = randomValues(rng, 20 * 12);
    auto exec = Executor::create(makeGemmPair(wa, wb));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const graph::Graph& g = exec->graph();
    const std::vector<float> xv = randomValues(rng, 3 * 16 * 15 * 15);
    const std::vector<float> seedv = randomValues(rng, 3 * 20 * 8 * 8);
    const Tensor x = Tensor::fromVector<float>({3, 16, 15, 15}, xv);
    const Tensor seed = Tensor::fromVector<float>({3, 20, 8, 8}, seedv);
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    const std::pair<graph::ValueId, Tensor> seeds{g.outputs()[0], seed};
    const std::vector<graph::ValueId> keep = {*g.findValue("x"),
                                              g.node(*g.findNode("a")).outputs[0]};
    auto first = exec->backward(*trace, std::span(&seeds, 1), keep);
    auto second = exec->backward(*trace, std::span(&seeds, 1), keep);
    ASSERT_TRUE(first.ok()) << first.error().toString();
    ASSERT_TRUE(second.ok()) << second.error().toString();
    // da by b's transpose, then dx by a's.
    const Conv2d pb{3, 24, 8, 8, 20, 1, 1, 1, 1, 1, 1, 0, 0, 8, 8, 2};
    const Conv2d pa{3, 16, 15, 15, 24, 3, 3, 2, 2, 1, 1, 1, 1, 8, 8, 1};
    const std::vector<float> da = directInputGrad(pb, seedv, wb);
    const std::vector<float> dx = directInputGrad(pa, da, wa);
    for (const auto& [id, expected] : {std::pair{keep[0], dx}, std::pair{keep[1], da}}) {
        const Tensor& a = (*first)[id.index()];
        const Tensor& b = (*second)[id.index()];
        ASSERT_TRUE(a.defined() && b.defined()) << g.value(id).name;
        ASSERT_EQ(a.numElements(), static_cast<int64_t>(expected.size()));
        for (size_t i = 0; i < expected.size(); ++i) {
            ASSERT_EQ(a.data<float>()[i], b.data<float>()[i]) << g.value(id).name;
            ASSERT_NEAR(a.data<float>()[i], expected[i], 1e-4 + 1e-5 * std::abs(expected[i]))
                << g.value(id).name << " element " << i;
        }
    }
}

} // namespace
} // namespace qs::runtime
