#include "core/graph/graph_builder.h"
#include "core/runtime/executor.h"
#include "core/runtime/gelu_fusion.h"
#include "core/runtime/layer_norm_fusion.h"
#include "core/runtime/matmul_bias_fusion.h"
#include "core/runtime/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::TensorShape;
using graph::ValueId;

/// How a test's decomposed LayerNormalization is written.
struct ChainStyle {
    bool knownShape = true;    ///< x declared [2, 5, C], else of unknown rank
    bool swapOperands = false; ///< Mul(scale, n), Add(eps, var), Add(bias, m)
    bool bias = true;
    bool biasByIdentity = false; ///< bias computed by an Identity of the initializer (PyTorch)
    bool axesInput = false;      ///< ReduceMean's axes as an input (opset 18)
    bool centredIsOutput = false;
    float exponent = 2.0F;
    int64_t scaleSize = 16;
};

constexpr int64_t kChannels = 16;

/// x -> ReduceMean -> Sub -> Pow -> ReduceMean -> Add eps -> Sqrt -> Div -> Mul scale [-> Add
/// bias] -> y, as PyTorch exports nn.LayerNorm before opset 17.
Graph makeChain(const ChainStyle& style) {
    Graph g;
    g.metadata().opsetImports = {{"", style.axesInput ? 18 : 13}};
    const TensorShape shape =
        style.knownShape ? TensorShape::ofDims({2, 5, kChannels}) : TensorShape();
    const auto value = [&](const std::string& name) {
        return g.addValue(name, DataType::Float, TensorShape());
    };
    const auto constant = [&](const std::string& name, const std::vector<int64_t>& dims,
                              std::vector<float> values) {
        return g.addInitializer(
            name, graph::TensorData::fromValues<float>(DataType::Float, dims, std::span(values)));
    };
    const auto reduceMean = [&](const std::string& name, ValueId in, ValueId out) {
        if (style.axesInput) {
            const std::vector<int64_t> axes{-1};
            const ValueId a = g.addInitializer(
                name + "_axes",
                graph::TensorData::fromValues<int64_t>(DataType::Int64, {1}, std::span(axes)));
            g.addNode(name, "ReduceMean", {in, a}, {out});
            return;
        }
        const graph::NodeId id = g.addNode(name, "ReduceMean", {in}, {out});
        g.node(id).attributes.push_back(graph::Attribute{"axes", std::vector<int64_t>{-1}, {}});
    };
    const auto ordered = [&](ValueId chain, ValueId other) {
        return style.swapOperands ? std::vector{other, chain} : std::vector{chain, other};
    };
    const ValueId x = g.addValue("x", DataType::Float, shape);
    g.addInput(x);
    ValueId b;
    if (style.bias) {
        std::vector<float> bias(static_cast<size_t>(style.scaleSize));
        for (size_t i = 0; i < bias.size(); ++i) {
            bias[i] = -1.0F + 0.25F * static_cast<float>(i);
        }
        b = constant("bias", {style.scaleSize}, bias);
        if (style.biasByIdentity) {
            // First, as PyTorch writes its Identity copies of shared parameters.
            const ValueId copied =
                g.addValue("bias_copy", DataType::Float, TensorShape::ofDims({style.scaleSize}));
            g.addNode("bias_identity", "Identity", {b}, {copied});
            b = copied;
        }
    }
    const ValueId mean = value("mean");
    reduceMean("mean", x, mean);
    const ValueId centred = value("centred");
    g.addNode("sub", "Sub", {x, mean}, {centred});
    const ValueId squared = value("squared");
    g.addNode("pow", "Pow", {centred, constant("two", {}, {style.exponent})}, {squared});
    const ValueId variance = value("variance");
    reduceMean("variance", squared, variance);
    const ValueId shifted = value("shifted");
    g.addNode("add_eps", "Add", ordered(variance, constant("eps", {}, {1e-5F})), {shifted});
    const ValueId deviation = value("deviation");
    g.addNode("sqrt", "Sqrt", {shifted}, {deviation});
    const ValueId normalised = value("normalised");
    g.addNode("div", "Div", {centred, deviation}, {normalised});
    std::vector<float> scale(static_cast<size_t>(style.scaleSize));
    for (size_t i = 0; i < scale.size(); ++i) {
        scale[i] = 0.5F + 0.125F * static_cast<float>(i);
    }
    const ValueId scaled = value("scaled");
    g.addNode("mul", "Mul", ordered(normalised, constant("scale", {style.scaleSize}, scale)),
              {scaled});
    ValueId y = scaled;
    if (style.bias) {
        y = value("y");
        g.addNode("add_bias", "Add", ordered(scaled, b), {y});
    }
    g.addOutput(y);
    if (style.centredIsOutput) {
        g.addOutput(centred);
    }
    return g;
}

Tensor randomInput(const Shape& shape, unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(3.0F, 2.0F); // off zero: the mean matters
    Tensor x = Tensor::allocate(DataType::Float, shape);
    std::generate_n(x.mutableData<float>(), x.numElements(), [&] { return normal(rng); });
    return x;
}

/// Runs `g` fused (run) and node by node (forwardWithTrace): the op types run() ran, and the
/// largest difference of the first outputs relative to the largest magnitude.
struct Comparison {
    std::map<std::string, double> opTypes;
    std::map<std::string, std::string> opTypeByNode;
    double relativeDifference = 0.0;
    Shape shape;
};

Comparison compareWithTrace(Graph g, const Tensor& x, ExecutorOptions options = {}) {
    auto exec = Executor::create(std::move(g), options);
    EXPECT_TRUE(exec.ok()) << exec.error().toString();
    RunStats stats;
    stats.profile = true;
    auto fused = exec->run(std::span(&x, 1), &stats);
    EXPECT_TRUE(fused.ok()) << fused.error().toString();
    Comparison c{stats.secondsByOpType, stats.opTypeByNode, 0.0, (*fused)[0].shape()};
    if (options.fp16) {
        return c; // the trace keeps half-precision values; run() returns them widened
    }
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    EXPECT_TRUE(trace.ok()) << trace.error().toString();
    const Tensor& a = (*fused)[0];
    const Tensor& b = trace->values[exec->graph().outputs()[0].index()];
    EXPECT_EQ(a.shape(), b.shape());
    double largest = 0.0;
    double worst = 0.0;
    for (int64_t i = 0; i < std::min(a.numElements(), b.numElements()); ++i) {
        largest = std::max(largest, std::abs(static_cast<double>(b.data<float>()[i])));
        worst =
            std::max(worst, std::abs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
    }
    c.relativeDifference = largest > 0.0 ? worst / largest : worst;
    return c;
}

/// The match of `style`'s chain and the fused run against the trace.
void expectFused(const ChainStyle& style) {
    const Graph g = makeChain(style);
    const auto match = matchDecomposedLayerNorm(g, *g.findNode("mean"));
    ASSERT_TRUE(match.has_value());
    EXPECT_EQ(match->output, g.outputs()[0]);
    EXPECT_EQ(match->bias.valid(), style.bias);
    EXPECT_FLOAT_EQ(match->epsilon, 1e-5F);
    EXPECT_EQ(match->absorbed.size(), style.bias ? 8U : 7U);
    const Comparison c = compareWithTrace(g, randomInput({2, 5, kChannels}, 7));
    EXPECT_EQ(c.opTypes.count("LayerNormalization"), 1U);
    // The profile names the chain after its first node, with the op it ran.
    EXPECT_EQ(c.opTypeByNode.at("mean"), "LayerNormalization");
    for (const char* op : {"ReduceMean", "Sub", "Pow", "Sqrt", "Div", "Mul"}) {
        EXPECT_EQ(c.opTypes.count(op), 0U) << op << " ran unfused";
    }
    EXPECT_LT(c.relativeDifference, 1e-6);
}

TEST(LayerNormFusion, PyTorchChainsRunAsOneLayerNormalization) {
    const std::vector<ChainStyle> styles = {
        {},
        {.knownShape = false},
        {.swapOperands = true},
        {.bias = false},
        {.knownShape = false, .biasByIdentity = true},
        {.axesInput = true},
        {.scaleSize = 1},
    };
    for (size_t s = 0; s < styles.size(); ++s) {
        SCOPED_TRACE("style " + std::to_string(s));
        expectFused(styles[s]);
    }
}

// Rows of every length the kernel's lanes split differently, on one and two threads.
TEST(LayerNormFusion, FusedRowsMatchTheChainForAnyLengthAndThreads) {
    for (const int threads : {1, 2}) {
        setNumThreads(threads);
        for (const int64_t channels : {1, 3, 16, 17, 33, 768}) {
            SCOPED_TRACE(std::to_string(channels) + " channels, " + std::to_string(threads) +
                         " threads");
            const Comparison c =
                compareWithTrace(makeChain({.knownShape = false, .scaleSize = 1}),
                                 randomInput({3, 257, channels}, static_cast<unsigned>(channels)));
            EXPECT_EQ(c.opTypes.count("LayerNormalization"), 1U);
            // A one-element row normalises to 0 exactly; others within float rounding.
            EXPECT_LT(c.relativeDifference, 2e-6);
        }
    }
    setNumThreads(0);
}

// x's last dim is 1 at run time while the scale has 16: the chain broadcasts to [.., 16], which
// LayerNormalization cannot; the run takes the chain's own steps.
TEST(LayerNormFusion, RunsTheChainWhenTheShapesDoNotFitAtRunTime) {
    const Comparison c =
        compareWithTrace(makeChain({.knownShape = false}), randomInput({2, 5, 1}, 3));
    EXPECT_EQ(c.opTypes.count("LayerNormalization"), 0U);
    EXPECT_EQ(c.opTypes.count("Sqrt"), 1U);
    EXPECT_EQ(c.shape, (Shape{2, 5, kChannels}));
    EXPECT_EQ(c.relativeDifference, 0.0);
    // Declared so, the graph proves it and nothing is fused.
    Graph declared = makeChain({});
    declared.value(declared.inputs()[0]).shape = TensorShape::ofDims({2, 5, 1});
    EXPECT_FALSE(matchDecomposedLayerNorm(declared, *declared.findNode("mean")).has_value());
}

TEST(LayerNormFusion, LeavesOtherChainsAlone) {
    // The centred x is read by a graph output; an exponent of 3 is no variance.
    for (const ChainStyle& style :
         {ChainStyle{.centredIsOutput = true}, ChainStyle{.exponent = 3.0F}}) {
        const Graph g = makeChain(style);
        EXPECT_FALSE(matchDecomposedLayerNorm(g, *g.findNode("mean")).has_value());
        const Comparison c = compareWithTrace(g, randomInput({2, 5, kChannels}, 5));
        EXPECT_EQ(c.opTypes.count("LayerNormalization"), 0U);
        EXPECT_EQ(c.relativeDifference, 0.0);
    }
    // fp16 mode rounds every step of the chain; fused, they would not be.
    const Comparison half =
        compareWithTrace(makeChain({}), randomInput({2, 5, kChannels}, 5), {.fp16 = true});
    EXPECT_EQ(half.opTypes.count("LayerNormalization"), 0U);
}

// Div's VJP reads the centred x and the deviation: the trace for gradients keeps the chain's own
// steps, and its gradient is the full trace's.
/// dL/dx for the seed `seed` at the output, from `trace`.
Tensor inputGradient(const Executor& exec, const ForwardTrace& trace, const Tensor& seed) {
    const std::pair<ValueId, Tensor> seeds{exec.graph().outputs()[0], seed};
    const ValueId input = exec.graph().inputs()[0];
    auto grads = exec.backward(trace, std::span(&seeds, 1), std::span(&input, 1));
    EXPECT_TRUE(grads.ok()) << grads.error().toString();
    return grads.ok() ? (*grads)[input.index()] : Tensor();
}

TEST(LayerNormFusion, GradientsFlowThroughTheChainsOwnSteps) {
    auto exec = Executor::create(makeChain({}));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = randomInput({2, 5, kChannels}, 11);
    const Tensor seed = randomInput({2, 5, kChannels}, 12);
    auto lean = exec->forwardForBackward(std::span(&x, 1));
    auto full = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(lean.ok() && full.ok());
    const Tensor a = inputGradient(*exec, *lean, seed);
    const Tensor b = inputGradient(*exec, *full, seed);
    ASSERT_TRUE(a.defined() && b.defined());
    EXPECT_TRUE(std::equal(a.data<float>(), a.data<float>() + a.numElements(), b.data<float>()));
}

/// A graph under construction: x [2, 6, 8] (shape declared) and helpers for the chains below.
class ChainGraph {
public:
    /// `knownShape`: x declared [2, 6, 8], else of unknown rank.
    explicit ChainGraph(bool knownShape = true) {
        m_g.metadata().opsetImports = {{"", 13}};
        m_x = m_g.addValue("x", DataType::Float,
                           knownShape ? TensorShape::ofDims({2, 6, 8}) : TensorShape());
        m_g.addInput(m_x);
    }

    ValueId x() const { return m_x; }

    ValueId constant(const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& values) {
        return m_g.addInitializer(
            name, graph::TensorData::fromValues<float>(DataType::Float, dims, std::span(values)));
    }

    ValueId node(const std::string& op, std::vector<ValueId> inputs) {
        const ValueId out =
            m_g.addValue("v" + std::to_string(m_count), DataType::Float, TensorShape());
        m_g.addNode(op + std::to_string(m_count++), op, std::move(inputs), {out});
        return out;
    }

    Graph& graph() { return m_g; }

private:
    Graph m_g;
    ValueId m_x;
    int m_count = 0;
};

/// How a test's decomposed GELU is written.
struct GeluStyle {
    bool mulByInverse = false; ///< x * 0.7071 instead of x / 1.4142
    bool halfFirst = false;    ///< (x * 0.5) * gate, the Mul by 0.5 before the Div
    bool swapOperands = false;
    float divisor = 1.4142135F;
    bool gateIsOutput = false;
    bool knownShape = true;
    std::vector<int64_t> constantDims; ///< the constants' dims (PyTorch: rank 0)
};

Graph makeGelu(const GeluStyle& style) {
    ChainGraph c(style.knownShape);
    const auto ordered = [&](ValueId a, ValueId b) {
        return style.swapOperands ? std::vector{b, a} : std::vector{a, b};
    };
    ValueId half;
    if (style.halfFirst) {
        half = c.node("Mul", ordered(c.x(), c.constant("half", style.constantDims, {0.5F})));
    }
    const ValueId scaled =
        style.mulByInverse
            ? c.node("Mul",
                     ordered(c.x(), c.constant("inv", style.constantDims, {1.0F / style.divisor})))
            : c.node("Div", {c.x(), c.constant("sqrt2", style.constantDims, {style.divisor})});
    const ValueId erf = c.node("Erf", {scaled});
    const ValueId gate = c.node("Add", ordered(erf, c.constant("one", style.constantDims, {1.0F})));
    ValueId y;
    if (style.halfFirst) {
        y = c.node("Mul", ordered(half, gate));
    } else {
        const ValueId product = c.node("Mul", ordered(c.x(), gate));
        y = c.node("Mul", ordered(product, c.constant("half", style.constantDims, {0.5F})));
    }
    c.graph().addOutput(y);
    if (style.gateIsOutput) {
        c.graph().addOutput(gate);
    }
    return std::move(c.graph());
}

TEST(GeluFusion, PyTorchAndHuggingFaceChainsRunAsOneGelu) {
    const std::vector<GeluStyle> styles = {
        {},
        {.mulByInverse = true},
        {.halfFirst = true},
        {.swapOperands = true},
        {.mulByInverse = true, .halfFirst = true, .swapOperands = true},
        {.knownShape = false},
        {.constantDims = {1}}};
    for (size_t s = 0; s < styles.size(); ++s) {
        SCOPED_TRACE("style " + std::to_string(s));
        const Graph g = makeGelu(styles[s]);
        const auto match = matchDecomposedGelu(g, g.inputs()[0]);
        ASSERT_TRUE(match.has_value());
        EXPECT_EQ(match->nodes.size(), 5U);
        EXPECT_EQ(match->output, g.outputs()[0]);
        const Comparison c = compareWithTrace(g, randomInput({2, 6, 8}, 21));
        EXPECT_EQ(c.opTypes.count("Gelu"), 1U);
        EXPECT_EQ(c.opTypes.count("Erf"), 0U);
        EXPECT_EQ(c.opTypes.count("Mul"), 0U);
        EXPECT_LT(c.relativeDifference, 1e-6);
    }
}

TEST(GeluFusion, LeavesOtherChainsAlone) {
    // Not sqrt 2; the gate read by a graph output; constants of shape [1] against an x of
    // unknown rank (a rank-0 x would come out as [1]).
    for (const GeluStyle& style : {GeluStyle{.divisor = 2.0F}, GeluStyle{.gateIsOutput = true},
                                   GeluStyle{.knownShape = false, .constantDims = {1}}}) {
        const Graph g = makeGelu(style);
        EXPECT_FALSE(matchDecomposedGelu(g, g.inputs()[0]).has_value());
        const Comparison c = compareWithTrace(g, randomInput({2, 6, 8}, 22));
        EXPECT_EQ(c.opTypes.count("Gelu"), 0U);
        EXPECT_EQ(c.relativeDifference, 0.0);
    }
}

/// x [2, 6, 8] -> MatMul by W [8, 5] -> Add b (written `biasDims`, through an Identity when
/// asked) -> y.
Graph makeLinear(const std::vector<int64_t>& biasDims, bool biasFirst, bool identity,
                 bool productIsOutput = false) {
    ChainGraph c;
    std::vector<float> w(40);
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = 0.1F * static_cast<float>(static_cast<int>(i % 7) - 3);
    }
    const ValueId product = c.node("MatMul", {c.x(), c.constant("w", {8, 5}, w)});
    ValueId b = c.constant("b", biasDims, {0.5F, -1.0F, 2.0F, 0.25F, -0.125F});
    if (identity) {
        b = c.node("Identity", {b});
    }
    const ValueId y = c.node("Add", biasFirst ? std::vector{b, product} : std::vector{product, b});
    c.graph().addOutput(y);
    if (productIsOutput) {
        c.graph().addOutput(product);
    }
    return std::move(c.graph());
}

TEST(MatMulBiasFusion, TheBiasIsAddedInsideTheMatMul) {
    for (const bool biasFirst : {false, true}) {
        for (const bool identity : {false, true}) {
            SCOPED_TRACE(std::string(biasFirst ? "bias first" : "product first") +
                         (identity ? ", through an Identity" : ""));
            const Graph g = makeLinear({5}, biasFirst, identity);
            const auto match = matchMatMulBias(g, *g.findNode("MatMul0"));
            ASSERT_TRUE(match.has_value());
            EXPECT_EQ(match->bias, *g.findValue("b")); // the initializer itself
            const Comparison c = compareWithTrace(g, randomInput({2, 6, 8}, 31));
            EXPECT_EQ(c.opTypes.count("Add"), 0U);
            // The same float sums as the Add's.
            EXPECT_EQ(c.relativeDifference, 0.0);
        }
    }
}

TEST(MatMulBiasFusion, LeavesOtherAddsAlone) {
    // A bias of rank 2, a product read by a graph output.
    for (const Graph& g : {makeLinear({1, 5}, false, false), makeLinear({5}, false, false, true)}) {
        EXPECT_FALSE(matchMatMulBias(g, *g.findNode("MatMul0")).has_value());
        const Comparison c = compareWithTrace(g, randomInput({2, 6, 8}, 32));
        EXPECT_EQ(c.opTypes.count("Add"), 1U);
    }
}

// Gradients come from the unfused steps: forwardForBackward keeps what their VJPs read.
TEST(TransformerFusions, GradientsMatchTheFullTrace) {
    for (Graph g : {makeGelu({}), makeLinear({5}, false, true)}) {
        auto exec = Executor::create(std::move(g));
        ASSERT_TRUE(exec.ok()) << exec.error().toString();
        const Tensor x = randomInput({2, 6, 8}, 41);
        auto lean = exec->forwardForBackward(std::span(&x, 1));
        auto full = exec->forwardWithTrace(std::span(&x, 1));
        ASSERT_TRUE(lean.ok() && full.ok());
        const Tensor& y = full->values[exec->graph().outputs()[0].index()];
        const Tensor seed = randomInput(y.shape(), 42);
        const Tensor a = inputGradient(*exec, *lean, seed);
        const Tensor b = inputGradient(*exec, *full, seed);
        ASSERT_TRUE(a.defined() && b.defined());
        EXPECT_TRUE(
            std::equal(a.data<float>(), a.data<float>() + a.numElements(), b.data<float>()));
    }
}

} // namespace
} // namespace qs::runtime
