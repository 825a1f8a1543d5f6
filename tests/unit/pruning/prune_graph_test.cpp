// The pruned graph equals the dense graph whose pruned channels are forced to zero where they
// enter the exit (after BatchNormalization, PRelu and the per-channel constants), on our
// executor; it verifies, exports checker-clean and re-imports with the pruned shapes.
#include "core/onnx/model_io.h"
#include "core/pruning/prune_graph.h"
#include "core/pruning/pruning_workflow.h"
#include "pruning_test_models.h"

#include <gtest/gtest.h>

#include <random>

namespace qs::pruning {
namespace {

/// `graph` with, per section, the exit's input channels of the pruned channels zeroed: the
/// dense model with the pruned channels' outputs forced to zero.
graph::Graph zeroedReference(const graph::Graph& graph, const SectionDetection& detection,
                             const std::vector<std::vector<uint8_t>>& masks) {
    graph::Graph out = graph;
    for (size_t s = 0; s < masks.size(); ++s) {
        const ChannelParameter& exitWeight = detection.sections[s].parameters.back();
        graph::Value& value = out.value(exitWeight.value);
        const std::vector<int64_t>& dims = value.initializer->dims();
        std::vector<float> data(value.initializer->as<float>().begin(),
                                value.initializer->as<float>().end());
        int64_t inner = 1;
        int64_t outer = 1;
        for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
            (i < exitWeight.axis ? outer : inner) *=
                i == exitWeight.axis ? 1 : dims[static_cast<size_t>(i)];
        }
        const int64_t size = dims[static_cast<size_t>(exitWeight.axis)];
        for (int64_t o = 0; o < outer; ++o) {
            for (int64_t c = 0; c < size; ++c) {
                if (masks[s][static_cast<size_t>(c)] != 0) {
                    continue;
                }
                for (int64_t i = 0; i < inner; ++i) {
                    data[static_cast<size_t>((o * size + c) * inner + i)] = 0.0F;
                }
            }
        }
        value.initializer = graph::TensorData::fromValues<float>(graph::DataType::Float, dims,
                                                                 std::span<const float>(data));
    }
    return out;
}

std::vector<std::vector<uint8_t>> randomMasks(const SectionDetection& detection, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<std::vector<uint8_t>> masks;
    for (const PruningSection& section : detection.sections) {
        std::vector<uint8_t> mask(static_cast<size_t>(section.channels));
        for (uint8_t& m : mask) {
            m = static_cast<uint8_t>(rng() % 2);
        }
        mask[rng() % mask.size()] = 1;
        masks.push_back(mask);
    }
    return masks;
}

int64_t kept(const std::vector<uint8_t>& mask) {
    return std::count(mask.begin(), mask.end(), uint8_t{1});
}

TEST(PruneGraph, PrunedEqualsDenseWithPrunedChannelsZeroed) {
    for (const graph::Graph& graph :
         {testing::chainModel(), testing::mlpModel(), testing::gapGemmModel()}) {
        const SectionDetection detection = detectPruningSections(graph).value();
        ASSERT_FALSE(detection.sections.empty());
        const runtime::Tensor x = testing::randomInputs(graph, 3, 11);
        for (uint32_t seed = 0; seed < 4; ++seed) {
            const auto masks = randomMasks(detection, seed);
            const graph::Graph pruned = buildPrunedGraph(graph, detection, masks).value();
            const graph::Graph reference = zeroedReference(graph, detection, masks);
            const auto a = testing::runGraph(pruned, x);
            const auto b = testing::runGraph(reference, x);
            ASSERT_EQ(a.size(), 1U);
            EXPECT_LT(testing::maxAbsDiff(a[0], b[0]), 1e-5) << "seed " << seed;
            // The values between entry and exit carry the kept count.
            const graph::Value& flow = pruned.value(detection.sections[0].flowValues.back());
            const auto rank = static_cast<int64_t>(flow.shape.rank());
            const int64_t axis = detection.sections[0].flowAxis < 0
                                     ? rank + detection.sections[0].flowAxis
                                     : detection.sections[0].flowAxis;
            EXPECT_EQ(flow.shape.dims[static_cast<size_t>(axis)].size, kept(masks[0]));
        }
    }
}

TEST(PruneGraph, ExportPassesTheCheckerAndReimportsWithPrunedShapes) {
    const graph::Graph graph = testing::chainModel();
    const SectionDetection detection = detectPruningSections(graph).value();
    const auto masks = randomMasks(detection, 5);
    const graph::Graph pruned = buildPrunedGraph(graph, detection, masks).value();
    ASSERT_TRUE(onnx::checkModel(pruned).ok()) << onnx::checkModel(pruned).error().toString();
    const graph::Graph reimported = testing::withShapes(pruned);
    const graph::Value& bnOut = reimported.value(*reimported.findValue("bn_output_0"));
    ASSERT_TRUE(bnOut.shape.rankKnown);
    EXPECT_EQ(bnOut.shape.dims[1].size, kept(masks[0]));
    EXPECT_EQ(reimported.value(*reimported.findValue("bn_scale")).initializer->numElements(),
              kept(masks[0]));
    const runtime::Tensor x = testing::randomInputs(graph, 2, 3);
    EXPECT_LT(
        testing::maxAbsDiff(testing::runGraph(reimported, x)[0], testing::runGraph(pruned, x)[0]),
        1e-6);
}

TEST(PruningWorkflow, LfhOnRandomSamplesMeetsTheTargetAndPrunes) {
    const graph::Graph graph = testing::chainModel();
    PruningRequest request;
    request.target = parseTargetMemory("60%").value();
    request.simd = 2;
    request.simdPadding = false;
    request.samples = 4;
    request.iterations = 20;
    request.dataset.randomSamples = 4;
    NullProgress progress;
    PruningAnalysis analysis;
    const auto outcome = runPruning(graph, request, progress, &analysis);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_EQ(analysis.samples, 4);
    EXPECT_LE(outcome.value().prunedBytes, outcome.value().targetBytes);
    EXPECT_LT(outcome.value().prunedGraphBytes, outcome.value().denseBytes);
    EXPECT_EQ(outcome.value().info.entries, (std::vector<std::string>{"conv1", "conv2"}));
    // Unpadded with even counts, the pruned graph has exactly the calculator's bytes.
    EXPECT_EQ(outcome.value().prunedGraphBytes, outcome.value().prunedBytes);
    for (const auto& scores : outcome.value().info.scores) {
        for (const double s : scores) {
            EXPECT_GE(s, 0.0);
        }
    }
    // An unknown lock is named.
    request.lock = {"relu1"};
    const auto bad = runPruning(graph, request, progress);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().toString().find("'relu1' is not the entry"), std::string::npos);
}

} // namespace
} // namespace qs::pruning
