#include "core/graph/graph_builder.h"
#include "core/runtime/executor.h"
#include "core/runtime/fused_tail.h"
#include "core/runtime/packed_gemm.h"
#include "core/runtime/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::TensorShape;
using graph::ValueId;

constexpr float kInf = std::numeric_limits<float>::infinity();

/// Builds graphs of one 1x1 Conv over [1, 4, 5, 5] followed by whatever a test adds.
class TailGraph {
public:
    TailGraph() {
        m_x = m_g.addValue("x", DataType::Float, m_shape);
        m_g.addInput(m_x);
        m_conv = value("conv");
        m_g.addNode("conv", "Conv", {m_x, constant("w", {4, 4, 1, 1}, 0.5F)}, {m_conv});
    }

    ValueId value(const std::string& name) { return m_g.addValue(name, DataType::Float, m_shape); }

    /// A constant of `dims` whose elements are `v`, `v` + 0.25, ...
    ValueId constant(const std::string& name, const std::vector<int64_t>& dims, float v) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        std::vector<float> values(static_cast<size_t>(count));
        for (float& e : values) {
            e = v;
            v += 0.25F;
        }
        return m_g.addInitializer(
            name, graph::TensorData::fromValues<float>(DataType::Float, dims, std::span(values)));
    }

    /// out = op(inputs...), a fresh value.
    ValueId node(const std::string& name, const std::string& op, std::vector<ValueId> inputs) {
        const ValueId out = value(name + "_out");
        m_g.addNode(name, op, std::move(inputs), {out});
        return out;
    }

    Graph& graph() { return m_g; }

    ValueId conv() const { return m_conv; }

private:
    Graph m_g;
    TensorShape m_shape = TensorShape::ofDims({1, 4, 5, 5});
    ValueId m_x;
    ValueId m_conv;
};

TEST(FusedTail, SiluIsOneGateWhicheverOperandOrderTheMulHas) {
    for (const bool convFirst : {true, false}) {
        TailGraph t;
        const ValueId s = t.node("sigmoid", "Sigmoid", {t.conv()});
        const ValueId y =
            t.node("mul", "Mul", convFirst ? std::vector{t.conv(), s} : std::vector{s, t.conv()});
        t.graph().addOutput(y);
        const TailMatch match = matchFusedTail(t.graph(), t.conv(), 4);
        const FusedTail expected = {{TailOp::save}, {TailOp::sigmoid}, {TailOp::mulSaved}};
        EXPECT_EQ(match.steps, expected);
        EXPECT_EQ(match.absorbed.size(), 2U);
        EXPECT_EQ(match.last, y);
    }
}

// PaddlePaddle's PP-LCNet: a scalar affine block, HardSwish decomposed into Add 3, Clip [0, 6],
// Mul and Div 6, and another scalar affine block (ppocr_det's backbone, 24 times).
TEST(FusedTail, PaddleAffineHardSwishAffineIsOneTail) {
    TailGraph t;
    const ValueId scaled = t.node("scale", "Mul", {t.constant("a", {1}, 1.5F), t.conv()});
    const ValueId shifted = t.node("shift", "Add", {scaled, t.constant("b", {1}, -0.5F)});
    const ValueId plus3 = t.node("plus3", "Add", {shifted, t.constant("three", {}, 3.0F)});
    const ValueId clipped =
        t.node("clip", "Clip", {plus3, t.constant("zero", {}, 0.0F), t.constant("six", {}, 6.0F)});
    const ValueId gated = t.node("gate", "Mul", {shifted, clipped});
    const ValueId hswish = t.node("div6", "Div", {gated, t.constant("six2", {}, 6.0F)});
    const ValueId scaled2 = t.node("scale2", "Mul", {t.constant("c", {1}, 0.75F), hswish});
    const ValueId y = t.node("shift2", "Sub", {t.constant("d", {1}, 2.0F), scaled2});
    t.graph().addOutput(y);
    const TailMatch match = matchFusedTail(t.graph(), t.conv(), 4);
    const FusedTail expected = {
        {TailOp::mulConst, 1.5F}, {TailOp::addConst, -0.5F},   {TailOp::save},
        {TailOp::addConst, 3.0F}, {TailOp::clamp, 0.0F, 6.0F}, {TailOp::mulSaved},
        {TailOp::divConst, 6.0F}, {TailOp::mulConst, 0.75F},   {TailOp::subFromConst, 2.0F}};
    EXPECT_EQ(match.steps, expected);
    EXPECT_EQ(match.absorbed.size(), 8U);
    EXPECT_EQ(match.last, y);
}

TEST(FusedTail, StopsWhereAValueIsNeededElsewhereOrIsNotElementWise) {
    {
        // The gate's value is a graph output: the Sigmoid must run on its own.
        TailGraph t;
        const ValueId s = t.node("sigmoid", "Sigmoid", {t.conv()});
        t.graph().addOutput(t.node("mul", "Mul", {t.conv(), s}));
        t.graph().addOutput(s);
        EXPECT_TRUE(matchFusedTail(t.graph(), t.conv(), 4).steps.empty());
    }
    {
        // A third reader of the Conv's output.
        TailGraph t;
        const ValueId s = t.node("sigmoid", "Sigmoid", {t.conv()});
        t.graph().addOutput(t.node("mul", "Mul", {t.conv(), s}));
        t.graph().addOutput(t.node("relu", "Relu", {t.conv()}));
        EXPECT_TRUE(matchFusedTail(t.graph(), t.conv(), 4).steps.empty());
    }
    {
        // A per-channel constant broadcasts per element, not as one number; constant / v is no
        // step; the chain stops at the first op that is neither.
        TailGraph t;
        const ValueId relu = t.node("relu", "Relu", {t.conv()});
        const ValueId scaled = t.node("scale", "Mul", {relu, t.constant("a", {1, 4, 1, 1}, 1.0F)});
        t.graph().addOutput(scaled);
        const TailMatch match = matchFusedTail(t.graph(), t.conv(), 4);
        EXPECT_EQ(match.steps, (FusedTail{{TailOp::clamp, 0.0F, kInf}}));
        EXPECT_EQ(match.last, relu);

        TailGraph u;
        u.graph().addOutput(u.node("inv", "Div", {u.constant("one", {}, 1.0F), u.conv()}));
        EXPECT_TRUE(matchFusedTail(u.graph(), u.conv(), 4).steps.empty());
    }
    {
        // A one-element constant of higher rank than the value would broadcast it up.
        TailGraph t;
        t.graph().addOutput(
            t.node("scale", "Mul", {t.conv(), t.constant("a", {1, 1, 1, 1, 1}, 2.0F)}));
        EXPECT_TRUE(matchFusedTail(t.graph(), t.conv(), 4).steps.empty());
    }
}

TEST(FusedTail, EncodesAndDecodesAndRefusesMalformedTails) {
    const FusedTail tail = {
        {TailOp::hardSigmoid, 0.2F, 0.5F}, {TailOp::save}, {TailOp::sigmoid}, {TailOp::mulSaved}};
    const auto decoded = decodeTail(encodeTail(tail));
    ASSERT_TRUE(decoded.ok()) << decoded.error().toString();
    EXPECT_EQ(*decoded, tail);
    EXPECT_FALSE(decodeTail(std::vector<float>{0.0F, 1.0F}).ok());
    EXPECT_FALSE(decodeTail(std::vector<float>{42.0F, 0.0F, 0.0F}).ok());
    EXPECT_FALSE(decodeTail(std::vector<float>{1.5F, 0.0F, 0.0F}).ok());
    const auto unsaved = decodeTail(encodeTail({{TailOp::mulSaved}}));
    ASSERT_FALSE(unsaved.ok());
    EXPECT_NE(unsaved.error().message().find("never saved"), std::string::npos);
}

// The blocked, threaded kernel against the one-element-at-a-time reference: every op, counts
// that leave partial blocks, one and two threads.
TEST(FusedTail, KernelMatchesTheReference) {
    const int threadsBefore = numThreads();
    const FusedTail tail = {{TailOp::mulConst, 1.25F},
                            {TailOp::subConst, 0.5F},
                            {TailOp::save},
                            {TailOp::sigmoid},
                            {TailOp::mulSaved},
                            {TailOp::addConst, 0.1F},
                            {TailOp::save},
                            {TailOp::addConst, 3.0F},
                            {TailOp::clamp, 0.0F, 6.0F},
                            {TailOp::mulSaved},
                            {TailOp::divConst, 6.0F},
                            {TailOp::subFromConst, 1.0F},
                            {TailOp::save},
                            {TailOp::hardSigmoid, 0.2F, 0.5F},
                            {TailOp::mulSaved},
                            {TailOp::clamp, -2.0F, kInf}};
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0F, 4.0F);
    for (const int threads : {1, 2}) {
        setNumThreads(threads);
        for (const int64_t count :
             {int64_t{1}, int64_t{1000}, int64_t{3 * 1024 + 17}, int64_t{40 * 1024 + 5}}) {
            std::vector<float> fast(static_cast<size_t>(count));
            for (float& v : fast) {
                v = normal(rng);
            }
            // NaN and infinities go through every step as the unfused ops take them.
            fast[0] = std::nanf("");
            fast[fast.size() / 2] = kInf;
            fast.back() = -kInf;
            std::vector<float> reference = fast;
            applyFusedTail(tail, fast.data(), count);
            applyFusedTailReference(tail, reference.data(), count);
            for (int64_t i = 0; i < count; ++i) {
                const float r = reference[static_cast<size_t>(i)];
                const float f = fast[static_cast<size_t>(i)];
                if (std::isnan(r) || std::isnan(f)) {
                    EXPECT_TRUE(std::isnan(r) && std::isnan(f)) << f << " vs " << r << ", " << i;
                    continue;
                }
                EXPECT_NEAR(f, r, 1e-5F + 1e-5F * std::abs(r))
                    << "element " << i << " of " << count << ", " << threads << " threads";
            }
        }
    }
    setNumThreads(threadsBefore);
}

// Each element rounds alike whichever thread's range and block it falls in: 1, 2 and 3 threads,
// and a prefix of the tensor (another batch size), give the same bits.
TEST(FusedTail, ResultsDoNotDependOnThreadsOrSize) {
    const int threadsBefore = numThreads();
    const FusedTail silu = {{TailOp::save}, {TailOp::sigmoid}, {TailOp::mulSaved}};
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0F, 3.0F);
    std::vector<float> input(static_cast<size_t>(3 * 16 * 1024 + 13));
    for (float& v : input) {
        v = normal(rng);
    }
    std::vector<std::vector<float>> results;
    for (const int threads : {1, 2, 3}) {
        setNumThreads(threads);
        results.push_back(input);
        applyFusedTail(silu, results.back().data(), static_cast<int64_t>(input.size()));
    }
    std::vector<float> prefix(input.begin(), input.begin() + 16 * 1024 + 5);
    applyFusedTail(silu, prefix.data(), static_cast<int64_t>(prefix.size()));
    setNumThreads(threadsBefore);
    // A NaN stays NaN through a bare sigmoid, in a whole vector and in the remainder.
    std::vector<float> nans(11, 0.5F);
    nans[2] = std::nanf("");
    nans[9] = std::nanf("");
    applyFusedTail({{TailOp::sigmoid}}, nans.data(), static_cast<int64_t>(nans.size()));
    EXPECT_TRUE(std::isnan(nans[2]) && std::isnan(nans[9])) << nans[2] << " " << nans[9];
    EXPECT_EQ(results[1], results[0]);
    EXPECT_EQ(results[2], results[0]);
    EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), results[0].begin()));
}

// SiLU runs in one pass, 16 lanes wide where AVX-512 is: every element (below -9 the exp
// branch, NaN, infinities, remainders of any length) has the bits of the 8-lane path and of the
// three steps one by one (a clamp to +-inf between keeps them apart). Without AVX-512 only the
// 8-lane path and the steps are compared.
TEST(FusedTail, OnePassSiluHasTheBitsOfItsStepsAtEveryWidth) {
    const bool wideBefore = setWideGemmKernel(true);
    const FusedTail silu = {{TailOp::save}, {TailOp::sigmoid}, {TailOp::mulSaved}};
    const FusedTail apart = {
        {TailOp::save}, {TailOp::sigmoid}, {TailOp::clamp, -kInf, kInf}, {TailOp::mulSaved}};
    std::mt19937 rng(17);
    std::normal_distribution<float> normal(0.0F, 8.0F);
    for (const int64_t count : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{37}, int64_t{3000}}) {
        std::vector<float> input(static_cast<size_t>(count));
        for (float& v : input) {
            v = normal(rng);
        }
        input[0] = -20.0F; // the exp branch in the first vector
        if (count > 20) {
            input[3] = std::nanf("");
            input[5] = kInf;
            input[6] = -kInf;
            input[count - 2] = -12.5F; // and in the last, padded one
        }
        std::vector<std::vector<float>> results;
        for (const bool wide : {true, false}) {
            setWideGemmKernel(wide);
            for (const FusedTail& tail : {silu, apart}) {
                results.push_back(input);
                applyFusedTailHere(tail, results.back().data(), count);
            }
        }
        for (size_t r = 1; r < results.size(); ++r) {
            ASSERT_EQ(
                std::memcmp(results[r].data(), results[0].data(), input.size() * sizeof(float)), 0)
                << "variant " << r << ", " << count << " elements";
        }
        for (size_t i = 0; i < input.size(); ++i) {
            const float x = input[i];
            const double expected =
                static_cast<double>(x) / (1.0 + std::exp(-static_cast<double>(x)));
            if (std::isnan(x) || std::isinf(x)) {
                continue;
            }
            EXPECT_NEAR(results[0][i], expected, 1e-6 * std::max(1.0, std::abs(expected))) << x;
        }
    }
    setWideGemmKernel(wideBefore);
}

// A tail read from a model may multiply by the saved value again after SiLU: the one pass saves
// nothing, so SiLU then runs as its three steps (the second product reads x, not garbage).
TEST(FusedTail, ASecondReadOfTheSavedValueKeepsSiluInSteps) {
    const FusedTail tail = {
        {TailOp::save}, {TailOp::sigmoid}, {TailOp::mulSaved}, {TailOp::mulSaved}};
    std::vector<float> fast{-3.0F, -0.5F, 0.0F, 0.25F, 1.5F, 4.0F, 6.5F, 9.0F, 11.0F, -12.0F};
    std::vector<float> reference = fast;
    applyFusedTailHere(tail, fast.data(), static_cast<int64_t>(fast.size()));
    applyFusedTailReference(tail, reference.data(), static_cast<int64_t>(reference.size()));
    for (size_t i = 0; i < fast.size(); ++i) {
        EXPECT_NEAR(fast[i], reference[i], 1e-5F * std::max(1.0F, std::abs(reference[i]))) << i;
    }
}

/// Conv -> SiLU -> Conv -> scalar Mul -> decomposed HardSwish (Paddle's form).
Graph makeTailModel() {
    TailGraph t;
    const ValueId s = t.node("sigmoid", "Sigmoid", {t.conv()});
    const ValueId silu = t.node("silu", "Mul", {t.conv(), s});
    const ValueId conv2 = t.value("conv2");
    t.graph().addNode("conv2", "Conv", {silu, t.constant("w2", {4, 4, 1, 1}, -0.4F)}, {conv2});
    const ValueId scaled = t.node("scale", "Mul", {t.constant("a", {1}, 1.5F), conv2});
    const ValueId plus3 = t.node("plus3", "Add", {scaled, t.constant("three", {}, 3.0F)});
    const ValueId clipped =
        t.node("clip", "Clip", {plus3, t.constant("zero", {}, 0.0F), t.constant("six", {}, 6.0F)});
    const ValueId gated = t.node("gate", "Mul", {scaled, clipped});
    t.graph().addOutput(t.node("div6", "Div", {gated, t.constant("six2", {}, 6.0F)}));
    return std::move(t.graph());
}

/// Whether any element of `t` sits on a bound of [0, 6].
bool touchesBounds(const Tensor& t) {
    const float* v = t.data<float>();
    return std::any_of(v, v + t.numElements(), [](float e) { return e == 0.0F || e == 6.0F; });
}

/// The fused sigmoid divides through a refined reciprocal: within a few ulp of Sigmoid's.
void expectWithinAFewUlp(const Tensor& fused, const Tensor& unfused) {
    ASSERT_EQ(fused.numElements(), unfused.numElements());
    for (int64_t i = 0; i < unfused.numElements(); ++i) {
        const float u = unfused.data<float>()[i];
        EXPECT_NEAR(fused.data<float>()[i], u, 1e-6F * std::max(1.0F, std::abs(u))) << i;
    }
}

Tensor randomModelInput() {
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0F, 2.0F);
    Tensor x = Tensor::allocate(DataType::Float, {1, 4, 5, 5});
    std::generate_n(x.mutableData<float>(), x.numElements(), [&] { return normal(rng); });
    return x;
}

// The executor fuses SiLU after one Conv and the Paddle chain after another: only Convs run, and
// the values fusion never materialises lower the peak.
TEST(FusedTail, ExecutorRunsOnlyTheConvs) {
    auto exec = Executor::create(makeTailModel());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = randomModelInput();
    RunStats stats;
    stats.profile = true;
    ASSERT_TRUE(exec->run(std::span(&x, 1), &stats).ok());
    ASSERT_EQ(stats.secondsByOpType.size(), 1U);
    EXPECT_EQ(stats.secondsByOpType.begin()->first, "Conv");
    // Unfused, the Conv output, the Sigmoid and the product are live at once.
    EXPECT_LT(stats.peakActivationBytes, size_t{300} * sizeof(float));
}

// In fp16 mode every unfused op rounds its output (and reads constants rounded) to half
// precision, which a tail in float would skip: tails stay unfused there.
TEST(FusedTail, Fp16ModeKeepsTheTailsUnfused) {
    auto exec = Executor::create(makeTailModel(), {.fp16 = true});
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = randomModelInput();
    RunStats stats;
    stats.profile = true;
    ASSERT_TRUE(exec->run(std::span(&x, 1), &stats).ok());
    EXPECT_EQ(stats.secondsByOpType.count("Sigmoid"), 1U);
    EXPECT_EQ(stats.secondsByOpType.count("Div"), 1U);
}

// ... and its outputs equal the node-by-node trace's.
TEST(FusedTail, ExecutorTailsMatchTheUnfusedTrace) {
    auto exec = Executor::create(makeTailModel());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = randomModelInput();
    auto fused = exec->run(std::span(&x, 1));
    ASSERT_TRUE(fused.ok()) << fused.error().toString();
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok()) << trace.error().toString();
    EXPECT_TRUE(touchesBounds(trace->values[exec->graph().findValue("clip_out")->index()]))
        << "the test's clip never bites";
    expectWithinAFewUlp((*fused)[0], trace->values[exec->graph().outputs()[0].index()]);
}

/// x [2, c, h, w] -> Conv k x k to m filters in `group` groups ("same" pads, `stride`) -> SiLU,
/// weights and input seeded.
struct ConvSiluModel {
    Graph graph;
    Tensor input;
};

struct ConvSiluCase {
    int64_t c, m, group, h, w, k, stride;
    const char* path; ///< the kernel path the case takes, for messages
};

ConvSiluModel makeConvSilu(const ConvSiluCase& p) {
    std::mt19937 rng(static_cast<unsigned>(p.c * 100 + p.h * 10 + p.k));
    std::normal_distribution<float> normal(0.0F, 1.0F);
    const int64_t oh = (p.h - 1) / p.stride + 1;
    const int64_t ow = (p.w - 1) / p.stride + 1;
    const auto outShape = TensorShape::ofDims({2, p.m, oh, ow});
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({2, p.c, p.h, p.w}));
    g.addInput(x);
    const int64_t depth = p.c / p.group * p.k * p.k;
    std::vector<float> weights(static_cast<size_t>(p.m * depth));
    const float scale = 1.5F / std::sqrt(static_cast<float>(depth));
    std::generate(weights.begin(), weights.end(), [&] { return scale * normal(rng); });
    std::vector<float> bias(static_cast<size_t>(p.m));
    std::generate(bias.begin(), bias.end(), [&] { return normal(rng); });
    const ValueId wv = g.addInitializer(
        "w", graph::TensorData::fromValues<float>(DataType::Float, {p.m, p.c / p.group, p.k, p.k},
                                                  std::span(weights)));
    const ValueId bv = g.addInitializer(
        "b", graph::TensorData::fromValues<float>(DataType::Float, {p.m}, std::span(bias)));
    const ValueId conv = g.addValue("conv", DataType::Float, outShape);
    const int64_t pad = p.k / 2;
    const graph::NodeId node = g.addNode("conv", "Conv", {x, wv, bv}, {conv});
    g.node(node).attributes.push_back(graph::Attribute{"group", p.group, {}});
    g.node(node).attributes.push_back(
        graph::Attribute{"pads", std::vector<int64_t>{pad, pad, pad, pad}, {}});
    g.node(node).attributes.push_back(
        graph::Attribute{"strides", std::vector<int64_t>{p.stride, p.stride}, {}});
    const ValueId sig = g.addValue("sig", DataType::Float, outShape);
    g.addNode("sigmoid", "Sigmoid", {conv}, {sig});
    const ValueId out = g.addValue("out", DataType::Float, outShape);
    g.addNode("silu", "Mul", {conv, sig}, {out});
    g.addOutput(out);
    Tensor input = Tensor::allocate(DataType::Float, {2, p.c, p.h, p.w});
    std::generate_n(input.mutableData<float>(), input.numElements(), [&] { return normal(rng); });
    return {std::move(g), std::move(input)};
}

// The depthwise and GEMM kernels run the tail on each piece of output they finish (a block of
// planes; a block of columns of C), the other kernels after them: every path matches the unfused
// trace, on one and two threads (which split GEMMs by columns or by rows).
TEST(FusedTail, EveryConvPathRunsTheTail) {
    const int threadsBefore = numThreads();
    const std::array<ConvSiluCase, 9> cases = {{
        {12, 12, 12, 7, 7, 5, 1, "depthwise, channel-blocked (one partial block)"},
        {3, 3, 3, 20, 20, 3, 1, "depthwise, 3x3 fast path"},
        {3, 3, 3, 12, 12, 7, 1, "depthwise, phase planes"},
        {3, 3, 3, 20, 20, 5, 1, "depthwise, AVX-512 rows"},
        {24, 24, 24, 40, 40, 3, 2, "depthwise, AVX-512 rows at stride 2, several tail batches"},
        {8, 24, 1, 40, 40, 3, 2, "im2col GEMM, several column blocks"},
        {16, 40, 1, 9, 9, 1, 1, "pointwise GEMM read in place, a partial strip"},
        {6, 10, 2, 11, 13, 3, 1, "grouped GEMM"},
        {16, 16, 1, 12, 12, 3, 1, "Winograd"},
    }};
    for (const ConvSiluCase& c : cases) {
        ConvSiluModel m = makeConvSilu(c);
        auto exec = Executor::create(std::move(m.graph));
        ASSERT_TRUE(exec.ok()) << exec.error().toString();
        auto trace = exec->forwardWithTrace(std::span(&m.input, 1));
        ASSERT_TRUE(trace.ok()) << trace.error().toString();
        const Tensor& unfused = trace->values[exec->graph().outputs()[0].index()];
        for (const int threads : {1, 2}) {
            setNumThreads(threads);
            SCOPED_TRACE(testing::Message() << c.path << ", " << threads << " threads");
            RunStats stats;
            stats.profile = true;
            auto fused = exec->run(std::span(&m.input, 1), &stats);
            ASSERT_TRUE(fused.ok()) << fused.error().toString();
            EXPECT_EQ(stats.secondsByOpType.size(), 1U) << "the SiLU was not fused";
            expectWithinAFewUlp((*fused)[0], unfused);
        }
    }
    setNumThreads(threadsBefore);
}

} // namespace
} // namespace qs::runtime
