// QDQ export on small graphs built in code: where each pair goes (one edge for a pre-hook, all
// consumers for a post-hook), integer weights with per-axis DequantizeLinear, shared unified
// initializers, int4 at opset 21, Clip for sub-8-bit grids, requantizers, names kept, checker; the
// exported graphs run by our executor reproduce a hand-written fake quantization exactly.

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/quantization/qdq_export.h"
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <vector>

namespace qs::quantization {
namespace {

using graph::DataType;
using graph::Graph;

/// Serialize and import again so shape inference fills in dtypes and shapes, as in a real model.
Graph inferred(const Graph& built) {
    auto bytes = onnx::serializeModel(built);
    EXPECT_TRUE(bytes.ok()) << bytes.error().toString();
    auto graph = onnx::importModelFromBytes(*bytes, {});
    EXPECT_TRUE(graph.ok()) << graph.error().toString();
    return std::move(graph).value();
}

/// x[1,2,3,3] -> Relu "relu" -> {Conv "conv" (W[3,2,1,1]), Sigmoid "sig"}; outputs conv, sig.
Graph makeForkModel() {
    graph::GraphBuilder b(13, 8);
    const auto x = b.input("x", {1, 2, 3, 3});
    const std::vector<float> w = {0.5F, -0.25F, 1.0F, 0.75F, -0.6F, 0.1F};
    const auto weight = b.weight("W", {3, 2, 1, 1}, w);
    const auto relu = b.op("Relu", "relu", {x});
    const auto conv = b.op("Conv", "conv", {relu, weight});
    const auto sig = b.op("Sigmoid", "sig", {relu});
    b.output(conv, DataType::Float, {1, 3, 3, 3});
    b.output(sig, DataType::Float, {1, 2, 3, 3});
    return inferred(b.take());
}

/// x[1,2,2,2] -> Sigmoid "sig" -> output: the quantizer on sig:0 sees the raw input.
Graph makeSingleOpModel() {
    graph::GraphBuilder b(13, 8);
    const auto x = b.input("x", {1, 2, 2, 2});
    b.output(b.op("Sigmoid", "sig", {x}), DataType::Float, {1, 2, 2, 2});
    return inferred(b.take());
}

QuantizerConfig configOf(int bits, bool perChannel = false) {
    QuantizerConfig config;
    config.numBits = bits;
    config.perChannel = perChannel;
    return config;
}

QuantizerParameters encoding(int bits, int quantMin, int quantMax, std::vector<float> scale,
                             std::vector<int32_t> zeroPoint,
                             std::optional<int> channelAxis = std::nullopt) {
    QuantizerParameters p;
    p.qconfig = configOf(bits, channelAxis.has_value());
    p.isSigned = quantMin < 0;
    p.quantMin = quantMin;
    p.quantMax = quantMax;
    p.channelAxis = channelAxis;
    p.scale = std::move(scale);
    p.zeroPoint = std::move(zeroPoint);
    for (size_t c = 0; c < p.scale.size(); ++c) {
        p.inputLow.push_back(static_cast<float>(quantMin - p.zeroPoint[c]) * p.scale[c]);
        p.inputHigh.push_back(static_cast<float>(quantMax - p.zeroPoint[c]) * p.scale[c]);
    }
    return p;
}

void addPoint(SingleConfigQuantizerSetup& setup, int id, const std::string& node,
              std::optional<int> port, const QuantizerParameters& p, bool isWeight = false) {
    SingleConfigQuantizationPoint point;
    point.insertionPoint.targetNodeName = node;
    point.insertionPoint.inputPortId = port;
    point.insertionPoint.isWeight = isWeight;
    point.qconfig = p.qconfig;
    setup.quantizationPoints[id] = point;
}

Graph exportOrDie(const Graph& model, const SingleConfigQuantizerSetup& setup,
                  const QuantizerParametersMap& params, QdqExportSummary* summary = nullptr) {
    auto out = insertQdqNodes(model, setup, params, {}, summary);
    EXPECT_TRUE(out.ok()) << out.error().toString();
    return out.ok() ? std::move(out).value() : model;
}

const graph::Node& nodeNamed(const Graph& graph, const std::string& name) {
    const auto id = graph.findNode(name);
    EXPECT_TRUE(id.has_value()) << name;
    return graph.node(*id);
}

const graph::Node* producerOf(const Graph& graph, graph::ValueId value) {
    const graph::NodeId id = graph.value(value).producer;
    return id.valid() ? &graph.node(id) : nullptr;
}

const std::string& inputName(const Graph& graph, const std::string& node, size_t port) {
    return graph.value(nodeNamed(graph, node).inputs[port]).name;
}

std::vector<std::string> ioNames(const Graph& graph) {
    std::vector<std::string> names;
    for (const auto id : graph.inputs()) {
        names.push_back("in:" + graph.value(id).name);
    }
    for (const auto id : graph.outputs()) {
        names.push_back("out:" + graph.value(id).name);
    }
    return names;
}

std::vector<float> randomInput(size_t count, float lo, float hi, unsigned seed = 7) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> values(count);
    for (float& v : values) {
        v = dist(rng);
    }
    return values;
}

std::vector<std::vector<float>> runGraph(const Graph& graph, const std::vector<float>& x,
                                         const runtime::Shape& shape) {
    auto executor = runtime::Executor::create(graph);
    EXPECT_TRUE(executor.ok()) << executor.error().toString();
    if (!executor.ok()) {
        return {};
    }
    const std::vector<runtime::Tensor> inputs = {runtime::Tensor::fromVector<float>(shape, x)};
    auto outputs = executor->run(inputs);
    EXPECT_TRUE(outputs.ok()) << outputs.error().toString();
    std::vector<std::vector<float>> result;
    for (const runtime::Tensor& t : *outputs) {
        const auto values = t.values<float>();
        result.emplace_back(values.begin(), values.end());
    }
    return result;
}

/// The grid's fake quantization, written out: (clamp(round(x / s) + zp, lo, hi) - zp) * s.
float fakeQuant(float x, float scale, int32_t zeroPoint, int quantMin, int quantMax) {
    const float q = std::clamp(std::nearbyint(x / scale) + static_cast<float>(zeroPoint),
                               static_cast<float>(quantMin), static_cast<float>(quantMax));
    return (q - static_cast<float>(zeroPoint)) * scale;
}

/// Our Sigmoid kernel and std::exp may differ in the last bit; a grid step is far larger.
constexpr float kTol = 1e-6F;

float sigmoid(float x) {
    return 1.0F / (1.0F + std::exp(-x));
}

TEST(QdqExport, PreHookPairSitsOnOneEdgeOnly) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    addPoint(setup, 1, "conv", 0, params[1]);
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.activationPairs, 1);
    EXPECT_EQ(summary.clippedGrids, 0);
    EXPECT_EQ(summary.opset, 13);
    // The other consumer of the same tensor keeps the float value.
    EXPECT_EQ(inputName(out, "sig", 0), "relu_output_0");
    EXPECT_EQ(inputName(out, "conv", 0), "relu_output_0_dq1");
    const graph::Node* dq = producerOf(out, nodeNamed(out, "conv").inputs[0]);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->opType, "DequantizeLinear");
    const graph::Node* q = producerOf(out, dq->inputs[0]);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->opType, "QuantizeLinear");
    EXPECT_EQ(out.value(q->inputs[0]).name, "relu_output_0");
    EXPECT_EQ(out.value(q->outputs[0]).name, "relu_output_0_q1");
    EXPECT_EQ(out.value(q->outputs[0]).dtype, DataType::Int8);
    EXPECT_EQ(out.value(q->inputs[2]).initializer->dtype(), DataType::Int8);
    EXPECT_EQ(ioNames(out), ioNames(model));
    const auto checked = onnx::checkModel(out);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();
}

TEST(QdqExport, PostHookPairIsSharedByAllConsumers) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[2] = encoding(8, 0, 255, {0.01F}, {0});
    addPoint(setup, 2, "relu", std::nullopt, params[2]);
    const Graph out = exportOrDie(model, setup, params);
    EXPECT_EQ(inputName(out, "sig", 0), "relu_output_0_dq2");
    EXPECT_EQ(inputName(out, "conv", 0), "relu_output_0_dq2");
    const graph::Node* q =
        producerOf(out, producerOf(out, nodeNamed(out, "sig").inputs[0])->inputs[0]);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(out.value(q->outputs[0]).dtype, DataType::UInt8);
    EXPECT_EQ(out.numNodes(), model.numNodes() + 2);
    const auto checked = onnx::checkModel(out);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();
}

TEST(QdqExport, WeightBecomesInt8InitializerWithPerAxisDequantize) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[5] = encoding(8, -127, 127, {0.01F, 0.0075F, 0.005F}, {0, 0, 0}, 0);
    addPoint(setup, 5, "conv", std::nullopt, params[5], true);
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.weightDequantizers, 1);
    EXPECT_EQ(summary.activationPairs, 0);
    EXPECT_FALSE(out.findValue("W").has_value()); // the float weight is gone
    const graph::Node* dq = producerOf(out, nodeNamed(out, "conv").inputs[1]);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->opType, "DequantizeLinear");
    EXPECT_EQ(dq->intAttr("axis", -1), 0);
    const graph::TensorData& codes = *out.value(dq->inputs[0]).initializer;
    EXPECT_EQ(out.value(dq->inputs[0]).name, "W_q5");
    EXPECT_EQ(codes.dtype(), DataType::Int8);
    // W rows: [0.5, -0.25] / 0.01, [1.0, 0.75] / 0.0075 (saturates at 127), [-0.6, 0.1] / 0.005.
    const std::vector<int8_t> expected = {50, -25, 127, 100, -120, 20};
    const auto got = codes.as<int8_t>();
    EXPECT_EQ(std::vector<int8_t>(got.begin(), got.end()), expected);
    EXPECT_EQ(out.value(dq->inputs[1]).initializer->dims(), std::vector<int64_t>{3});
    const auto checked = onnx::checkModel(out);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();
}

TEST(QdqExport, UnifiedGroupSharesScaleAndZeroPoint) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    params[3] = params[1];
    addPoint(setup, 1, "conv", 0, params[1]);
    addPoint(setup, 3, "sig", 0, params[3]);
    setup.unifiedScaleGroups[0] = {1, 3};
    const Graph out = exportOrDie(model, setup, params);
    const graph::Node* dqConv = producerOf(out, nodeNamed(out, "conv").inputs[0]);
    const graph::Node* dqSig = producerOf(out, nodeNamed(out, "sig").inputs[0]);
    ASSERT_NE(dqConv, nullptr);
    ASSERT_NE(dqSig, nullptr);
    EXPECT_NE(dqConv, dqSig);
    EXPECT_EQ(dqConv->inputs[1], dqSig->inputs[1]);
    EXPECT_EQ(dqConv->inputs[2], dqSig->inputs[2]);
    EXPECT_EQ(out.value(dqConv->inputs[1]).name, "unified_scale_group_0_8bit_scale");

    // A member on another grid (same range, 4 bits) gets initializers of its own.
    params[3] = encoding(4, -8, 7, {0.34F}, {0});
    const Graph mixed = exportOrDie(model, setup, params);
    EXPECT_NE(producerOf(mixed, nodeNamed(mixed, "conv").inputs[0])->inputs[1],
              producerOf(mixed, nodeNamed(mixed, "sig").inputs[0])->inputs[1]);

    params[3] = params[1];
    params[3].scale = {0.03F};
    const auto refused = insertQdqNodes(model, setup, params);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("unified-scale group 0"), std::string::npos)
        << refused.error().toString();
}

TEST(QdqExport, FourBitIsInt4AtOpset21AndComputesTheGrid) {
    const Graph model = makeSingleOpModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(4, -8, 7, {0.25F}, {0});
    addPoint(setup, 1, "sig", 0, params[1]);
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.opset, 21);
    EXPECT_EQ(summary.irVersion, 10);
    EXPECT_EQ(summary.clippedGrids, 0);
    const graph::Node* dq = producerOf(out, nodeNamed(out, "sig").inputs[0]);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(out.value(dq->inputs[0]).dtype, DataType::Int4);
    EXPECT_EQ(out.value(dq->inputs[2]).initializer->dtype(), DataType::Int4);
    EXPECT_FALSE(onnx::checkerCanJudge(out));

    const std::vector<float> x = randomInput(8, -3.0F, 3.0F);
    const auto got = runGraph(out, x, {1, 2, 2, 2});
    ASSERT_EQ(got.size(), 1U);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(got[0][i], sigmoid(fakeQuant(x[i], 0.25F, 0, -8, 7)), kTol) << i;
    }
}

TEST(QdqExport, FourBitActivationsInInt8WhenAsked) {
    const Graph model = makeSingleOpModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(4, -8, 7, {0.25F}, {0});
    addPoint(setup, 1, "sig", 0, params[1]);
    QdqExportSummary summary;
    auto out = insertQdqNodes(model, setup, params, {.int4Activations = false}, &summary);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    EXPECT_EQ(summary.opset, 13);
    EXPECT_EQ(summary.clippedGrids, 1);
    const graph::Node* dq = producerOf(*out, nodeNamed(*out, "sig").inputs[0]);
    EXPECT_EQ(out->value(dq->inputs[0]).dtype, DataType::Int8);
    EXPECT_TRUE(onnx::checkModel(*out).ok());
    const std::vector<float> x = randomInput(8, -3.0F, 3.0F);
    const auto got = runGraph(*out, x, {1, 2, 2, 2});
    ASSERT_EQ(got.size(), 1U);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(got[0][i], sigmoid(fakeQuant(x[i], 0.25F, 0, -8, 7)), kTol) << i;
    }
}

TEST(QdqExport, SixteenBitIsInt16AtOpset21) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(16, 0, 65535, {1e-4F}, {0});
    params[5] = encoding(16, -32768, 32767, {1e-4F, 1e-4F, 1e-4F}, {0, 0, 0}, 0);
    addPoint(setup, 1, "sig", 0, params[1]);
    addPoint(setup, 5, "conv", std::nullopt, params[5], true);
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.opset, 21);
    EXPECT_EQ(summary.clippedGrids, 0);
    const graph::Node* dq = producerOf(out, nodeNamed(out, "sig").inputs[0]);
    EXPECT_EQ(out.value(dq->inputs[0]).dtype, DataType::UInt16);
    const graph::Node* weightDq = producerOf(out, nodeNamed(out, "conv").inputs[1]);
    const graph::TensorData& codes = *out.value(weightDq->inputs[0]).initializer;
    EXPECT_EQ(codes.dtype(), DataType::Int16);
    const auto got = codes.as<int16_t>();
    // W / 1e-4: 5000, -2500, 10000, 7500, -6000, 1000.
    EXPECT_EQ(std::vector<int16_t>(got.begin(), got.end()),
              (std::vector<int16_t>{5000, -2500, 10000, 7500, -6000, 1000}));

    const std::vector<float> x = randomInput(18, 0.0F, 3.0F, 9);
    const auto outputs = runGraph(out, x, {1, 2, 3, 3});
    ASSERT_EQ(outputs.size(), 2U);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(outputs[1][i], sigmoid(fakeQuant(x[i], 1e-4F, 0, 0, 65535)), kTol) << i;
    }
}

TEST(QdqExport, SixBitClipsThenQuantizesOnTheSixBitGrid) {
    const Graph model = makeSingleOpModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(6, 0, 63, {0.05F}, {20});
    addPoint(setup, 1, "sig", 0, params[1]);
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.clippedGrids, 1);
    EXPECT_EQ(summary.opset, 13);
    const graph::Node* dq = producerOf(out, nodeNamed(out, "sig").inputs[0]);
    const graph::Node* q = producerOf(out, dq->inputs[0]);
    const graph::Node* clip = producerOf(out, q->inputs[0]);
    ASSERT_NE(clip, nullptr);
    EXPECT_EQ(clip->opType, "Clip");
    EXPECT_EQ(out.value(q->outputs[0]).dtype, DataType::UInt8);
    EXPECT_FLOAT_EQ(out.value(clip->inputs[1]).initializer->as<float>()[0], -20 * 0.05F);
    EXPECT_FLOAT_EQ(out.value(clip->inputs[2]).initializer->as<float>()[0], 43 * 0.05F);
    const auto checked = onnx::checkModel(out);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();

    // Wide enough that both ends of the 6-bit range saturate (an 8-bit pair alone would not).
    const std::vector<float> x = randomInput(8, -4.0F, 4.0F, 11);
    const auto got = runGraph(out, x, {1, 2, 2, 2});
    ASSERT_EQ(got.size(), 1U);
    int saturated = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(got[0][i], sigmoid(fakeQuant(x[i], 0.05F, 20, 0, 63)), kTol) << i;
        saturated += (x[i] < -1.0F || x[i] > 2.15F) ? 1 : 0;
    }
    EXPECT_GT(saturated, 0);
}

TEST(QdqExport, PerChannelThreeBitUsesBroadcastMaxMin) {
    const Graph model = makeSingleOpModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(3, -4, 3, {0.5F, 0.25F}, {0, 0}, 1);
    addPoint(setup, 1, "sig", 0, params[1]);
    const Graph out = exportOrDie(model, setup, params);
    const graph::Node* dq = producerOf(out, nodeNamed(out, "sig").inputs[0]);
    EXPECT_EQ(dq->intAttr("axis", -1), 1);
    const graph::Node* q = producerOf(out, dq->inputs[0]);
    const graph::Node* min = producerOf(out, q->inputs[0]);
    ASSERT_NE(min, nullptr);
    EXPECT_EQ(min->opType, "Min");
    EXPECT_EQ(out.value(min->inputs[1]).initializer->dims(), (std::vector<int64_t>{2, 1, 1}));
    EXPECT_EQ(producerOf(out, min->inputs[0])->opType, "Max");
    const auto checked = onnx::checkModel(out);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();

    const std::vector<float> x = randomInput(8, -3.0F, 3.0F, 5);
    const auto got = runGraph(out, x, {1, 2, 2, 2});
    ASSERT_EQ(got.size(), 1U);
    for (size_t i = 0; i < x.size(); ++i) {
        const float scale = i < 4 ? 0.5F : 0.25F; // channel = i / 4 in [1, 2, 2, 2]
        EXPECT_NEAR(got[0][i], sigmoid(fakeQuant(x[i], scale, 0, -4, 3)), kTol) << i;
    }
}

TEST(QdqExport, RequantizerWrapsItsParentOnItsEdge) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    params[4] = encoding(4, -8, 7, {0.3F}, {0});
    addPoint(setup, 1, "relu", std::nullopt, params[1]);
    addPoint(setup, 4, "conv", 0, params[4]);
    setup.requantizationParents[4] = 1;
    const Graph out = exportOrDie(model, setup, params);
    EXPECT_EQ(inputName(out, "sig", 0), "relu_output_0_dq1");
    EXPECT_EQ(inputName(out, "conv", 0), "relu_output_0_dq1_dq4");
    const graph::Node* q4 =
        producerOf(out, producerOf(out, nodeNamed(out, "conv").inputs[0])->inputs[0]);
    EXPECT_EQ(out.value(q4->inputs[0]).name, "relu_output_0_dq1");

    const std::vector<float> x = randomInput(18, -1.0F, 3.0F, 3);
    const auto got = runGraph(out, x, {1, 2, 3, 3});
    ASSERT_EQ(got.size(), 2U);
    for (size_t i = 0; i < x.size(); ++i) {
        const float parent = fakeQuant(std::max(x[i], 0.0F), 0.02F, 0, -128, 127);
        EXPECT_NEAR(got[1][i], sigmoid(parent), kTol) << i;
    }
}

TEST(QdqExport, QuantizedGraphOutputKeepsItsName) {
    const Graph model = makeSingleOpModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[2] = encoding(8, 0, 255, {1.0F / 255.0F}, {0});
    addPoint(setup, 2, "sig", std::nullopt, params[2]);
    const Graph out = exportOrDie(model, setup, params);
    EXPECT_EQ(ioNames(out), ioNames(model));
    const graph::Node* dq = producerOf(out, out.outputs()[0]);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->opType, "DequantizeLinear");
    EXPECT_TRUE(out.findValue("sig_output_0_float").has_value());
    const std::vector<float> x = randomInput(8, -3.0F, 3.0F);
    const auto got = runGraph(out, x, {1, 2, 2, 2});
    ASSERT_EQ(got.size(), 1U);
    for (size_t i = 0; i < x.size(); ++i) {
        EXPECT_NEAR(got[0][i], fakeQuant(sigmoid(x[i]), 1.0F / 255.0F, 0, 0, 255), kTol) << i;
    }
}

TEST(QdqExport, MergedAwayQuantizersAreNotExported) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    addPoint(setup, 1, "conv", 0, params[1]);
    addPoint(setup, 3, "sig", 0, params[1]);
    setup.mergedInto[3] = 1;
    QdqExportSummary summary;
    const Graph out = exportOrDie(model, setup, params, &summary);
    EXPECT_EQ(summary.activationPairs, 1);
    EXPECT_EQ(inputName(out, "sig", 0), "relu_output_0");
}

TEST(QdqExport, BadParametersAreRefusedNamingTheQuantizer) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    addPoint(setup, 1, "conv", 0, params[1]);
    addPoint(setup, 7, "sig", 0, params[1]);
    auto missing = insertQdqNodes(model, setup, params);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().toString().find("quantizer 7"), std::string::npos);

    params[7] = encoding(8, 0, 255, {0.02F}, {300});
    auto offGrid = insertQdqNodes(model, setup, params);
    ASSERT_FALSE(offGrid.ok());
    EXPECT_NE(offGrid.error().toString().find("zero point 300"), std::string::npos);

    params[7] = encoding(8, 0, 255, {0.0F}, {0});
    EXPECT_FALSE(insertQdqNodes(model, setup, params).ok());

    params[7] = encoding(8, 0, 255, {0.02F}, {0});
    setup.quantizationPoints[7].insertionPoint.targetNodeName = "nowhere";
    auto noNode = insertQdqNodes(model, setup, params);
    ASSERT_FALSE(noNode.ok());
    EXPECT_NE(noNode.error().toString().find("no node 'nowhere'"), std::string::npos);
}

TEST(QdqExport, WritesACheckedFile) {
    const Graph model = makeForkModel();
    SingleConfigQuantizerSetup setup;
    QuantizerParametersMap params;
    params[1] = encoding(8, -128, 127, {0.02F}, {0});
    params[5] = encoding(8, -127, 127, {0.01F, 0.01F, 0.01F}, {0, 0, 0}, 0);
    addPoint(setup, 1, "conv", 0, params[1]);
    addPoint(setup, 5, "conv", std::nullopt, params[5], true);
    const auto path = std::filesystem::temp_directory_path() / "qs_qdq_export_test.onnx";
    auto summary = exportQdqModel(model, setup, params, path);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    EXPECT_TRUE(summary->checked);
    auto back = onnx::importModel(path);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(ioNames(*back), ioNames(model));
    std::filesystem::remove(path);
}

} // namespace
} // namespace qs::quantization
