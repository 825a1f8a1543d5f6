#include "core/graph/graph_builder.h"
#include "core/graph/metatype.h"

#include <gtest/gtest.h>

namespace qs::graph {
namespace {

std::vector<float> zeros(size_t count) {
    return std::vector<float>(count, 0.0F);
}

TEST(Metatype, DepthwiseConvolutionNeedsGroupEqualToInputChannels) {
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 8, 16, 16});
    const ValueId dwWeight = b.weight("dw", {8, 1, 3, 3}, zeros(72));
    const ValueId groupWeight = b.weight("gw", {8, 4, 3, 3}, zeros(288));
    const ValueId plainWeight = b.weight("pw", {8, 8, 1, 1}, zeros(64));
    const ValueId dw = b.op("Conv", "dw_conv", {x, dwWeight}, {{"group", int64_t{8}}});
    const ValueId grouped = b.op("Conv", "group_conv", {dw, groupWeight}, {{"group", int64_t{2}}});
    b.op("Conv", "plain_conv", {grouped, plainWeight});
    Graph g = b.take();
    EXPECT_EQ(metatypeOf(g, *g.findNode("dw_conv")).name, "ONNXDepthwiseConvolutionMetatype");
    EXPECT_EQ(metatypeOf(g, *g.findNode("dw_conv")).hwName, "DepthWiseConvolution");
    // NNCF's subtypes of Conv: a group other than 1 that is not depthwise is GroupConvolution
    // (HW op Convolution, but no LINEAR op for the fused patterns).
    EXPECT_EQ(metatypeOf(g, *g.findNode("group_conv")).name, "ONNXGroupConvolutionMetatype");
    EXPECT_EQ(metatypeOf(g, *g.findNode("group_conv")).hwName, "Convolution");
    EXPECT_EQ(weightOutputChannelAxis(g, *g.findNode("group_conv"), 1), 0);
    EXPECT_EQ(constantWeightPorts(g, *g.findNode("group_conv")), std::vector<int>{1});
    EXPECT_EQ(metatypeOf(g, *g.findNode("plain_conv")).name, "ONNXConvolutionMetatype");
    EXPECT_EQ(weightOutputChannelAxis(g, *g.findNode("plain_conv"), 1), 0);
}

TEST(Metatype, DepthwiseTestReadsOnlyGraphInitializers) {
    // NNCF looks the depthwise weight up among the graph initializers (through Identity,
    // Transpose, Reshape and Q/DQ): a weight held by a Constant node, as Paddle exports keep
    // them, leaves the conv a GroupConvolution.
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 8, 16, 16});
    const ValueId constantWeight = b.weight("cw", {8, 1, 3, 3}, zeros(72));
    b.graph().value(constantWeight).constantNodeName = "cw_node";
    const ValueId viaConstant =
        b.op("Conv", "dw_constant_node", {x, constantWeight}, {{"group", int64_t{8}}});
    const ValueId identity = b.op("Identity", "id", {b.weight("iw", {8, 1, 3, 3}, zeros(72))});
    b.op("Conv", "dw_through_identity", {viaConstant, identity}, {{"group", int64_t{8}}});
    Graph g = b.take();
    EXPECT_EQ(metatypeOf(g, *g.findNode("dw_constant_node")).name, "ONNXGroupConvolutionMetatype");
    EXPECT_EQ(metatypeOf(g, *g.findNode("dw_through_identity")).name,
              "ONNXDepthwiseConvolutionMetatype");
}

TEST(Metatype, GatherOnConstantTableIsEmbedding) {
    GraphBuilder b;
    const ValueId ids = b.input("ids", {1, 5}, DataType::Int64);
    const ValueId table = b.weight("table", {100, 16}, zeros(1600));
    const ValueId emb = b.op("Gather", "embed", {table, ids});
    const ValueId axes = b.int64s("idx", {0});
    b.op("Gather", "pick", {emb, axes}, {{"axis", int64_t{1}}});
    Graph g = b.take();
    const Metatype& embedding = metatypeOf(g, *g.findNode("embed"));
    EXPECT_EQ(embedding.name, "ONNXEmbeddingMetatype");
    EXPECT_EQ(embedding.defaultTrait, QuantizationTrait::OutputQuantizationAsWeights);
    EXPECT_EQ(constantWeightPorts(g, *g.findNode("embed")), std::vector<int>{0});
    EXPECT_EQ(metatypeOf(g, *g.findNode("pick")).defaultTrait,
              QuantizationTrait::QuantizationAgnostic);
}

TEST(Metatype, MatMulAndGemmWeightAxes) {
    GraphBuilder b;
    const ValueId x = b.input("x", {2, 4, 16});
    const ValueId w = b.weight("w", {16, 32}, zeros(512));
    const ValueId y = b.op("MatMul", "mm", {x, w});
    const ValueId flat = b.op("Flatten", "flat", {y});
    const ValueId gw = b.weight("gw", {10, 128}, zeros(1280));
    b.op("Gemm", "fc", {flat, gw}, {{"transB", int64_t{1}}});
    Graph g = b.take();
    EXPECT_EQ(constantWeightPorts(g, *g.findNode("mm")), std::vector<int>{1});
    EXPECT_EQ(weightOutputChannelAxis(g, *g.findNode("mm"), 1), 1);
    EXPECT_EQ(weightOutputChannelAxis(g, *g.findNode("fc"), 1), 0);
    EXPECT_EQ(metatypeOf(g, *g.findNode("fc")).hwName, "MatMul");
}

TEST(Metatype, TraitsFollowNncfDefaults) {
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 4});
    const ValueId r = b.op("Relu", "relu", {x});
    const ValueId m = b.op("MaxPool", "pool", {r});
    const ValueId c = b.op("Concat", "cat", {m, r}, {{"axis", int64_t{1}}});
    b.op("Add", "add", {c, c});
    Graph g = b.take();
    EXPECT_EQ(metatypeOf(g, *g.findNode("relu")).defaultTrait, QuantizationTrait::NonQuantizable);
    EXPECT_EQ(metatypeOf(g, *g.findNode("pool")).defaultTrait,
              QuantizationTrait::QuantizationAgnostic);
    EXPECT_EQ(metatypeOf(g, *g.findNode("cat")).defaultTrait, QuantizationTrait::Concat);
    EXPECT_EQ(metatypeOf(g, *g.findNode("add")).defaultTrait, QuantizationTrait::InputsQuantizable);
    EXPECT_EQ(metatypeOf(g, *g.findNode("add")).hwName, "Add");
    EXPECT_TRUE(isRegisteredOpType("Conv"));
    EXPECT_FALSE(isRegisteredOpType("FancyOp"));
}

} // namespace
} // namespace qs::graph
