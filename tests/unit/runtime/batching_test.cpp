#include "core/runtime/batching.h"
#include "core/runtime/npy.h"
#include "core/runtime/op_util.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qs::runtime {
namespace {

using graph::DataType;
using graph::Graph;
using graph::ValueId;

ValueId addWeight(Graph& g, const std::string& name, Shape shape, std::mt19937& rng) {
    const Tensor t = randomTensor(rng, shape, -0.5F, 0.5F);
    return g.addInitializer(name, t.toTensorData());
}

/// A residual CNN with a dynamic batch: conv-bn-relu, conv, add, global pool, flatten, gemm.
Graph makeResidualCnn() {
    std::mt19937 rng(7);
    Graph g;
    graph::TensorShape inShape;
    inShape.rankKnown = true;
    inShape.dims = {graph::Dim::symbolic("batch"), graph::Dim::known(3), graph::Dim::known(8),
                    graph::Dim::known(8)};
    const ValueId x = g.addValue("x", DataType::Float, inShape);
    g.addInput(x);
    const ValueId w1 = addWeight(g, "w1", {4, 3, 3, 3}, rng);
    const ValueId b1 = addWeight(g, "b1", {4}, rng);
    const ValueId scale = addWeight(g, "scale", {4}, rng);
    const ValueId bias = addWeight(g, "bias", {4}, rng);
    const ValueId mean = addWeight(g, "mean", {4}, rng);
    const Tensor var = randomTensor(rng, {4}, 0.5F, 1.5F);
    const ValueId varId = g.addInitializer("var", var.toTensorData());
    const ValueId w2 = addWeight(g, "w2", {4, 4, 3, 3}, rng);
    const ValueId wf = addWeight(g, "wf", {5, 4}, rng);
    const ValueId bf = addWeight(g, "bf", {5}, rng);
    auto v = [&](const char* name) { return g.addValue(name, DataType::Float); };
    const ValueId c1 = v("c1"), bn = v("bn"), r1 = v("r1"), c2 = v("c2"), sum = v("sum"),
                  pooled = v("pooled"), flat = v("flat"), y = v("y");
    const std::vector<graph::Attribute> pads{intsAttribute("pads", {1, 1, 1, 1})};
    g.addNode("conv1", "Conv", {x, w1, b1}, {c1}, pads);
    g.addNode("bn", "BatchNormalization", {c1, scale, bias, mean, varId}, {bn});
    g.addNode("relu", "Relu", {bn}, {r1});
    g.addNode("conv2", "Conv", {r1, w2}, {c2}, pads);
    g.addNode("add", "Add", {c2, r1}, {sum});
    g.addNode("pool", "GlobalAveragePool", {sum}, {pooled});
    g.addNode("flatten", "Flatten", {pooled}, {flat});
    g.addNode("fc", "Gemm", {flat, wf, bf}, {y}, {intAttribute("transB", 1)});
    g.addOutput(y);
    return g;
}

TEST(Batching, BatchedRunsEqualPerSampleRuns) {
    auto exec = Executor::create(makeResidualCnn());
    ASSERT_TRUE(exec.ok()) << exec.error().toString();
    const Tensor inputs = randomNormal({7, 3, 8, 8}, 3);
    auto batched = runBatched(*exec, {inputs}, 3);
    ASSERT_TRUE(batched.ok()) << batched.error().toString();
    ASSERT_EQ((*batched)[0].shape(), (Shape{7, 5}));
    for (int64_t n = 0; n < 7; ++n) {
        const Tensor one = sliceBatch(inputs, n, n + 1);
        auto single = exec->run(std::span(&one, 1));
        ASSERT_TRUE(single.ok());
        for (int64_t k = 0; k < 5; ++k) {
            const float expected = (*single)[0].data<float>()[k];
            const float actual = (*batched)[0].data<float>()[n * 5 + k];
            EXPECT_LE(std::abs(actual - expected), 1e-5F * std::max(1.0F, std::abs(expected)));
        }
    }
}

TEST(Batching, Fp16StaysWithinHalfPrecision) {
    auto exact = Executor::create(makeResidualCnn());
    auto half = Executor::create(makeResidualCnn(), {.fp16 = true});
    ASSERT_TRUE(exact.ok() && half.ok());
    const Tensor x = randomNormal({2, 3, 8, 8}, 5);
    auto a = exact->run(std::span(&x, 1));
    auto b = half->run(std::span(&x, 1));
    ASSERT_TRUE(a.ok() && b.ok());
    for (int64_t i = 0; i < (*a)[0].numElements(); ++i) {
        EXPECT_NEAR((*b)[0].data<float>()[i], (*a)[0].data<float>()[i], 1e-2);
    }
}

TEST(Npy, RoundTripsAndRejectsFortranOrder) {
    const Tensor t = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto bytes = serializeNpy(t);
    ASSERT_TRUE(bytes.ok());
    auto back = parseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(back->data<float>()[5], 6.0F);
    std::string fortran = *bytes;
    fortran.replace(fortran.find("False"), 5, "True ");
    auto rejected = parseNpy(fortran);
    ASSERT_FALSE(rejected.ok());
    EXPECT_NE(rejected.error().message().find("Fortran"), std::string::npos);
    auto badType = parseNpy(std::string(
        "\x93NUMPY\x01\x00\x20\x00{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", 42));
    EXPECT_FALSE(badType.ok());
}

} // namespace
} // namespace qs::runtime
