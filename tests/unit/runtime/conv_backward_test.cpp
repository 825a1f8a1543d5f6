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

/// x [-1, 16, 14, 14] -> Conv 3x3 (24 filters; dw by Winograd: 49 tiles) -> depthwise 3x3 ->
/// Conv 1x1 stride 2 in two groups (dw by the GEMM) -> two Convs 1x1 sharing ws, whose gradient
/// sums both and so comes whole.
graph::Graph makeRowSquaresChain(std::mt19937& rng) {
    graph::GraphBuilder b(13);
    const auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        const std::vector<float> values = randomValues(rng, count);
        return b.weight(name, dims, values);
    };
    const graph::ValueId x = b.input("x", {-1, 16, 14, 14});
    const graph::ValueId a = b.op("Conv", "a", {x, weight("wa", {24, 16, 3, 3})},
                                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}});
    const graph::ValueId d =
        b.op("Conv", "d", {a, weight("wd", {24, 1, 3, 3})},
             {{"pads", std::vector<int64_t>{1, 1, 1, 1}, {}}, {"group", int64_t{24}, {}}});
    const graph::ValueId c =
        b.op("Conv", "c", {d, weight("wc", {20, 12, 1, 1})},
             {{"group", int64_t{2}, {}}, {"strides", std::vector<int64_t>{2, 2}, {}}});
    const graph::ValueId shared = weight("ws", {20, 20, 1, 1});
    const graph::ValueId e = b.op("Conv", "e", {c, shared});
    b.output(b.op("Conv", "f", {e, shared}));
    return b.take();
}

// BackwardOptions::perSampleRowSquares: each Conv weight read by one node comes as its
// per-sample row sums of squares (Winograd, depthwise and grouped strided GEMM dw alike), equal
// to those of the whole per-sample gradient; a weight two Convs share comes whole. Batch 3 splits
// the images over the threads, batch 1 shares each image's columns between them.
TEST_P(ConvBackwardTest, PerSampleRowSquaresAreThoseOfTheWholePerSampleGradients) {
    const int threadsBefore = numThreads();
    setNumThreads(GetParam());
    std::mt19937 rng(35);
    auto exec = Executor::create(makeRowSquaresChain(rng));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const graph::Graph& g = exec->graph();
    const std::vector<graph::ValueId> weights = {*g.findValue("wa"), *g.findValue("wd"),
                                                 *g.findValue("wc"), *g.findValue("ws")};
    for (const graph::ValueId w : weights) {
        EXPECT_EQ(exec->weightGradComesAsRowSquares(w), g.value(w).name != "ws") << g.value(w).name;
    }
    EXPECT_FALSE(exec->weightGradComesAsRowSquares(*g.findValue("x")));
    for (const int64_t batch : {3, 1}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        const Tensor x =
            Tensor::fromVector<float>({batch, 16, 14, 14}, randomValues(rng, batch * 16 * 14 * 14));
        auto trace = exec->forwardForBackward(std::span(&x, 1));
        ASSERT_TRUE(trace.ok()) << trace.error().toString();
        const Tensor& y = trace->values[g.outputs()[0].index()];
        const std::pair<graph::ValueId, Tensor> seed{
            g.outputs()[0],
            Tensor::fromVector<float>(y.shape(), randomValues(rng, y.numElements()))};
        BackwardOptions options{.keep = weights, .perSampleBatch = batch};
        auto whole = exec->backward(*trace, std::span(&seed, 1), options);
        options.perSampleRowSquares = true;
        auto squares = exec->backward(*trace, std::span(&seed, 1), options);
        ASSERT_TRUE(whole.ok() && squares.ok())
            << (whole.ok() ? squares.error() : whole.error()).toString();
        for (const graph::ValueId w : weights) {
            const Tensor& full = (*whole)[w.index()];
            const Tensor& got = (*squares)[w.index()];
            const std::string name = g.value(w).name;
            if (!exec->weightGradComesAsRowSquares(w)) {
                ASSERT_EQ(got.shape(), full.shape()) << name;
                continue;
            }
            const int64_t rows = full.dim(1); // [batch, filters, ...]
            ASSERT_EQ(got.dtype(), graph::DataType::Double) << name;
            ASSERT_EQ(got.shape(), (Shape{batch, rows})) << name;
            const int64_t depth = full.numElements() / (batch * rows);
            for (int64_t r = 0; r < batch * rows; ++r) {
                double want = 0.0;
                for (int64_t i = 0; i < depth; ++i) {
                    const double v = full.data<float>()[r * depth + i];
                    want += v * v;
                }
                ASSERT_NEAR(got.data<double>()[r], want, 1e-9 * (1.0 + want))
                    << name << " row " << r;
            }
        }
    }
    setNumThreads(threadsBefore);
}

} // namespace
} // namespace qs::runtime
