// Each pass keeps the model's outputs: run before and after on random inputs and compare.

#include "core/pass/pass.h"
#include "core/runtime/batching.h"
#include "core/runtime/op_util.h"

#include <gtest/gtest.h>

namespace qs::pass {
namespace {

using graph::DataType;
using graph::Graph;
using graph::ValueId;
using runtime::Tensor;

ValueId addWeight(Graph& g, const std::string& name, runtime::Shape shape, std::mt19937& rng,
                  float lo = -0.5F, float hi = 0.5F) {
    return g.addInitializer(name, runtime::randomTensor(rng, shape, lo, hi).toTensorData());
}

/// x -> Conv -> BN -> Identity -> Relu -> Dropout -> Reshape(shape = Concat(Shape consts)) -> y
Graph makeModel() {
    std::mt19937 rng(11);
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, graph::TensorShape::ofDims({2, 3, 6, 6}));
    g.addInput(x);
    auto v = [&](const char* name) { return g.addValue(name, DataType::Float); };
    const ValueId conv = v("conv"), bn = v("bn"), id = v("id"), relu = v("relu"), drop = v("drop"),
                  y = v("y");
    const ValueId shapeA =
        g.addInitializer("shape_a", runtime::int64Tensor<int>({2}).toTensorData());
    const ValueId shapeB =
        g.addInitializer("shape_b", runtime::int64Tensor<int>({-1}).toTensorData());
    const ValueId shape = g.addValue("shape", DataType::Int64);
    g.addNode("conv", "Conv",
              {x, addWeight(g, "w", {4, 3, 3, 3}, rng), addWeight(g, "b", {4}, rng)}, {conv},
              {runtime::intsAttribute("pads", {1, 1, 1, 1})});
    g.addNode("bn", "BatchNormalization",
              {conv, addWeight(g, "gamma", {4}, rng), addWeight(g, "beta", {4}, rng),
               addWeight(g, "mean", {4}, rng), addWeight(g, "var", {4}, rng, 0.5F, 1.5F)},
              {bn});
    g.addNode("identity", "Identity", {bn}, {id});
    g.addNode("relu", "Relu", {id}, {relu});
    g.addNode("dropout", "Dropout", {relu}, {drop});
    g.addNode("concat", "Concat", {shapeA, shapeB}, {shape}, {runtime::intAttribute("axis", 0)});
    g.addNode("reshape", "Reshape", {drop, shape}, {y});
    g.addOutput(y);
    return g;
}

Tensor runOnce(const Graph& g, const Tensor& x) {
    auto exec = runtime::Executor::create(g);
    QS_CHECK(exec.ok(), "the test model must run");
    auto out = exec->run(std::span(&x, 1));
    QS_CHECK(out.ok(), "the test model must run");
    return (*out)[0];
}

void expectSameOutputs(const Graph& before, const Graph& after,
                       const runtime::Shape& inputShape = {2, 3, 6, 6}) {
    const Tensor x = runtime::randomNormal(inputShape, 21);
    const Tensor a = runOnce(before, x);
    const Tensor b = runOnce(after, x);
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t i = 0; i < a.numElements(); ++i) {
        EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i],
                    1e-5 * std::max(1.0F, std::abs(a.data<float>()[i])));
    }
}

size_t countOps(const Graph& g, const std::string& opType) {
    size_t count = 0;
    for (const graph::NodeId id : g.nodeIds()) {
        count += g.node(id).opType == opType ? 1 : 0;
    }
    return count;
}

TEST(Passes, RemoveIdentityKeepsOutputs) {
    const Graph before = makeModel();
    Graph after = before;
    PassContext context;
    auto changed = runPipeline(after, "remove-identity", context);
    ASSERT_TRUE(changed.ok()) << changed.error().toString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(countOps(after, "Identity"), 0U);
    EXPECT_EQ(countOps(after, "Dropout"), 0U);
    expectSameOutputs(before, after);
}

TEST(Passes, FoldBatchNormKeepsOutputs) {
    const Graph before = makeModel();
    Graph after = before;
    PassContext context;
    auto changed = runPipeline(after, "fold-batch-norm", context);
    ASSERT_TRUE(changed.ok()) << changed.error().toString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(countOps(after, "BatchNormalization"), 0U);
    expectSameOutputs(before, after);
}

/// input -> BN (random parameters, var kept positive) -> Relu -> y, the graph's output. The Relu
/// keeps the BN's output internal: a graph output keeps its producer (folding would rename it).
void endWithBatchNormRelu(Graph& g, ValueId input, int64_t channels, std::mt19937& rng) {
    const ValueId bn = g.addValue("bn", DataType::Float);
    const ValueId y = g.addValue("y", DataType::Float);
    g.addNode("bn", "BatchNormalization",
              {input, addWeight(g, "gamma", {channels}, rng), addWeight(g, "beta", {channels}, rng),
               addWeight(g, "mean", {channels}, rng),
               addWeight(g, "var", {channels}, rng, 0.5F, 1.5F)},
              {bn});
    g.addNode("relu", "Relu", {bn}, {y});
    g.addOutput(y);
}

struct GemmCase {
    std::string label;
    bool transB = false;
    runtime::Shape biasShape; ///< empty: no C
    float alpha = 1.0F;
    float beta = 1.0F;
};

/// x [4, 6] -> Gemm (B [6, 5] or [5, 6], C) -> BN -> Relu -> y
Graph makeGemmModel(const GemmCase& c) {
    std::mt19937 rng(5);
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, graph::TensorShape::ofDims({4, 6}));
    g.addInput(x);
    const ValueId gemm = g.addValue("gemm", DataType::Float);
    std::vector<ValueId> inputs{
        x, addWeight(g, "b", c.transB ? runtime::Shape{5, 6} : runtime::Shape{6, 5}, rng)};
    if (!c.biasShape.empty()) {
        inputs.push_back(addWeight(g, "c", c.biasShape, rng));
    }
    g.addNode("gemm", "Gemm", inputs, {gemm},
              {runtime::intAttribute("transB", c.transB ? 1 : 0),
               runtime::floatAttribute("alpha", c.alpha), runtime::floatAttribute("beta", c.beta)});
    endWithBatchNormRelu(g, gemm, 5, rng);
    return g;
}

class FoldBatchNormGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(FoldBatchNormGemm, KeepsOutputs) {
    const Graph before = makeGemmModel(GetParam());
    Graph after = before;
    PassContext context;
    auto changed = runPipeline(after, "fold-batch-norm", context);
    ASSERT_TRUE(changed.ok()) << changed.error().toString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(countOps(after, "BatchNormalization"), 0U);
    expectSameOutputs(before, after, {4, 6});
}

INSTANTIATE_TEST_SUITE_P(
    Variants, FoldBatchNormGemm,
    ::testing::Values(GemmCase{"plain", false, {5}}, GemmCase{"transB", true, {5}},
                      GemmCase{"no_bias", false, {}}, GemmCase{"row_bias", true, {1, 5}},
                      GemmCase{"scalar_bias_alpha_beta", false, {1}, 0.5F, 2.0F}),
    [](const auto& info) { return info.param.label; });

TEST(Passes, FoldBatchNormLeavesAColumnBiasAlone) {
    // C [4, 1] broadcasts along the rows: not a per-channel bias, so the BN must stay.
    Graph g = makeGemmModel({"column", false, {4, 1}});
    PassContext context;
    auto changed = runPipeline(g, "fold-batch-norm", context);
    ASSERT_TRUE(changed.ok());
    EXPECT_FALSE(*changed);
    EXPECT_EQ(countOps(g, "BatchNormalization"), 1U);
}

TEST(Passes, FoldBatchNormIntoMatMulAdd) {
    std::mt19937 rng(9);
    Graph before;
    const ValueId x = before.addValue("x", DataType::Float, graph::TensorShape::ofDims({3, 6}));
    before.addInput(x);
    const ValueId mm = before.addValue("mm", DataType::Float);
    const ValueId add = before.addValue("add", DataType::Float);
    before.addNode("matmul", "MatMul", {x, addWeight(before, "w", {6, 5}, rng)}, {mm});
    before.addNode("add", "Add", {addWeight(before, "c", {5}, rng), mm}, {add});
    endWithBatchNormRelu(before, add, 5, rng);
    Graph after = before;
    PassContext context;
    auto changed = runPipeline(after, "fold-batch-norm", context);
    ASSERT_TRUE(changed.ok()) << changed.error().toString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(countOps(after, "BatchNormalization"), 0U);
    ASSERT_EQ(context.log.size(), 1U);
    EXPECT_NE(context.log[0].find("MatMul 'matmul' + Add 'add'"), std::string::npos);
    expectSameOutputs(before, after, {3, 6});
}

TEST(Passes, PipelineTimesEachPass) {
    Graph g = makeModel();
    PassContext context;
    ASSERT_TRUE(runPipeline(g, kInferencePipeline, context).ok());
    ASSERT_EQ(context.timings.size(), 3U);
    EXPECT_EQ(context.timings[0].name, "remove-identity");
    EXPECT_TRUE(context.timings[0].changed);
    EXPECT_EQ(context.timings[2].name, "fold-batch-norm");
    for (const PassTiming& t : context.timings) {
        EXPECT_GE(t.seconds, 0.0);
    }
}

TEST(Passes, FoldConstantsKeepsOutputs) {
    const Graph before = makeModel();
    Graph after = before;
    PassContext context;
    auto changed = runPipeline(after, "fold-constants", context);
    ASSERT_TRUE(changed.ok()) << changed.error().toString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(countOps(after, "Concat"), 0U);
    expectSameOutputs(before, after);
}

TEST(Passes, InferencePipelineAndUnknownPass) {
    const Graph before = makeModel();
    Graph after = before;
    PassContext context;
    ASSERT_TRUE(runPipeline(after, kInferencePipeline, context).ok());
    EXPECT_EQ(after.numNodes(), 3U); // Conv, Relu, Reshape
    expectSameOutputs(before, after);
    auto bad = runPipeline(after, "no-such-pass", context);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code(), Errc::InvalidArgument);
}

} // namespace
} // namespace qs::pass
