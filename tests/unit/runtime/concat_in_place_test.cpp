// Concats whose Conv inputs run() writes in place (concat_in_place.h): the same outputs as the
// node-by-node trace, on every kind of Conv kernel, with the inputs no Conv could place copied.

#include "core/graph/graph.h"
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::NodeId;
using graph::TensorShape;
using graph::ValueId;

class ConcatGraph {
public:
    ConcatGraph() {
        x = g.addValue("x", DataType::Float, TensorShape::ofDims({-1, 16, 9, 9}));
        g.addInput(x);
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

    /// Conv of `in` by weights [filters, 16 / group, k, k] (pads k / 2), bias when `bias`.
    ValueId conv(const std::string& name, ValueId in, int64_t filters, int64_t k, int64_t group = 1,
                 bool bias = false) {
        std::vector<ValueId> inputs = {in, constant(name + ".w", {filters, 16 / group, k, k})};
        if (bias) {
            inputs.push_back(constant(name + ".b", {filters}));
        }
        const ValueId out = g.addValue(name, DataType::Float);
        const NodeId id = g.addNode(name, "Conv", inputs, {out});
        g.node(id).attributes.push_back(
            graph::Attribute{"pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2}, {}});
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
    ValueId x;
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

// Winograd (3x3), pointwise GEMM (1x1 + Relu fused) and grouped im2col GEMM inputs are written in
// place; a Relu's output, a depthwise Conv's (whose kernels write planes densely) and a Conv with
// a fused residual (whose layout follows the output's) are copied; a Concat with an input that is
// also a graph output is not planned at all. Batch 1 and 3: with 3 images each input's images
// sit a whole output image apart.
TEST(ConcatInPlace, ConvOutputsGoStraightIntoTheConcatAndMatchTheTrace) {
    ConcatGraph m;
    const ValueId a = m.unary("Relu", "a", m.conv("a.conv", m.x, 20, 3, 1, true));
    const ValueId b = m.unary("Relu", "b", m.conv("b.conv", m.x, 12, 1));
    const ValueId c = m.conv("c", m.x, 8, 3, 2, true);
    const ValueId d = m.unary("Relu", "d", m.x, TensorShape::ofDims({-1, 16, 9, 9}));
    const ValueId e = m.conv("e", m.x, 16, 3, 16, true);
    const ValueId f = m.g.addValue("f", DataType::Float, TensorShape::ofDims({-1, 16, 9, 9}));
    m.g.addNode("f.add", "Add", {m.conv("f.conv", m.x, 16, 1), m.x}, {f});
    const ValueId y = m.concat("y", {a, b, c, d, e, f});
    const ValueId h = m.conv("h", m.x, 4, 1);
    const ValueId k = m.conv("k", m.x, 4, 1);
    const ValueId z = m.concat("z", {h, k});
    m.g.addOutput(y);
    m.g.addOutput(z);
    m.g.addOutput(k);
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    for (const int64_t batch : {1, 3}) {
        const Tensor x = randomInput({batch, 16, 9, 9}, static_cast<uint32_t>(batch));
        RunStats stats;
        auto run = exec->run(std::span(&x, 1), &stats);
        ASSERT_TRUE(run.ok()) << run.error().toString();
        EXPECT_EQ(stats.concatInputsPlaced, 3U) << "batch " << batch;
        auto trace = exec->forwardWithTrace(std::span(&x, 1));
        ASSERT_TRUE(trace.ok()) << trace.error().toString();
        const std::vector<ValueId> outputs = {y, z, k};
        for (size_t o = 0; o < outputs.size(); ++o) {
            const Tensor& want = trace->values[outputs[o].index()];
            const Tensor& got = (*run)[o];
            ASSERT_EQ(got.shape(), want.shape()) << "output " << o;
            for (int64_t i = 0; i < want.numElements(); ++i) {
                const float expected = want.data<float>()[i];
                ASSERT_NEAR(got.data<float>()[i], expected,
                            1e-5F * std::max(1.0F, std::abs(expected)))
                    << "batch " << batch << ", output " << o << ", element " << i;
            }
        }
        EXPECT_EQ((*run)[0].shape(), (Shape{batch, 88, 9, 9}));
    }
}

// An input whose planes do not match the ones a Conv already wrote into the output is the same
// error a Concat gives, naming the node; the run fails cleanly and the next one works.
TEST(ConcatInPlace, AnInputThatDoesNotFitIsAnErrorNamingTheConcat) {
    ConcatGraph m;
    const ValueId other =
        m.g.addValue("other", DataType::Float, TensorShape::ofDims({-1, 4, -1, -1}));
    m.g.addInput(other);
    const ValueId a = m.conv("a", m.x, 8, 1);
    const ValueId r = m.unary("Relu", "r", other, TensorShape::ofDims({-1, 4, -1, -1}));
    m.g.addOutput(m.concat("cat", {a, r}));
    auto exec = Executor::create(std::move(m.g));
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const std::vector<Tensor> wrong = {randomInput({2, 16, 9, 9}, 1), randomInput({2, 4, 5, 5}, 2)};
    auto run = exec->run(wrong);
    ASSERT_FALSE(run.ok());
    EXPECT_NE(run.error().toString().find("cat"), std::string::npos) << run.error().toString();
    EXPECT_NE(run.error().toString().find("does not fit"), std::string::npos)
        << run.error().toString();
    const std::vector<Tensor> right = {randomInput({2, 16, 9, 9}, 1), randomInput({2, 4, 9, 9}, 2)};
    RunStats stats;
    auto again = exec->run(right, &stats);
    ASSERT_TRUE(again.ok()) << again.error().toString();
    EXPECT_EQ(stats.concatInputsPlaced, 1U);
    EXPECT_EQ((*again)[0].shape(), (Shape{2, 12, 9, 9}));
    // The copied input sits in channels 8..11.
    for (int64_t n = 0; n < 2; ++n) {
        for (int64_t i = 0; i < 4 * 81; ++i) {
            const float in = right[1].data<float>()[n * 4 * 81 + i];
            EXPECT_EQ((*again)[0].data<float>()[n * 12 * 81 + 8 * 81 + i], std::max(0.0F, in));
        }
    }
}

} // namespace
} // namespace qs::runtime
