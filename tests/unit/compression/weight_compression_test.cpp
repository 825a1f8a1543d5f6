// Model-level weight compression: which weights are ratio-defining, the group-size fallbacks,
// ratio mixing by sensitivity, NNCF's table, and the exported DequantizeLinear form.

#include "core/compression/integer_quantizer.h"
#include "core/compression/weight_compression.h"
#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "tests/unit/compression/tiny_llm.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace qs::compression {
namespace {

const WeightDecision& decisionFor(const CompressionPlan& plan, const std::string& weight) {
    for (const WeightDecision& decision : plan.weights) {
        if (decision.valueName == weight) {
            return decision;
        }
    }
    ADD_FAILURE() << "no decision for " << weight;
    return plan.weights.front();
}

CompressionPlan planOrDie(const graph::Graph& graph, const WeightCompressionOptions& options) {
    NullProgress progress;
    auto plan = planWeightCompression(graph, options, progress);
    EXPECT_TRUE(plan.ok()) << plan.error().toString();
    return std::move(plan).value();
}

TEST(WeightCompressionPlan, Int4KeepsLastMatMulAndEmbeddingInBackup) {
    const graph::Graph graph = testing::makeTinyLlm();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    const CompressionPlan plan = planOrDie(graph, options);
    ASSERT_EQ(plan.weights.size(), 4U);
    EXPECT_EQ(decisionFor(plan, "mlp.up.weight").mode, CompressionMode::Int4Asym);
    EXPECT_EQ(decisionFor(plan, "mlp.up.weight").groupSize, 128);
    EXPECT_EQ(decisionFor(plan, "mlp.down.weight").mode, CompressionMode::Int4Asym);
    EXPECT_EQ(decisionFor(plan, "lm_head.weight").mode, CompressionMode::Int8Asym);
    EXPECT_FALSE(decisionFor(plan, "lm_head.weight").ratioDefining);
    EXPECT_EQ(decisionFor(plan, "embed.weight").mode, CompressionMode::Int8Asym);
    EXPECT_EQ(decisionFor(plan, "embed.weight").channelAxis, 0);
    EXPECT_EQ(decisionFor(plan, "mlp.up.weight").channelAxis, 1);

    const std::string table = formatBitwidthTable(plan);
    EXPECT_NE(table.find("| Weight compression mode "), std::string::npos) << table;
    EXPECT_NE(table.find("% ratio-defining parameters (layers)"), std::string::npos);
    // 8192 + 8192 of 81920 parameters are int8: 20%; 65536 int4: 80%, all ratio-defining.
    EXPECT_NE(table.find("| int8_asym, per-channel    | 20% (2 / 4)"), std::string::npos) << table;
    EXPECT_NE(table.find("| int4_asym, group size 128 | 80% (2 / 4)"), std::string::npos) << table;
    EXPECT_NE(table.find("100% (2 / 2)"), std::string::npos) << table;
    EXPECT_LT(table.find("int8_asym"), table.find("int4_asym"));
}

TEST(WeightCompressionPlan, AllLayersMakesEverythingRatioDefining) {
    const graph::Graph graph = testing::makeTinyLlm();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Sym;
    options.allLayers = true;
    const CompressionPlan plan = planOrDie(graph, options);
    for (const WeightDecision& decision : plan.weights) {
        EXPECT_TRUE(decision.ratioDefining) << decision.valueName;
        EXPECT_EQ(decision.mode, CompressionMode::Int4Sym) << decision.valueName;
    }
}

TEST(WeightCompressionPlan, Int8ModesArePerChannelEverywhere) {
    const graph::Graph graph = testing::makeTinyLlm();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int8Sym;
    const CompressionPlan plan = planOrDie(graph, options);
    for (const WeightDecision& decision : plan.weights) {
        EXPECT_TRUE(decision.ratioDefining);
        EXPECT_EQ(decision.mode, CompressionMode::Int8Sym);
        EXPECT_EQ(decision.groupSize, -1);
    }
}

// mlp.up has a heavy-tailed column, so its INT8 error is the largest and its sensitivity the
// lowest: it goes 4-bit first. Ratio 0.5 of 65536 ratio-defining parameters stops there.
TEST(WeightCompressionPlan, RatioPicksLeastSensitiveFirst) {
    graph::Graph graph = testing::makeTinyLlm();
    const graph::ValueId up = *graph.findValue("mlp.up.weight");
    std::vector<float> values(graph.value(up).initializer->as<float>().begin(),
                              graph.value(up).initializer->as<float>().end());
    values[5] = 40.0F; // column 5 spans a wide range: a large per-channel INT8 error
    graph.value(up).initializer = graph::TensorData::fromValues<float>(
        graph::DataType::Float, {128, 256}, std::span<const float>(values));
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    options.ratio = 0.6;
    const CompressionPlan plan = planOrDie(graph, options);
    const WeightDecision& upDecision = decisionFor(plan, "mlp.up.weight");
    const WeightDecision& downDecision = decisionFor(plan, "mlp.down.weight");
    EXPECT_LT(upDecision.sensitivity, downDecision.sensitivity);
    EXPECT_EQ(upDecision.mode, CompressionMode::Int4Asym);
    EXPECT_EQ(downDecision.mode, CompressionMode::Int8Asym); // (32768 + 32768) / 65536 >= 0.6
    EXPECT_TRUE(downDecision.ratioDefining);
    const nlohmann::json json = planToJson(plan);
    EXPECT_EQ(json["totals"]["ratio_defining_parameters"], 65536);
    EXPECT_EQ(json["weights"].size(), 4U);
}

graph::Graph matmulModel(int64_t k, int64_t n) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {1, k});
    std::vector<float> w(static_cast<size_t>(k * n));
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(i % 17) - 8.0F;
    }
    const auto first = b.op("MatMul", "proj", {x, b.weight("proj.weight", {k, n}, w)});
    std::vector<float> head(static_cast<size_t>(n * 4), 0.5F);
    b.output(b.op("MatMul", "head", {first, b.weight("head.weight", {n, 4}, head)}));
    return b.take();
}

TEST(WeightCompressionPlan, GroupSizeFallbacks) {
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    NullProgress progress;
    // K = 96 with group 128: ERROR names the layer.
    const graph::Graph k96 = matmulModel(96, 8);
    auto failed = planWeightCompression(k96, options, progress);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().code(), Errc::Usage);
    EXPECT_NE(failed.error().message().find("node 'proj'"), std::string::npos);
    EXPECT_NE(
        failed.error().message().find("Channel size 96 should be divisible by size of group 128"),
        std::string::npos)
        << failed.error().message();

    options.groupSizeFallback = GroupSizeFallback::Ignore;
    CompressionPlan ignored = planOrDie(k96, options);
    EXPECT_EQ(decisionFor(ignored, "proj.weight").mode, CompressionMode::None);
    EXPECT_FALSE(decisionFor(ignored, "proj.weight").ratioDefining);

    // ADJUST: 96 & -96 = 32 >= 32 is used; 80 & -80 = 16 < 32 falls back to the backup mode.
    options.groupSizeFallback = GroupSizeFallback::Adjust;
    CompressionPlan adjusted = planOrDie(k96, options);
    EXPECT_EQ(decisionFor(adjusted, "proj.weight").mode, CompressionMode::Int4Asym);
    EXPECT_EQ(decisionFor(adjusted, "proj.weight").groupSize, 32);
    CompressionPlan backup = planOrDie(matmulModel(80, 8), options);
    EXPECT_EQ(decisionFor(backup, "proj.weight").mode, CompressionMode::Int8Asym);
    EXPECT_EQ(decisionFor(backup, "proj.weight").groupSize, -1);
    EXPECT_FALSE(decisionFor(backup, "proj.weight").ratioDefining);
}

TEST(WeightCompressionPlan, RejectsBadOptions) {
    const graph::Graph graph = matmulModel(32, 8);
    NullProgress progress;
    WeightCompressionOptions options;
    options.ratio = 1.5;
    EXPECT_FALSE(planWeightCompression(graph, options, progress).ok());
    options.ratio = 1;
    options.mode = CompressionMode::None;
    EXPECT_FALSE(planWeightCompression(graph, options, progress).ok());
    options.mode = CompressionMode::Int4Asym;
    options.backupMode = CompressionMode::Int4Sym;
    EXPECT_FALSE(planWeightCompression(graph, options, progress).ok());
    EXPECT_FALSE(parseMode("int3").ok());
    EXPECT_EQ(*parseMode("INT4_ASYM"), CompressionMode::Int4Asym);
}

const graph::Node* producerOf(const graph::Graph& graph, const std::string& consumer, int port) {
    const graph::NodeId id = *graph.findNode(consumer);
    const graph::ValueId input = graph.node(id).inputs[static_cast<size_t>(port)];
    const graph::NodeId producer = graph.value(input).producer;
    return producer.valid() ? &graph.node(producer) : nullptr;
}

TEST(WeightCompressionExport, Int4BlockedDequantizeRoundTrips) {
    graph::Graph graph = testing::makeTinyLlm();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    const CompressionPlan plan = planOrDie(graph, options);
    graph::Graph simulated = graph;
    ASSERT_TRUE(applyDequantizedWeights(simulated, plan).ok());
    NullProgress progress;
    auto summary = applyWeightCompression(graph, plan, progress);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    EXPECT_EQ(summary->compressedWeights, 4);
    EXPECT_EQ(summary->opset, 21);
    EXPECT_EQ(summary->irVersion, 10);
    EXPECT_EQ(summary->floatBytesBefore, 81920 * 4);
    // int4: 65536 / 2 codes + (1 + 2) * 256 scales... measured against the float bytes.
    EXPECT_LT(summary->bytesAfter, summary->floatBytesBefore / 4);
    ASSERT_TRUE(graph::verify(graph).ok());

    auto bytes = onnx::serializeModel(graph);
    ASSERT_TRUE(bytes.ok());
    auto reimported = onnx::importModelFromBytes(*bytes, {});
    ASSERT_TRUE(reimported.ok()) << reimported.error().toString();
    const graph::Graph& model = *reimported;
    EXPECT_EQ(model.opsetVersion(), 21);

    const graph::Node* dq = producerOf(model, "mlp.up", 1);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->opType, "DequantizeLinear");
    EXPECT_EQ(dq->intAttr("axis", -1), 0);
    EXPECT_EQ(dq->intAttr("block_size", 0), 128);
    const auto& codes = *model.value(dq->inputs[0]).initializer;
    EXPECT_EQ(codes.dtype(), graph::DataType::UInt4);
    EXPECT_EQ(codes.dims(), (std::vector<int64_t>{128, 256}));
    EXPECT_EQ(codes.bytes().size(), 128U * 256 / 2);
    const auto& scales = *model.value(dq->inputs[1]).initializer;
    EXPECT_EQ(scales.dims(), (std::vector<int64_t>{1, 256}));
    const auto& zeroPoints = *model.value(dq->inputs[2]).initializer;
    EXPECT_EQ(zeroPoints.dtype(), graph::DataType::UInt4);

    // Dequantizing the stored codes reproduces the simulation exactly.
    const std::vector<uint8_t> unpacked = unpackInt4(codes.bytes(), codes.numElements(), false);
    const std::vector<uint8_t> zps = unpackInt4(zeroPoints.bytes(), 256, false);
    const auto expected = simulated.value(*simulated.findValue("mlp.up.weight")).initializer;
    const auto scaleValues = scales.as<float>();
    const auto expectedValues = expected->as<float>();
    for (size_t i = 0; i < unpacked.size(); ++i) {
        const size_t column = i % 256;
        const float value = (static_cast<float>(unpacked[i]) - static_cast<float>(zps[column])) *
                            scaleValues[column];
        ASSERT_EQ(value, expectedValues[i]) << "element " << i;
    }

    // The per-channel int8 embedding: axis 0, uint8, no block_size.
    const graph::Node* embedDq = producerOf(model, "embed", 0);
    ASSERT_NE(embedDq, nullptr);
    EXPECT_EQ(embedDq->intAttr("axis", -1), 0);
    EXPECT_EQ(embedDq->attribute("block_size"), nullptr);
    EXPECT_EQ(model.value(embedDq->inputs[0]).initializer->dtype(), graph::DataType::UInt8);
    // ReduceMean's axes attribute moved to an input on the way to opset 18+.
    const graph::Node& mean = model.node(*model.findNode("norm.mean"));
    EXPECT_EQ(mean.attribute("axes"), nullptr);
    ASSERT_EQ(mean.inputs.size(), 2U);
    EXPECT_EQ(model.value(mean.inputs[1]).initializer->as<int64_t>()[0], -1);
    EXPECT_FALSE(model.findValue("mlp.up.weight").has_value()); // the float weight is gone
}

TEST(WeightCompressionExport, Int8PassesTheChecker) {
    graph::Graph graph = testing::makeTinyLlm();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int8Sym;
    const CompressionPlan plan = planOrDie(graph, options);
    NullProgress progress;
    auto summary = applyWeightCompression(graph, plan, progress);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    EXPECT_EQ(summary->opset, 13);
    const auto checked = onnx::checkModel(graph);
    EXPECT_TRUE(checked.ok()) << checked.error().toString();
    const graph::Node* dq = producerOf(graph, "mlp.down", 1);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->inputs.size(), 2U); // symmetric: no zero point
    EXPECT_EQ(dq->intAttr("axis", -1), 1);
    EXPECT_EQ(graph.value(dq->inputs[0]).initializer->dtype(), graph::DataType::Int8);
}

// Gemm with transB holds [N, K]: groups run along the contiguous K, so DequantizeLinear blocks
// axis 1 and the scale is [N, K / g]. A 3-D MatMul weight has two reduction axes and cannot be
// grouped: it takes the backup mode.
TEST(WeightCompressionExport, GemmTransposedBlocksAlongAxisOne) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {2, 64});
    std::vector<float> w(size_t{8} * 64);
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25F;
    }
    const auto y =
        b.op("Gemm", "fc", {x, b.weight("fc.weight", {8, 64}, w)}, {{"transB", int64_t{1}}});
    std::vector<float> cube(size_t{2} * 8 * 4, 0.5F);
    const auto z = b.op("MatMul", "batched",
                        {b.op("Reshape", "r", {y, b.int64s("shape", {2, 1, 8})}),
                         b.weight("cube", {2, 8, 4}, cube)});
    std::vector<float> head(size_t{4} * 4, 1.0F);
    b.output(b.op("MatMul", "head", {z, b.weight("head.weight", {4, 4}, head)}));
    graph::Graph graph = b.take();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Sym;
    options.groupSize = 32;
    const CompressionPlan plan = planOrDie(graph, options);
    EXPECT_EQ(decisionFor(plan, "fc.weight").mode, CompressionMode::Int4Sym);
    EXPECT_EQ(decisionFor(plan, "fc.weight").channelAxis, 0);
    EXPECT_EQ(decisionFor(plan, "cube").mode, CompressionMode::Int8Asym);
    EXPECT_FALSE(decisionFor(plan, "cube").ratioDefining);
    EXPECT_NE(decisionFor(plan, "cube").note.find("reduction axes"), std::string::npos);
    NullProgress progress;
    ASSERT_TRUE(applyWeightCompression(graph, plan, progress).ok());
    const graph::Node* dq = producerOf(graph, "fc", 1);
    ASSERT_NE(dq, nullptr);
    EXPECT_EQ(dq->intAttr("axis", -1), 1);
    EXPECT_EQ(dq->intAttr("block_size", 0), 32);
    EXPECT_EQ(dq->inputs.size(), 2U);
    EXPECT_EQ(graph.value(dq->inputs[0]).initializer->dtype(), graph::DataType::Int4);
    EXPECT_EQ(graph.value(dq->inputs[1]).initializer->dims(), (std::vector<int64_t>{8, 2}));
    const graph::Node* cubeDq = producerOf(graph, "batched", 1);
    ASSERT_NE(cubeDq, nullptr);
    EXPECT_EQ(cubeDq->intAttr("axis", -1), 2);
    EXPECT_EQ(graph.value(cubeDq->inputs[1]).initializer->dims(), (std::vector<int64_t>{4}));
}

TEST(WeightCompressionExport, RefusesOpsThatChangeMeaning) {
    graph::GraphBuilder b(12);
    const auto x = b.input("x", {2, 3, 4});
    std::vector<float> w(16, 1.0F);
    const auto y = b.op("MatMul", "mm", {x, b.weight("w", {4, 4}, w)});
    b.output(b.op("Softmax", "sm", {y}, {{"axis", int64_t{1}}}));
    graph::Graph graph = b.take();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int8Asym;
    const CompressionPlan plan = planOrDie(graph, options);
    NullProgress progress;
    auto summary = applyWeightCompression(graph, plan, progress);
    ASSERT_FALSE(summary.ok());
    EXPECT_NE(summary.error().message().find("node 'sm'"), std::string::npos)
        << summary.error().message();
    EXPECT_EQ(graph.opsetVersion(), 12); // unchanged
}

// An opset-9 model (Upsample with a scales input, Slice with attribute starts/ends/axes) is raised
// to 13 by ONNX's version converter, checked on random inputs, then compressed; the result
// computes what the original does with quantize-dequantized weights.
TEST(WeightCompressionExport, Opset9ModelIsUpgradedByOnnxsConverter) {
    graph::GraphBuilder b(9, 4);
    const auto x = b.input("x", {1, 4, 4, 4});
    std::vector<float> w(16);
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25F;
    }
    const auto conv = b.op("Conv", "conv", {x, b.weight("conv.weight", {4, 4, 1, 1}, w)});
    const std::vector<float> scaleValues = {1.0F, 1.0F, 2.0F, 2.0F};
    const auto up = b.op("Upsample", "up", {conv, b.weight("scales", {4}, scaleValues)},
                         {{"mode", std::string("nearest"), {}}});
    const auto sliced = b.op("Slice", "slice", {up},
                             {{"starts", std::vector<int64_t>{1}, {}},
                              {"ends", std::vector<int64_t>{7}, {}},
                              {"axes", std::vector<int64_t>{3}, {}}});
    b.output(b.op("Conv", "head", {sliced, b.weight("head.weight", {4, 4, 1, 1}, w)}));
    const graph::Graph original = b.take();
    graph::Graph graph = original;
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int8Sym;
    const CompressionPlan plan = planOrDie(graph, options);
    NullProgress progress;
    auto summary = applyWeightCompression(graph, plan, progress);
    ASSERT_TRUE(summary.ok()) << summary.error().toString();
    EXPECT_EQ(summary->opset, 13);
    EXPECT_TRUE(summary->upgrade.onnxConverter);
    EXPECT_EQ(summary->upgrade.fromOpset, 9);
    EXPECT_LE(summary->upgrade.maxRelativeDifference, kUpgradeTolerance);
    EXPECT_NE(summary->upgrade.describe().find("raised to 13"), std::string::npos);
    // Upsample became Resize on the way; the compressed model equals the simulation.
    bool hasResize = false;
    for (const graph::NodeId n : graph.nodeIds()) {
        hasResize = hasResize || graph.node(n).opType == "Resize";
    }
    EXPECT_TRUE(hasResize);
    graph::Graph dequantized = original;
    ASSERT_TRUE(applyDequantizedWeights(dequantized, plan).ok());
    auto diff = compareOnRandomInputs(dequantized, graph);
    ASSERT_TRUE(diff.ok()) << diff.error().toString();
    EXPECT_LE(*diff, 1e-5);
}

} // namespace
} // namespace qs::compression
