// The HAWQ workflow on the committed tiny residual model under the NPU config (4- and 2-bit
// options): perturbations by our quantizer formulas, traces from the Hessian service, the choice
// meeting the target, the setup carrying the chosen bits, traces reused from saved scores, the
// pareto search never worse than trace order, and re-selection without recomputation.

#include "core/mixed_precision/hawq_workflow.h"
#include "core/mixed_precision/perturbation.h"
#include "core/onnx/model_io.h"

#include <gtest/gtest.h>

namespace qs::mixed_precision {
namespace {

/// The tiny residual model with a dynamic batch (the Hessian service checks the samples axis with
/// one and two samples).
graph::Graph tinyModel() {
    onnx::ImportOptions options;
    options.inputShapes.push_back({"input", {-1, 3, 8, 8}});
    auto model = onnx::importModel(QS_TEST_DATA_DIR "/models/tiny_residual.onnx", options);
    EXPECT_TRUE(model.ok());
    return std::move(model).value();
}

HawqRequest npuRequest() {
    HawqRequest request;
    request.settings.hw = "npu";
    request.dataset.randomSamples = 4;
    request.samples = 4;
    request.iterations = 10;
    request.compressionRatio = 1.2;
    return request;
}

TEST(HawqPerturbation, ZeroOnTheGridAndGrowingWithFewerBits) {
    // Symmetric signed 8-bit per tensor over [-1, 1]: scale 1/127, so -1, 0, 1 lie on the grid.
    const std::vector<float> onGrid{-1.0F, 0.0F, 1.0F, 0.5F * 254.0F / 254.0F * 0.0F};
    const auto grid =
        graph::TensorData::fromValues(graph::DataType::Float, {4}, std::span<const float>(onGrid));
    quantization::QuantizerConfig config;
    auto zero = weightPerturbation(*grid, config, std::nullopt);
    ASSERT_TRUE(zero.ok()) << zero.error().toString();
    EXPECT_NEAR(*zero, 0.0, 1e-12);

    std::vector<float> values(64);
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = std::sin(0.37F * static_cast<float>(i)) * (1.0F + static_cast<float>(i % 4));
    }
    const auto weight = graph::TensorData::fromValues(graph::DataType::Float, {4, 16},
                                                      std::span<const float>(values));
    config.perChannel = true;
    double previous = 0.0;
    for (const int bits : {8, 4, 2}) {
        config.numBits = bits;
        auto noise = weightPerturbation(*weight, config, 0);
        ASSERT_TRUE(noise.ok()) << noise.error().toString();
        EXPECT_GT(*noise, previous) << bits;
        previous = *noise;
    }
}

TEST(HawqWorkflow, ChoiceMeetsTargetAndLandsInTheSetup) {
    const graph::Graph model = tinyModel();
    NullProgress none;
    auto outcome = runHawq(model, npuRequest(), none);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    const HawqAnalysis& analysis = outcome->analysis;
    ASSERT_FALSE(analysis.problem.layers.empty());
    EXPECT_EQ(analysis.avgTraces.size(), analysis.problem.layers.size());
    for (size_t l = 0; l < analysis.problem.layers.size(); ++l) {
        EXPECT_GT(analysis.avgTraces[l], 0.0);
        const auto& noise = analysis.perturbations[l];
        for (auto it = noise.begin(); std::next(it) != noise.end() && it != noise.end(); ++it) {
            EXPECT_GT(it->second, std::next(it)->second); // fewer bits, more noise
        }
    }
    const HawqCandidate& chosen = analysis.candidates[outcome->chosen];
    EXPECT_GE(chosen.ratio, 1.2);
    for (const size_t i : analysis.traceOrder) {
        if (analysis.candidates[i].ratio >= 1.2) {
            EXPECT_LE(chosen.metric, analysis.candidates[i].metric);
        }
    }
    for (size_t l = 0; l < analysis.problem.layers.size(); ++l) {
        const WeightLayer& layer = analysis.problem.layers[l];
        const auto& points = outcome->state.setup.quantizationPoints;
        ASSERT_TRUE(points.contains(layer.weightQp)) << layer.node;
        EXPECT_EQ(points.at(layer.weightQp).qconfig.numBits, chosen.weightBits[l]) << layer.node;
    }
    EXPECT_EQ(outcome->mergedQuantizers, mergedQuantizerCount(outcome->state.setup));
    EXPECT_EQ(outcome->requantizers, requantizerCount(outcome->state.setup));
}

TEST(HawqWorkflow, SavedTracesGiveTheSameCandidates) {
    const graph::Graph model = tinyModel();
    NullProgress none;
    auto first = runHawq(model, npuRequest(), none);
    ASSERT_TRUE(first.ok()) << first.error().toString();
    HawqRequest again = npuRequest();
    again.dataset = {};
    again.traces = first->analysis.traceScores;
    auto second = runHawq(model, again, none);
    ASSERT_TRUE(second.ok()) << second.error().toString();
    EXPECT_EQ(second->analysis.avgTraces, first->analysis.avgTraces);
    ASSERT_EQ(second->analysis.candidates.size(), first->analysis.candidates.size());
    EXPECT_EQ(second->chosen, first->chosen);
    // Activation-mode scores are refused.
    again.traces->mode = hessian::HessianMode::Activation;
    auto wrong = runHawq(model, again, none);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message().find("weights-mode per-tensor"), std::string::npos);
}

TEST(HawqWorkflow, ParetoIsNeverWorseAndReselectionReusesTheAnalysis) {
    const graph::Graph model = tinyModel();
    NullProgress none;
    HawqRequest request = npuRequest();
    request.search = HawqSearch::Pareto;
    auto outcome = runHawq(model, request, none);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    const HawqAnalysis& analysis = outcome->analysis;
    ASSERT_FALSE(analysis.pareto.empty());
    HawqAnalysis traceOnly = analysis;
    traceOnly.search = HawqSearch::TraceOrder;
    for (const size_t i : analysis.traceOrder) {
        const double target = analysis.candidates[i].ratio;
        auto byFront = selectHawqCandidate(analysis, target);
        auto byTrace = selectHawqCandidate(traceOnly, target);
        ASSERT_TRUE(byFront.ok()) << byFront.error().toString();
        ASSERT_TRUE(byTrace.ok());
        EXPECT_LE(analysis.candidates[*byFront].metric,
                  analysis.candidates[*byTrace].metric * (1 + 1e-12));
    }
    // Re-selecting and applying another point changes the setup, not the analysis.
    quantization::QuantizationState state = outcome->state;
    const size_t last = analysis.pareto.back();
    ASSERT_TRUE(applyHawqCandidate(state, analysis.problem, analysis.candidates[last]).ok());
    const WeightLayer& layer = analysis.problem.layers.front();
    EXPECT_EQ(state.setup.quantizationPoints.at(layer.weightQp).qconfig.numBits,
              analysis.candidates[last].weightBits.front());
    auto outside = selectHawqCandidate(analysis, 100.0);
    ASSERT_FALSE(outside.ok());
    EXPECT_NE(outside.error().message().find("Invalid compression ratio=100"), std::string::npos);
}

TEST(HawqWorkflow, CpuAllowsEightBitsOnly) {
    const graph::Graph model = tinyModel();
    NullProgress none;
    HawqRequest request = npuRequest();
    request.settings.hw = "cpu";
    request.compressionRatio = 1.0;
    auto outcome = runHawq(model, request, none);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    EXPECT_EQ(outcome->analysis.problem.bits, (std::vector<int>{8}));
    EXPECT_EQ(outcome->analysis.candidates.size(), 1U);
    request.compressionRatio = 1.5;
    auto outside = runHawq(model, request, none);
    ASSERT_FALSE(outside.ok());
    EXPECT_EQ(outside.error().message(),
              "Invalid compression ratio=1.5. Should be within range [1.000, 1.000]");
}

} // namespace
} // namespace qs::mixed_precision
