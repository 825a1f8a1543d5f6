// Concats whose Conv inputs run() writes in place (concat_in_place.h): the same outputs as the
// node-by-node trace on each Conv kernel path (Winograd F(4x4) and F(2x2) with whole-row vector
// tiles, im2col and pointwise GEMMs, in-place and copied B, grouped, 1-D), on one to three
// threads, with the inputs no Conv could place copied.

#include "core/graph/graph.h"
#include "core/runtime/executor.h"
#include "core/runtime/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::NodeId;
using graph::TensorShape;
using graph::ValueId;

class ConcatGraph {
public:
    ValueId input(const std::string& name, const std::vector<int64_t>& dims) {
        const ValueId id = g.addValue(name, DataType::Float, TensorShape::ofDims(dims));
        g.addInput(id);
        return id;
    }

    ValueId constant(const std::string& name, const std::vector<int64_t>& dims) {
        int64_t count = 1;
        for (const int64_t d : dims) {
            count *= d;
        }
        std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
        std::vector<float> values(static_cast<size_t>(count));
        for (float& v : values) {
            v = uniform(rng);
        }
        return g.addInitializer(
            name, graph::TensorData::fromValues<float>(DataType::Float, dims, std::span(values)));
    }

    /// Conv of `in` ([N, channels, ...]) by weights [filters, channels / group, k(, k)] (pads
    /// k / 2; 1-D when `oneD`), bias when `bias`.
    ValueId conv(const std::string& name, ValueId in, int64_t channels, int64_t filters, int64_t k,
                 int64_t group = 1, bool bias = false, bool oneD = false) {
        std::vector<int64_t> dims = {filters, channels / group, k};
        if (!oneD) {
            dims.push_back(k);
        }
        std::vector<ValueId> inputs = {in, constant(name + ".w", dims)};
        if (bias) {
            inputs.push_back(constant(name + ".b", {filters}));
        }
        const ValueId out = g.addValue(name, DataType::Float);
        const NodeId id = g.addNode(name, "Conv", inputs, {out});
        const int64_t pad = k / 2;
        g.node(id).attributes.push_back(graph::Attribute{
            "pads",
            oneD ? std::vector<int64_t>{pad, pad} : std::vector<int64_t>{pad, pad, pad, pad},
            {}});
        g.node(id).attributes.push_back(graph::Attribute{"group", group, {}});
        return out;
    }

    ValueId unary(const std::string& op, const std::string& name, ValueId in,
                  const TensorShape& shape = {}) {
        const ValueId out = g.addValue(name, DataType::Float, shape);
        g.addNode(name, op, {in}, {out});
        return out;
    }

    ValueId concat(const std::string& name, const std::vector<ValueId>& inputs) {
        const ValueId out = g.addValue(name, DataType::Float);
        const NodeId id = g.addNode(name, "Concat", inputs, {out});
        g.node(id).attributes.push_back(graph::Attribute{"axis", int64_t{1}, {}});
        return out;
    }

    Graph g;
    std::mt19937 rng{17};
};

Tensor randomInput(const Shape& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    Tensor t = Tensor::allocate(DataType::Float, shape);
    for (int64_t i = 0; i < t.numElements(); ++i) {
        t.mutableData<float>()[i] = normal(rng);
    }
    return t;
}

/// run() on `inputs` on 1, 2 and 3 threads: `placed` Concat inputs written in place, and every
/// graph output as forwardWithTrace (node by node, nothing placed) computes it.
void expectRunMatchesTrace(const Executor& exec, const std::vector<Tensor>& inputs, size_t placed) {
    const int threadsBefore = numThreads();
    for (const int threads : {1, 2, 3}) {
        setNumThreads(threads);
        RunStats stats;
        auto run = exec.run(inputs, &stats);
        ASSERT_TRUE(run.ok()) << run.error().toString();
        EXPECT_EQ(stats.concatInputsPlaced, placed) << threads << " threads";
        auto trace = exec.forwardWithTrace(inputs);
        ASSERT_TRUE(trace.ok()) << trace.error().toString();
        for (size_t o = 0; o < exec.graph().outputs().size(); ++o) {
            const Tensor& want = trace->values[exec.graph().outputs()[o].index()];
            const Tensor& got = (*run)[o];
            ASSERT_EQ(got.shape(), want.shape()) << "output " << o;
            for (int64_t i = 0; i < want.numElements(); ++i) {
                const float expected = want.data<float>()[i];
                ASSERT_NEAR(got.data<float>()[i], expected,
                            1e-5F * std::max(1.0F, std::abs(expected)))
                    << threads << " threads, output " << o << ", element " << i;
            }
        }
    }
    setNumThreads(threadsBefore);
}

// Winograd F(4x4) (3x3), pointwise GEMM (1x1 + Relu fused) and grouped im2col GEMM inputs are
// written in place; a Relu's output, a depthwise Conv's (whose kernels write planes densely) and
// a Conv with a fused residual (whose layout follows the output's) are copied; a Concat with an
// input that is also a graph output is not planned at all. With more than one image each input's
// images sit a whole output image apart; two threads split batch 2 by image.
TEST(ConcatInPlace, ConvOutputsGoStraightIntoTheConcatAndMatchTheTrace) {
    ConcatGraph m;
    const ValueId x = m.input("x", {-1, 16, 9, 9});
    const ValueId a = m.unary("Relu", "a", m.conv("a.conv", x, 16, 20, 3, 1, true));
    const ValueId b = m.unary("Relu", "b", m.conv("b.conv", x, 16, 12, 1));
    const ValueId c = m.conv("c", x, 16, 8, 3, 2, true);
    const ValueId d = m.unary("Relu", "d", x, TensorShape::ofDims({-1, 16, 9, 9}));
    const ValueId e = m.conv("e", x, 16, 16, 3, 16, true);
    const ValueId f = m.g.addValue("f", DataType::Float, TensorShape::ofDims({-1, 16, 9, 9}));
    m.g.addNode("f.add", "Add", {m.conv("f.conv", x, 16, 16, 1), x}, {f});
    m.g.addOutput(m.concat("y", {a, b, c, d, e, f}));
    const ValueId k = m.conv("k", x, 16, 4, 1);
    m.g.addOutput(m.concat("z", {m.conv("h", x, 16, 4, 1), k}));
    m.g.addOutput(k);
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (const int64_t batch : {1, 2, 3}) {
        SCOPED_TRACE("batch " + std::to_string(batch));
        expectRunMatchesTrace(*exec, {randomInput({batch, 16, 9, 9}, 7)}, 3);
    }
}

// Planes 38 wide (nine whole F(4x4) tiles per row: the vector output transform and its
// overlapping last vector) and 160 x 128 weights (F(2x2, 3x3)); 1-D convolutions; a pointwise
// Conv of 9 pixels (its B copied into strips, not read in place).
TEST(ConcatInPlace, WideWinogradRowsOneDimensionalAndSmallPlanes) {
    ConcatGraph m;
    const ValueId wide = m.input("wide", {-1, 128, 38, 38});
    m.g.addOutput(
        m.concat("wide_join", {m.conv("f2", wide, 128, 160, 3, 1, true),
                               m.conv("f4", wide, 128, 16, 3), m.conv("pw", wide, 128, 8, 1)}));
    const ValueId line = m.input("line", {-1, 16, 20});
    m.g.addOutput(m.concat("line_join", {m.conv("k3", line, 16, 8, 3, 1, true, true),
                                         m.conv("k1", line, 16, 4, 1, 1, false, true)}));
    const ValueId small = m.input("small", {-1, 16, 3, 3});
    m.g.addOutput(m.concat(
        "small_join", {m.conv("s1", small, 16, 5, 1), m.conv("s3", small, 16, 16, 3, 1, true)}));
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    expectRunMatchesTrace(*exec,
                          {randomInput({2, 128, 38, 38}, 1), randomInput({2, 16, 20}, 2),
                           randomInput({2, 16, 3, 3}, 3)},
                          7);
}

// A Conv of constants the shape memo may repeat keeps an output of its own (the memo would hand
// a placed one back without data), run after run.
TEST(ConcatInPlace, AConvTheShapeMemoRepeatsIsNotPlaced) {
    ConcatGraph m;
    const ValueId x = m.input("x", {1, 16, 3, 3});
    const ValueId fixed = m.conv("fixed", m.constant("c", {1, 16, 3, 3}), 16, 4, 1);
    m.g.value(fixed).shape = TensorShape::ofDims({1, 4, 3, 3});
    m.g.addOutput(m.concat("join", {fixed, m.conv("live", x, 16, 6, 1)}));
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (int run = 0; run < 3; ++run) {
        SCOPED_TRACE("run " + std::to_string(run));
        const std::vector<Tensor> inputs = {randomInput({1, 16, 3, 3}, 4 + run)};
        expectRunMatchesTrace(*exec, inputs, 1);
        RunStats stats;
        ASSERT_TRUE(exec->run(inputs, &stats).ok());
        EXPECT_EQ(stats.reusedShapeSteps, 1U) << "the memo repeats the Conv of constants";
    }
}

// A declared channel count the tensors contradict (the Relu's output declared with 5 channels,
// computed with 16): the output is joined anew from the placed slices and the inputs.
TEST(ConcatInPlace, AWronglyDeclaredChannelCountStillJoinsRight) {
    ConcatGraph m;
    const ValueId x = m.input("x", {-1, 16, 9, 9});
    const ValueId r = m.unary("Relu", "r", x, TensorShape::ofDims({-1, 5, 9, 9}));
    m.g.addOutput(m.concat("join", {m.conv("a", x, 16, 20, 3), r, m.conv("b", x, 16, 8, 1)}));
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    expectRunMatchesTrace(*exec, {randomInput({2, 16, 9, 9}, 5)}, 2);
}

// An input whose planes do not match the ones a Conv already wrote into the output is the same
// error a Concat gives, naming the node; the run fails cleanly and the next one works.
TEST(ConcatInPlace, AnInputThatDoesNotFitIsAnErrorNamingTheConcat) {
    ConcatGraph m;
    const ValueId x = m.input("x", {-1, 16, 9, 9});
    const ValueId other = m.input("other", {-1, 4, -1, -1});
    const ValueId r = m.unary("Relu", "r", other, TensorShape::ofDims({-1, 4, -1, -1}));
    m.g.addOutput(m.concat("fire_join", {m.conv("a", x, 16, 8, 1), r}));
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const std::vector<Tensor> wrong = {randomInput({2, 16, 9, 9}, 1), randomInput({2, 4, 5, 5}, 2)};
    auto run = exec->run(wrong);
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error().toString().find("fire_join"), std::string::npos)
        << run.error().toString();
    EXPECT_NE(run.error().toString().find("does not fit"), std::string::npos)
        << run.error().toString();
    const std::vector<Tensor> right = {randomInput({2, 16, 9, 9}, 1), randomInput({2, 4, 9, 9}, 2)};
    expectRunMatchesTrace(*exec, right, 1);
}

} // namespace
} // namespace qs::runtime
