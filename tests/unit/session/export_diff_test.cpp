// A float model against its compressed export, on a small conv net built in code: the QDQ
// export's quantizers come back at the setup's own insertion points with its bit widths (a 4-bit
// weight included) and unified groups; a pruned export names exactly the channels its masks
// dropped; an FP16 export counts its float16 initializers; with data, an export equal to the
// model is exact everywhere, an FP16 one stays far above the divergence threshold, and the pruned
// one's first divergent tensor is reported; a model that is not an export is an error.

#include "core/compression/fp16_conversion.h"
#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/pruning/prune_graph.h"
#include "core/pruning/pruning_section.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/qdq_export.h"
#include "core/quantization/quantization_state.h"
#include "core/report/export_diff.h"
#include "core/session/review_source.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

namespace qs::report {
namespace {

using graph::DataType;

std::vector<float> ramp(size_t n, float scale, int period) {
    std::vector<float> values(n);
    for (size_t i = 0; i < n; ++i) {
        values[i] = scale * (static_cast<float>(static_cast<int>(i) % period) - 3.0F) +
                    0.001F * static_cast<float>(i);
    }
    return values;
}

/// x[1,3,8,8] -> Conv c1 (8 channels) -> Relu -> Conv c2 (8) -> Relu [-> Add(r1, r2)] ->
/// GlobalAveragePool -> Flatten -> Gemm fc -> y[1,10]. Every weight row differs, so a pruned
/// row is found again. Without the residual Add, c1 and c2 each enter a pruning section.
graph::Graph convNet(bool residual) {
    graph::GraphBuilder b(13, 8);
    const auto x = b.input("x", {1, 3, 8, 8});
    const auto w1 = b.weight("W1", {8, 3, 3, 3}, ramp(216, 0.05F, 7));
    const auto w2 = b.weight("W2", {8, 8, 1, 1}, ramp(64, 0.1F, 5));
    const auto wf = b.weight("Wf", {10, 8}, ramp(80, 0.2F, 9));
    const auto c1 = b.op("Conv", "c1", {x, w1}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    const auto r1 = b.op("Relu", "r1", {c1});
    const auto c2 = b.op("Conv", "c2", {r1, w2});
    const auto r2 = b.op("Relu", "r2", {c2});
    const auto pool =
        b.op("GlobalAveragePool", "pool", {residual ? b.op("Add", "add", {r1, r2}) : r2});
    const auto flat = b.op("Flatten", "flat", {pool});
    b.output(b.op("Gemm", "fc", {flat, wf}, {{"transB", int64_t{1}}}), DataType::Float, {1, 10});
    auto bytes = onnx::serializeModel(b.take());
    EXPECT_TRUE(bytes.ok());
    auto graph = onnx::importModelFromBytes(*bytes, {});
    EXPECT_TRUE(graph.ok()) << graph.error().toString();
    return std::move(graph).value();
}

/// A round trip through ONNX bytes, as the CLI reads an export from disk.
graph::Graph reimported(const graph::Graph& g) {
    auto bytes = onnx::serializeModel(g);
    EXPECT_TRUE(bytes.ok()) << bytes.error().toString();
    auto graph = onnx::importModelFromBytes(*bytes, {});
    EXPECT_TRUE(graph.ok()) << graph.error().toString();
    return std::move(graph).value();
}

runtime::DatasetRequest randomData(int64_t samples) {
    runtime::DatasetRequest request;
    request.randomSamples = samples;
    return request;
}

class ExportDiffTest : public ::testing::Test {
protected:
    graph::Graph m_model = convNet(true);
    NullProgress m_progress;

    /// The setup for npu with c2's weight at 4 bits, calibrated, and its QDQ export.
    std::pair<quantization::SingleConfigQuantizerSetup, graph::Graph> qdqExport() {
        auto state = quantization::computeQuantization(m_model, {.hw = "npu"});
        EXPECT_TRUE(state.ok()) << state.error().toString();
        for (const auto& [id, point] : state->proposal.setup.quantizationPoints) {
            if (point.insertionPoint.isWeight && point.insertionPoint.targetNodeName == "c2") {
                EXPECT_TRUE(quantization::chooseConfigs(
                                *state, quantization::configsWithBitwidth(*state, {id}, 4))
                                .ok());
            }
        }
        auto calibrated = quantization::runCalibration(m_model, state->setup,
                                                       {.dataset = randomData(8)}, m_progress);
        EXPECT_TRUE(calibrated.ok()) << calibrated.error().toString();
        auto exported =
            quantization::insertQdqNodes(m_model, calibrated->setup, calibrated->parameters);
        EXPECT_TRUE(exported.ok()) << exported.error().toString();
        return {calibrated->setup, reimported(*exported)};
    }
};

std::set<std::string> pointsOf(const quantization::SingleConfigQuantizerSetup& setup,
                               bool withBits) {
    std::set<std::string> points;
    for (const auto& [id, point] : setup.quantizationPoints) {
        if (!setup.mergedInto.contains(id)) {
            points.insert(point.insertionPoint.toString() +
                          (withBits ? " " + std::to_string(point.qconfig.numBits) : ""));
        }
    }
    return points;
}

TEST_F(ExportDiffTest, QdqExportGivesBackTheSetupsPointsAndBitWidths) {
    const auto [setup, exported] = qdqExport();
    auto structure = recoverExportStructure(m_model, exported);
    ASSERT_TRUE(structure.ok()) << structure.error().toString();
    EXPECT_EQ(pointsOf(structure->setup, true), pointsOf(setup, true));
    EXPECT_TRUE(pointsOf(structure->setup, true).contains("c2[W] 4"));
    EXPECT_GT(structure->insertedOps["QuantizeLinear"], 0);
    EXPECT_GT(structure->insertedOps["DequantizeLinear"], structure->insertedOps["QuantizeLinear"]);
    EXPECT_TRUE(structure->missingNodes.empty());
    EXPECT_TRUE(structure->pruned.empty());
    // The Add's two inputs share one scale on npu (a unified-scale group) in the setup and back.
    // (A one-member group leaves no trace in the file: only groups of two or more come back.)
    std::set<std::set<std::string>> groupsA;
    std::set<std::set<std::string>> groupsB;
    for (const auto& [setupOf, groups] :
         {std::pair{&setup, &groupsA}, {&structure->setup, &groupsB}}) {
        for (const auto& [g, members] : setupOf->unifiedScaleGroups) {
            std::set<std::string> points;
            for (const int m : members) {
                points.insert(setupOf->quantizationPoints.at(m).insertionPoint.toString());
            }
            if (points.size() > 1) {
                groups->insert(points);
            }
        }
    }
    EXPECT_EQ(groupsB, groupsA);
    EXPECT_EQ(groupsB, (std::set<std::set<std::string>>{{"r1", "r2"}}));
    EXPECT_LT(structure->bytesB, structure->bytesA);
}

TEST_F(ExportDiffTest, ComparisonOfTheQdqExportFindsTheQuantizersError) {
    const auto [setup, exported] = qdqExport();
    auto outcome = session::gatherExportDiff(m_model, exported,
                                             {.modelPath = "net.onnx",
                                              .exportPath = "net_qdq.onnx",
                                              .dataset = randomData(4),
                                              .divergenceDb = 200.0,
                                              .date = "2026-01-01T00:00:00Z"},
                                             m_progress);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    ASSERT_TRUE(outcome->comparison);
    const ExportComparison& comparison = *outcome->comparison;
    EXPECT_EQ(comparison.samples, 4);
    EXPECT_TRUE(comparison.skipped.empty());
    // Every node output of A, plus one row per activation quantizer.
    int quantizerRows = 0;
    for (const TensorComparison& row : comparison.tensors) {
        quantizerRows += row.quantizer >= 0;
        EXPECT_TRUE(std::isfinite(row.sqnrDb)) << row.tensor;
        EXPECT_GT(row.sqnrDb, 5.0) << row.tensor;
    }
    EXPECT_EQ(comparison.tensors.size() - static_cast<size_t>(quantizerRows), m_model.numNodes());
    EXPECT_GT(quantizerRows, 0);
    // The outputs' agreement is there; accuracy needs labels, which random data has not.
    ASSERT_TRUE(comparison.agreement);
    EXPECT_EQ(comparison.agreement->samples, 4);
    EXPECT_GT(comparison.agreement->meanCosine, 0.9);
    EXPECT_FALSE(comparison.accuracy);
    // Everything is under 200 dB, so the first row diverges; the largest drop is a quantizer.
    ASSERT_TRUE(comparison.firstDivergent);
    EXPECT_EQ(*comparison.firstDivergent, 0U);
    ASSERT_TRUE(comparison.largestDrop);
    EXPECT_GT(*comparison.tensors[*comparison.largestDrop].inputSqnrDb,
              comparison.tensors[*comparison.largestDrop].sqnrDb);
    // The page's tables: every quantizer "added", its SQNR filled from the comparison.
    const ReviewDiff& diff = outcome->diff;
    EXPECT_EQ(diff.quantizers.rows.size(), pointsOf(setup, false).size());
    const auto column = static_cast<size_t>(
        std::find(diff.quantizers.columns.begin(), diff.quantizers.columns.end(), "SQNR dB B") -
        diff.quantizers.columns.begin());
    int withSqnr = 0;
    for (const auto& row : diff.quantizers.rows) {
        EXPECT_EQ(row[3], "added");
        withSqnr += !row[column].empty();
    }
    EXPECT_EQ(withSqnr, quantizerRows);
    const auto tables = diff.tables();
    EXPECT_TRUE(std::any_of(tables.begin(), tables.end(),
                            [](const ReviewTable& t) { return t.id == "tensor_sqnr"; }));
    EXPECT_EQ(outcome->marks.size(), pointsOf(setup, false).size());
}

TEST_F(ExportDiffTest, AnExportEqualToTheModelIsExactEverywhere) {
    auto outcome = session::gatherExportDiff(
        m_model, reimported(m_model),
        {.modelPath = "a.onnx", .exportPath = "b.onnx", .dataset = randomData(2)}, m_progress);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    for (const TensorComparison& row : outcome->comparison->tensors) {
        EXPECT_TRUE(std::isinf(row.sqnrDb)) << row.tensor;
    }
    EXPECT_FALSE(outcome->comparison->firstDivergent);
    EXPECT_TRUE(outcome->structure.setup.quantizationPoints.empty());
    EXPECT_TRUE(outcome->diff.quantizers.rows.empty());
}

TEST_F(ExportDiffTest, PrunedExportNamesTheDroppedChannels) {
    // c1 loses channels 1 and 6, c2 loses 0, 3 and 7: c2's rows are found on c1's kept inputs.
    const graph::Graph model = convNet(false);
    auto detection = pruning::detectPruningSections(model);
    ASSERT_TRUE(detection.ok()) << detection.error().toString();
    ASSERT_EQ(detection->sections.size(), 2U);
    const std::map<std::string, std::vector<int64_t>> drop = {{"c1", {1, 6}}, {"c2", {0, 3, 7}}};
    std::vector<std::vector<uint8_t>> masks;
    for (const pruning::PruningSection& section : detection->sections) {
        masks.emplace_back(static_cast<size_t>(section.channels), uint8_t{1});
        for (const int64_t c : drop.at(model.node(section.entry).name)) {
            masks.back()[static_cast<size_t>(c)] = 0;
        }
    }
    auto pruned = pruning::buildPrunedGraph(model, *detection, masks);
    ASSERT_TRUE(pruned.ok()) << pruned.error().toString();
    const graph::Graph exported = reimported(*pruned);
    auto structure = recoverExportStructure(model, exported);
    ASSERT_TRUE(structure.ok()) << structure.error().toString();
    ASSERT_EQ(structure->pruned.size(), 2U);
    for (const PrunedWeight& w : structure->pruned) {
        EXPECT_TRUE(w.matched) << w.node;
        EXPECT_EQ(w.prunedChannels, drop.at(w.node)) << w.node;
        EXPECT_EQ(w.kept, w.channels - static_cast<int64_t>(drop.at(w.node).size())) << w.node;
    }
    // The comparison follows the kept channels through the pruned tensors to the output; the
    // kept channels of c1's output are A's own, exactly.
    auto comparison = compareExport(model, exported, *structure,
                                    *runtime::loadDataset(model, randomData(2)), 20.0, m_progress);
    ASSERT_TRUE(comparison.ok()) << comparison.error().toString();
    EXPECT_TRUE(comparison->skipped.empty());
    ASSERT_EQ(comparison->tensors.size(), model.numNodes());
    EXPECT_EQ(comparison->tensors.front().tensor,
              model.value(model.node(*model.findNode("c1")).outputs[0]).name);
    EXPECT_TRUE(std::isinf(comparison->tensors.front().sqnrDb));
    EXPECT_NE(comparison->tensors.front().note.find("pruned"), std::string::npos);
    EXPECT_TRUE(std::isfinite(comparison->tensors.back().sqnrDb));
}

TEST_F(ExportDiffTest, Fp16ExportStaysCloseToTheModel) {
    graph::Graph half = m_model;
    ASSERT_TRUE(compression::convertToFloat16(half, {.keepIoTypes = true}).ok());
    half = reimported(half);
    auto structure = recoverExportStructure(m_model, half);
    ASSERT_TRUE(structure.ok()) << structure.error().toString();
    EXPECT_EQ(structure->float16Initializers, 3);
    EXPECT_GT(structure->insertedOps["Cast"], 0);
    auto comparison = compareExport(
        m_model, half, *structure, *runtime::loadDataset(m_model, randomData(2)), 40.0, m_progress);
    ASSERT_TRUE(comparison.ok()) << comparison.error().toString();
    EXPECT_FALSE(comparison->firstDivergent);
    EXPECT_LT(comparison->tensors.back().sqnrDb, 200.0); // float16 rounding is not exact
}

TEST_F(ExportDiffTest, UnnamedNodesAreMatchedByTheirTensors) {
    // A file whose nodes have no names: the importer calls them "<Op>_nncf_<index>", and in an
    // export the inserted Q/DQ nodes shift those indices, so names would pair the wrong nodes.
    graph::GraphBuilder builder(13, 8);
    graph::ValueId x = builder.input("x", {1, 3, 8, 8});
    for (int i = 0; i < 4; ++i) {
        const auto w = builder.weight("W" + std::to_string(i), {3, 3, 1, 1},
                                      ramp(9, 0.1F * static_cast<float>(i + 1), 5));
        const std::string n = std::to_string(i);
        x = builder.op("Relu", "r" + n, {builder.op("Conv", "c" + n, {x, w})});
    }
    builder.output(x, DataType::Float, {1, 3, 8, 8});
    graph::Graph built = builder.take();
    for (const graph::NodeId id : built.nodeIds()) {
        built.node(id).name.clear(); // the tensors keep their names ("c0", ...)
    }
    graph::Graph unnamed = reimported(built);
    auto state = quantization::computeQuantization(unnamed, {.hw = "cpu"});
    ASSERT_TRUE(state.ok()) << state.error().toString();
    auto calibrated =
        quantization::runCalibration(unnamed, state->setup, {.dataset = randomData(4)}, m_progress);
    ASSERT_TRUE(calibrated.ok()) << calibrated.error().toString();
    auto exported =
        quantization::insertQdqNodes(unnamed, calibrated->setup, calibrated->parameters);
    ASSERT_TRUE(exported.ok()) << exported.error().toString();
    // An exporter that leaves the original nodes unnamed, as the source file had them.
    for (const graph::NodeId id : exported->nodeIds()) {
        graph::Node& node = exported->node(id);
        if (node.opType == "Conv" || node.opType == "Relu") {
            node.name.clear();
        }
    }
    auto structure = recoverExportStructure(unnamed, reimported(*exported));
    ASSERT_TRUE(structure.ok()) << structure.error().toString();
    EXPECT_FALSE(calibrated->setup.quantizationPoints.empty());
    EXPECT_EQ(pointsOf(structure->setup, true), pointsOf(calibrated->setup, true));
    EXPECT_TRUE(structure->missingNodes.empty());
    EXPECT_TRUE(structure->notes.empty()) << structure->notes.front();
}

TEST_F(ExportDiffTest, PackedFourBitCodesGiveTheirZeroPointsAndRange) {
    // x[1,8] -> MatMul(W[8,4]); B: W as asymmetric uint4 codes (zero point 3) and symmetric int4
    // codes that never reach -8 (narrow), per-tensor.
    auto model = [] {
        graph::GraphBuilder b(21, 10);
        const auto x = b.input("x", {1, 8});
        const auto w = b.weight("W", {8, 4}, ramp(32, 0.1F, 7));
        b.output(b.op("MatMul", "mm", {x, w}), DataType::Float, {1, 4});
        return b.take();
    };
    const graph::Graph a = reimported(model());
    for (const bool asymmetric : {true, false}) {
        graph::Graph b = a;
        const graph::ValueId weight = *b.findValue("W");
        // Codes 0..15 (uint4) or -7..7 (int4), two per byte, the first in the low nibble.
        std::string packed(16, '\0');
        for (int i = 0; i < 32; ++i) {
            const int code = asymmetric ? i % 16 : (i % 15) - 7;
            const auto nibble = static_cast<uint8_t>(code & 0x0F);
            packed[static_cast<size_t>(i / 2)] =
                static_cast<char>(static_cast<uint8_t>(packed[static_cast<size_t>(i / 2)]) |
                                  (i % 2 == 0 ? nibble : static_cast<uint8_t>(nibble << 4)));
        }
        const DataType type = asymmetric ? DataType::UInt4 : DataType::Int4;
        const auto codes = b.addInitializer(
            "W_codes",
            std::make_shared<const graph::TensorData>(type, std::vector<int64_t>{8, 4}, packed));
        const auto scale = b.addInitializer(
            "W_scale",
            graph::TensorData::fromValues<float>(DataType::Float, {}, std::vector<float>{0.05F}));
        const auto zero = b.addInitializer(
            "W_zero",
            std::make_shared<const graph::TensorData>(type, std::vector<int64_t>{},
                                                      std::string(1, asymmetric ? '\x03' : '\0')));
        const auto dequantized = b.addValue("W_dq", DataType::Float, b.value(weight).shape);
        b.replaceAllUses(weight, dequantized);
        b.addNode("W_DequantizeLinear", "DequantizeLinear", {codes, scale, zero}, {dequantized});
        auto structure = recoverExportStructure(a, reimported(b));
        ASSERT_TRUE(structure.ok()) << structure.error().toString();
        ASSERT_EQ(structure->setup.quantizationPoints.size(), 1U);
        const quantization::QuantizerConfig& config =
            structure->setup.quantizationPoints.begin()->second.qconfig;
        EXPECT_EQ(config.numBits, 4);
        EXPECT_EQ(config.mode, asymmetric ? quantization::QuantizationMode::Asymmetric
                                          : quantization::QuantizationMode::Symmetric);
        EXPECT_EQ(config.narrowRange, !asymmetric);
    }
}

TEST_F(ExportDiffTest, AModelThatIsNotAnExportIsRefused) {
    graph::GraphBuilder b(13, 8);
    const auto x = b.input("x", {1, 4});
    b.output(b.op("Relu", "other", {x}), DataType::Float, {1, 4});
    auto structure = recoverExportStructure(m_model, reimported(b.take()));
    ASSERT_FALSE(structure.ok());
    EXPECT_NE(structure.error().message().find("not an export of this model"), std::string::npos);
}

} // namespace
} // namespace qs::report
