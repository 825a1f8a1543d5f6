// FP16 conversion: value types, Cast placement at kept float32 boundaries, blocked ops, clamped
// and flushed weights; and the opset migration the weight-compression export relies on.

#include "core/compression/fp16_conversion.h"
#include "core/compression/opset_upgrade.h"
#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "tests/unit/compression/tiny_llm.h"

#include <gtest/gtest.h>

namespace qs::compression {
namespace {

using graph::DataType;

const graph::Node& producerOf(const graph::Graph& graph, graph::ValueId value) {
    return graph.node(graph.value(value).producer);
}

/// Element types of every value, as the importer's shape inference gives them.
graph::Graph inferred(const graph::Graph& graph) {
    auto bytes = onnx::serializeModel(graph);
    EXPECT_TRUE(bytes.ok());
    auto model = onnx::importModelFromBytes(*bytes, {});
    EXPECT_TRUE(model.ok()) << model.error().toString();
    return std::move(model).value();
}

graph::DataType dtypeOf(const graph::Graph& graph, const std::string& name) {
    return graph.value(*graph.findValue(name)).dtype;
}

TEST(Fp16Conversion, KeepIoTypesCastsTheOutputUnderItsName) {
    graph::Graph graph = inferred(testing::makeTinyLlm());
    Fp16Options options;
    options.keepIoTypes = true;
    auto report = convertToFloat16(graph, options);
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_EQ(report->convertedInitializers, 4);
    EXPECT_EQ(report->castsInserted, 1);
    EXPECT_EQ(report->clampedElements, 0);
    EXPECT_EQ(report->bytesAfter * 2, report->bytesBefore);
    ASSERT_EQ(graph.outputs().size(), 1U);
    const graph::ValueId output = graph.outputs()[0];
    EXPECT_EQ(graph.value(output).name, "probs_output_0");
    EXPECT_EQ(graph.value(output).dtype, DataType::Float);
    EXPECT_EQ(producerOf(graph, output).opType, "Cast");
    EXPECT_EQ(dtypeOf(graph, "mlp.up.weight"), DataType::Float16);
    EXPECT_EQ(dtypeOf(graph, "mlp.up_output_0"), DataType::Float16);
    EXPECT_EQ(dtypeOf(graph, "input_ids"), DataType::Int64);
    EXPECT_TRUE(graph::verify(graph).ok());
    EXPECT_TRUE(onnx::checkModel(graph).ok());
}

TEST(Fp16Conversion, Float16InputsAndOutputsWithoutKeepIoTypes) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {1, 4});
    const std::vector<float> w(16, 0.5F);
    const auto y = b.op("MatMul", "mm", {x, b.weight("w", {4, 4}, w)});
    b.output(b.op("Relu", "act", {y}), DataType::Float, {1, 4});
    graph::Graph graph = inferred(b.take());
    auto report = convertToFloat16(graph, {});
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->castsInserted, 0);
    EXPECT_EQ(dtypeOf(graph, "x"), DataType::Float16);
    EXPECT_EQ(graph.value(graph.outputs()[0]).dtype, DataType::Float16);
    EXPECT_TRUE(onnx::checkModel(graph).ok());
}

TEST(Fp16Conversion, BlockedOpRunsInFloat32BetweenCasts) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {1, 4});
    const std::vector<float> w = {1e6F, -1e6F, 1e-10F, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const auto y = b.op("MatMul", "mm", {x, b.weight("w", {4, 4}, w)});
    const auto s = b.op("Softmax", "sm", {y}, {{"axis", int64_t{-1}}});
    const auto c = b.op("Cast", "cast", {b.op("Relu", "act", {s})}, {{"to", int64_t{1}}});
    b.output(c, DataType::Float, {1, 4});
    graph::Graph graph = inferred(b.take());
    Fp16Options options;
    options.blockedOps = {"Softmax"};
    auto report = convertToFloat16(graph, options);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->clampedElements, 2);
    EXPECT_EQ(report->flushedElements, 1);
    EXPECT_EQ(report->clampedTensors, (std::vector<std::string>{"w"}));
    EXPECT_EQ(report->blockedNodes, 1);
    EXPECT_EQ(report->castsInserted, 2); // into Softmax, out of it
    const graph::Node& softmax = graph.node(*graph.findNode("sm"));
    EXPECT_EQ(graph.value(softmax.inputs[0]).dtype, DataType::Float);
    EXPECT_EQ(producerOf(graph, softmax.inputs[0]).opType, "Cast");
    EXPECT_EQ(graph.value(softmax.outputs[0]).dtype, DataType::Float);
    const graph::Node& cast = graph.node(*graph.findNode("cast"));
    EXPECT_EQ(cast.intAttr("to", 0), 10); // a Cast to float inside the float16 region
    const auto weight = graph.value(*graph.findValue("w")).initializer;
    EXPECT_EQ(weight->elementAsDouble(0), 65504.0);
    EXPECT_EQ(weight->elementAsDouble(1), -65504.0);
    EXPECT_TRUE(onnx::checkModel(graph).ok());
}

TEST(Fp16Conversion, ResizeScalesStayFloat32) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {1, 1, 2, 2});
    const std::vector<float> scales = {1, 1, 2, 2};
    const auto scalesValue = b.weight("scales", {4}, scales);
    const auto resized = b.op("Resize", "resize", {x, graph::ValueId(), scalesValue},
                              {{"mode", std::string("nearest")}});
    b.output(resized, DataType::Float, {1, 1, 4, 4});
    graph::Graph graph = inferred(b.take());
    auto report = convertToFloat16(graph, {});
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(dtypeOf(graph, "scales"), DataType::Float);
    EXPECT_EQ(dtypeOf(graph, "x"), DataType::Float16);
    EXPECT_EQ(report->castsInserted, 0);
}

TEST(OpsetUpgrade, MovesAttributesToInputsAndSetsNumOutputs) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {2, 4});
    const auto mean = b.op("ReduceMean", "mean", {x}, {{"axes", std::vector<int64_t>{1}}});
    const auto parts = b.opMulti("Split", "split", {x}, 2, {{"axis", int64_t{1}}});
    b.output(mean);
    b.output(parts[0]);
    b.output(parts[1]);
    graph::Graph graph = inferred(b.take());
    ASSERT_TRUE(raiseDefaultOpset(graph, 21).ok());
    EXPECT_EQ(graph.opsetVersion(), 21);
    const graph::Node& meanNode = graph.node(*graph.findNode("mean"));
    EXPECT_EQ(meanNode.attribute("axes"), nullptr);
    ASSERT_EQ(meanNode.inputs.size(), 2U);
    EXPECT_EQ(graph.value(meanNode.inputs[1]).initializer->as<int64_t>()[0], 1);
    EXPECT_EQ(graph.node(*graph.findNode("split")).intAttr("num_outputs", 0), 2);
    EXPECT_TRUE(graph::verify(graph).ok());
    // Below opset 11 ONNX's version converter raises the model (checked on random inputs).
    graph::Graph old = graph::GraphBuilder(9).take();
    OpsetUpgrade upgrade;
    EXPECT_TRUE(raiseDefaultOpset(old, 13, &upgrade).ok());
    EXPECT_EQ(old.opsetVersion(), 13);
    EXPECT_TRUE(upgrade.onnxConverter);
    EXPECT_EQ(uniqueValueName(graph, "x"), "x_1");
}

} // namespace
} // namespace qs::compression
