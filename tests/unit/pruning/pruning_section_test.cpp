// Pruning sections on hand-built graphs: chains with per-channel intermediates and a shared node,
// residual Add, Concat, fan-out, Flatten -> Gemm, depthwise in the middle, Gemm/MatMul chains.
#include "core/graph/graph_builder.h"
#include "core/pruning/prepare_graph.h"
#include "core/pruning/pruning_section.h"
#include "pruning_test_models.h"

#include <gtest/gtest.h>

namespace qs::pruning {
namespace {

std::string nameOf(const graph::Graph& graph, graph::NodeId id) {
    return graph.node(id).name;
}

std::string reasonOf(const graph::Graph& graph, const SectionDetection& d,
                     const std::string& node) {
    return d.notPrunableReason[graph.findNode(node)->index()];
}

TEST(PruningSection, ChainWithPerChannelIntermediatesAndASharedNode) {
    const graph::Graph graph = testing::chainModel();
    const SectionDetection d = detectPruningSections(graph).value();
    ASSERT_EQ(d.sections.size(), 2U);
    const PruningSection& first = d.sections[0];
    EXPECT_EQ(nameOf(graph, first.entry), "conv1");
    EXPECT_EQ(nameOf(graph, first.exit), "conv2");
    EXPECT_EQ(first.channels, 8);
    std::vector<std::string> names;
    for (const graph::NodeId n : first.intermediates) {
        names.push_back(nameOf(graph, n));
    }
    EXPECT_EQ(names, (std::vector<std::string>{"bn", "prelu", "mul", "add", "relu1"}));
    // conv1 W and b, bn's four, the PRelu slope, the Mul constant (the scalar Add constant is
    // not sliced), conv2's W on its input axis.
    EXPECT_EQ(first.parameters.size(), 2U + 4U + 1U + 1U + 1U);
    EXPECT_EQ(first.parameters.back().role, ChannelRole::Input);
    const PruningSection& second = d.sections[1];
    EXPECT_EQ(nameOf(graph, second.entry), "conv2"); // the shared node
    EXPECT_EQ(nameOf(graph, second.exit), "conv3");
    EXPECT_EQ(d.sectionOfExit(second.entry), 0);
    EXPECT_EQ(reasonOf(graph, d, "conv3"), "");
    EXPECT_NE(reasonOf(graph, d, "gap"), "");
    EXPECT_NE(reasonOf(graph, d, "fc").find("graph output"), std::string::npos);
}

TEST(PruningSection, ResidualAddEndsTheWalk) {
    const graph::Graph graph = testing::residualModel();
    const SectionDetection d = detectPruningSections(graph).value();
    ASSERT_EQ(d.sections.size(), 1U);
    EXPECT_EQ(nameOf(graph, d.sections[0].entry), "conv1");
    EXPECT_EQ(nameOf(graph, d.sections[0].exit), "conv2");
    EXPECT_EQ(reasonOf(graph, d, "residual"), "residual Add: joins two branches");
    EXPECT_NE(reasonOf(graph, d, "relu2"), "");
}

TEST(PruningSection, ConcatEndsTheWalk) {
    const graph::Graph graph = testing::concatModel();
    const SectionDetection d = detectPruningSections(graph).value();
    EXPECT_TRUE(d.sections.empty());
    EXPECT_NE(reasonOf(graph, d, "conv1").find("Concat"), std::string::npos);
    EXPECT_NE(reasonOf(graph, d, "conv2").find("Concat"), std::string::npos);
    EXPECT_EQ(reasonOf(graph, d, "concat"), "Concat joins channels of several inputs");
}

TEST(PruningSection, FanOutIsNoSection) {
    const graph::Graph graph = testing::fanOutModel();
    const SectionDetection d = detectPruningSections(graph).value();
    EXPECT_TRUE(d.sections.empty());
    EXPECT_NE(reasonOf(graph, d, "conv1").find("fans out to 2 consumers"), std::string::npos);
}

TEST(PruningSection, FlattenToGemmChannelCountsDoNotMatch) {
    const graph::Graph graph = testing::flattenGemmModel();
    const SectionDetection d = detectPruningSections(graph).value();
    EXPECT_TRUE(d.sections.empty());
    EXPECT_NE(reasonOf(graph, d, "conv").find("Flatten"), std::string::npos);
    EXPECT_NE(reasonOf(graph, d, "flatten").find("reshape"), std::string::npos);
}

TEST(PruningSection, GlobalPoolThenFlattenKeepsTheChannels) {
    const graph::Graph graph = testing::gapGemmModel();
    const SectionDetection d = detectPruningSections(graph).value();
    ASSERT_EQ(d.sections.size(), 1U);
    EXPECT_EQ(nameOf(graph, d.sections[0].entry), "conv");
    EXPECT_EQ(nameOf(graph, d.sections[0].exit), "fc");
    EXPECT_EQ(d.sections[0].intermediates.size(), 4U);  // bn, relu, gap, flatten
    EXPECT_EQ(d.sections[0].parameters.back().axis, 1); // transB: B [N, K]
}

TEST(PruningSection, DepthwiseConvIsNeitherEntryNorExitNorIntermediate) {
    const graph::Graph graph = testing::depthwiseModel();
    const SectionDetection d = detectPruningSections(graph).value();
    EXPECT_TRUE(d.sections.empty());
    EXPECT_NE(reasonOf(graph, d, "conv1").find("depthwise convolution (group 8)"),
              std::string::npos);
    EXPECT_NE(reasonOf(graph, d, "dw").find("depthwise"), std::string::npos);
}

TEST(PruningSection, GemmAndMatMulChain) {
    const graph::Graph graph = testing::mlpModel();
    const SectionDetection d = detectPruningSections(graph).value();
    ASSERT_EQ(d.sections.size(), 2U);
    EXPECT_EQ(nameOf(graph, d.sections[0].entry), "fc1");
    EXPECT_EQ(d.sections[0].channels, 16);
    EXPECT_EQ(d.sections[0].parameters.front().axis, 1); // Gemm without transB: B [K, N]
    EXPECT_EQ(d.sections[0].parameters.back().axis, 1);  // fc2 with transB: B [N, K], in = 1
    EXPECT_EQ(nameOf(graph, d.sections[1].entry), "fc2");
    EXPECT_EQ(d.sections[1].parameters.front().axis, 0);
    EXPECT_EQ(nameOf(graph, d.sections[1].exit), "mm");
    EXPECT_EQ(d.sections[1].parameters.back().axis, 0); // MatMul [K, N]: in = 0
}

TEST(PruningSection, SharedBiasesThroughIdentityAreUntied) {
    // PyTorch's export of a randomly initialised ResNet: identical zero biases folded into one
    // initializer, read by every conv through its own Identity node.
    graph::GraphBuilder b(13);
    const graph::ValueId x = b.input("x", {-1, 4, 6, 6});
    const std::vector<float> zeros(8, 0.0F);
    const graph::ValueId shared = b.weight("shared_bias", {8}, zeros);
    const std::vector<float> w1(8 * 4, 0.5F);
    const std::vector<float> w2(8 * 8, 0.25F);
    const graph::ValueId b1 = b.op("Identity", "id1", {shared});
    const graph::ValueId b2 = b.op("Identity", "id2", {shared});
    graph::ValueId h = b.op("Conv", "conv1", {x, b.weight("w1", {8, 4, 1, 1}, w1), b1});
    h = b.op("Relu", "relu", {h});
    b.output(b.op("Conv", "conv2", {h, b.weight("w2", {8, 8, 1, 1}, w2), b2}));
    const graph::Graph graph = testing::withShapes(b.graph());
    EXPECT_TRUE(detectPruningSections(graph).value().sections.empty());
    int untied = 0;
    const graph::Graph prepared = preparePruningGraph(graph, &untied).value();
    EXPECT_FALSE(prepared.findNode("id1").has_value());
    const SectionDetection d = detectPruningSections(prepared).value();
    ASSERT_EQ(d.sections.size(), 1U);
    EXPECT_EQ(nameOf(prepared, d.sections[0].entry), "conv1");
    const runtime::Tensor in = testing::randomInputs(graph, 2, 1);
    EXPECT_LT(
        testing::maxAbsDiff(testing::runGraph(graph, in)[0], testing::runGraph(prepared, in)[0]),
        1e-7);
}

} // namespace
} // namespace qs::pruning
