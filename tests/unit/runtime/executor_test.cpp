#include "core/runtime/executor.h"

#include <gtest/gtest.h>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::TensorShape;
using graph::ValueId;

/// x -> Relu -> Add(w) -> Relu -> y, with w an initializer.
Graph makeChain() {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({2, 3}));
    const std::vector<float> weights = {1, -1, 2, -2, 3, -3};
    const ValueId w = g.addInitializer(
        "w", graph::TensorData::fromValues<float>(DataType::Float, {2, 3}, std::span(weights)));
    const ValueId a = g.addValue("a", DataType::Float);
    const ValueId b = g.addValue("b", DataType::Float);
    const ValueId y = g.addValue("y", DataType::Float);
    g.addInput(x);
    g.addNode("relu1", "Relu", {x}, {a});
    g.addNode("add", "Add", {a, w}, {b});
    g.addNode("relu2", "Relu", {b}, {y});
    g.addOutput(y);
    return g;
}

TEST(Executor, RunsAChain) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 1, -1, 1, -1, 1});
    RunStats stats;
    auto out = exec->run(std::span(&x, 1), &stats);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    ASSERT_EQ(out->size(), 1U);
    const std::vector<float> expected = {1, 0, 2, 0, 3, 0};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], expected[i]);
    }
    // At most input + two activations alive at once (24 bytes each).
    EXPECT_GT(stats.peakActivationBytes, 0U);
    EXPECT_LE(stats.peakActivationBytes, 3U * 24U);
}

TEST(Executor, ReportsUnsupportedOpBeforeRunning) {
    Graph g = makeChain();
    const ValueId z = g.addValue("z", DataType::Float);
    g.addNode("mystery_node", "FancyOp", {*g.findValue("y")}, {z});
    auto exec = Executor::create(std::move(g));
    ASSERT_FALSE(exec.ok());
    EXPECT_EQ(exec.error().code(), Errc::Unsupported);
    EXPECT_NE(exec.error().toString().find("unsupported op FancyOp (node 'mystery_node')"),
              std::string::npos)
        << exec.error().toString();
}

TEST(Executor, RejectsWrongInputShape) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::zeros(DataType::Float, {3, 2});
    auto out = exec->run(std::span(&x, 1));
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().code(), Errc::InvalidArgument);
}

TEST(Executor, BackwardThroughChain) {
    auto exec = Executor::create(makeChain());
    ASSERT_TRUE(exec.ok());
    // relu(x) + w = [1,1,2,1,3,1] > 0 everywhere, so dy/dx = 1 where x > 0 and 0 elsewhere.
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 2, -1, 3, -1, 4});
    auto trace = exec->forwardWithTrace(std::span(&x, 1));
    ASSERT_TRUE(trace.ok());
    const ValueId y = *exec->graph().findValue("y");
    const std::pair<ValueId, Tensor> seed{y, Tensor::fromVector<float>({2, 3}, {1, 1, 1, 1, 1, 1})};
    auto grads = exec->backward(*trace, std::span(&seed, 1));
    ASSERT_TRUE(grads.ok()) << grads.error().toString();
    const Tensor& dx = (*grads)[exec->graph().findValue("x")->index()];
    ASSERT_TRUE(dx.defined());
    const std::vector<float> expected = {0, 1, 0, 1, 0, 1};
    for (size_t i = 0; i < expected.size(); ++i) {
        EXPECT_FLOAT_EQ(dx.data<float>()[i], expected[i]);
    }
}

TEST(Executor, Fp16ModeStaysClose) {
    auto exec = Executor::create(makeChain(), ExecutorOptions{.fp16 = true});
    ASSERT_TRUE(exec.ok());
    const Tensor x = Tensor::fromVector<float>({2, 3}, {-1, 1.5F, -1, 1, -1, 1});
    auto out = exec->run(std::span(&x, 1));
    ASSERT_TRUE(out.ok()) << out.error().toString();
    EXPECT_EQ((*out)[0].dtype(), DataType::Float);
    EXPECT_NEAR((*out)[0].data<float>()[0], 1.0F, 1e-3F);
}

} // namespace
} // namespace qs::runtime
