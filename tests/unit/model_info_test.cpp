#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/report/model_info.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace qs::report {
namespace {
using graph::GraphBuilder;
using graph::ValueId;

/// Conv 3->8 k3 s1 p1 on 10x10, then Gemm 800->5: MACs by hand.
graph::Graph smallNet() {
    GraphBuilder b;
    const ValueId x = b.input("x", {1, 3, 10, 10});
    const ValueId w = b.weight("w", {8, 3, 3, 3}, std::vector<float>(216, 0.1F));
    const ValueId c = b.op(
        "Conv", "conv", {x, w},
        {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"kernel_shape", std::vector<int64_t>{3, 3}}});
    const ValueId f = b.op("Flatten", "flat", {c});
    const ValueId gw = b.weight("gw", {5, 800}, std::vector<float>(4000, 0.0F));
    const ValueId y = b.op("Gemm", "fc", {f, gw}, {{"transB", int64_t{1}}});
    b.output(y, graph::DataType::Float, {1, 5});
    return b.take();
}

TEST(ModelInfo, CountsNodesParametersAndMacs) {
    auto bytes = onnx::serializeModel(smallNet());
    ASSERT_TRUE(bytes.ok());
    auto graph = onnx::importModelFromBytes(*bytes, {}); // shape inference fills shapes
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const ModelInfo info = computeModelInfo(*graph);
    EXPECT_EQ(info.nodeCount, 3U);
    EXPECT_EQ(info.parameterCount, 216 + 4000);
    EXPECT_EQ(info.macs, 8 * 10 * 10 * (3 * 3 * 3) + 5 * 800);
    EXPECT_FALSE(info.macsDynamicDimsAsOne);
    ASSERT_EQ(info.inputs.size(), 1U);
    EXPECT_EQ(info.inputs[0].shape, "1x3x10x10");
    EXPECT_EQ(info.outputs[0].shape, "1x5");
    const auto json = modelInfoToJson(info);
    EXPECT_EQ(json["op_type_counts"]["Conv"], 1);
    EXPECT_EQ(json["opset"], 13);
    EXPECT_NE(formatModelInfo(info).find("MACs:        25,600"), std::string::npos)
        << formatModelInfo(info);
}

TEST(ModelInfo, DemoModelIsTheDocumentedShape) {
    auto graph =
        onnx::importModel(std::filesystem::path(QS_SOURCE_DIR) / "resources/models/demo_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const ModelInfo info = computeModelInfo(*graph);
    EXPECT_GE(info.nodeCount, 40U);
    EXPECT_LE(info.nodeCount, 80U);
    EXPECT_TRUE(info.opaqueNodes.empty());
    std::map<std::string, size_t> counts(info.opTypeCounts.begin(), info.opTypeCounts.end());
    for (const char* op : {"Conv", "Add", "Concat", "MaxPool", "GlobalAveragePool", "Gemm"}) {
        EXPECT_GT(counts[op], 0U) << op;
    }
    EXPECT_EQ(info.outputs.at(0).shape, "batchx10");
}

} // namespace
} // namespace qs::report
