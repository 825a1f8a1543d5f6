// QuantizationState on the committed tiny residual model: default settings propagate and finalize,
// a choice re-finalizes without re-propagating, marks list every quantizer once (merged ones with
// the proposal only), and the setup JSON reads back to the same setup.

#include "core/onnx/model_io.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/setup_reader.h"

#include <gtest/gtest.h>

namespace qs::quantization {
namespace {

graph::Graph tinyModel() {
    auto model = onnx::importModel(QS_TEST_DATA_DIR "/models/tiny_residual.onnx");
    EXPECT_TRUE(model.ok());
    return std::move(model).value();
}

TEST(QuantizationState, DefaultsPropagateAndFinalize) {
    const graph::Graph model = tinyModel();
    auto state = computeQuantization(model, {});
    ASSERT_TRUE(state.ok()) << state.error().toString();
    EXPECT_EQ(state->settings.hw, "cpu");
    EXPECT_FALSE(state->setup.quantizationPoints.empty());
    const auto marks = quantizerMarks(state->setup, &state->proposal.setup);
    EXPECT_EQ(marks.size(),
              state->setup.quantizationPoints.size() + state->setup.mergedInto.size());
    EXPECT_EQ(quantizerMarks(state->setup, nullptr).size(), state->setup.quantizationPoints.size());
    const BitwidthDistribution distribution = bitwidthDistribution(state->setup, model);
    int counted = 0;
    for (const auto& [bits, count] : distribution.activationQuantizers) {
        counted += count;
    }
    for (const auto& [bits, count] : distribution.weightQuantizers) {
        counted += count;
        EXPECT_GT(distribution.weightParameters.at(bits), 0);
    }
    EXPECT_EQ(static_cast<size_t>(counted), state->setup.quantizationPoints.size());
}

TEST(QuantizationState, ChoiceRefinalizesAndRejectsUnknownPoints) {
    const graph::Graph model = tinyModel();
    QuantizationSettings settings;
    settings.hw = "npu";
    auto state = computeQuantization(model, settings);
    ASSERT_TRUE(state.ok());
    const auto* proposal = state->proposal.graph.get();
    for (const auto& [id, point] : state->proposal.setup.quantizationPoints) {
        for (const QuantizerConfig& config : point.possibleConfigs) {
            if (config.numBits != 4 || !state->setup.quantizationPoints.contains(id)) {
                continue;
            }
            ASSERT_TRUE(chooseConfig(*state, id, config).ok());
            EXPECT_EQ(state->setup.quantizationPoints.at(id).qconfig.numBits, 4);
            EXPECT_EQ(state->proposal.graph.get(), proposal); // no re-propagation
            return;
        }
    }
    GTEST_SKIP() << "no 4-bit candidate on the tiny model";
}

TEST(QuantizationState, SetupJsonRoundTrips) {
    const graph::Graph model = tinyModel();
    QuantizationSettings settings;
    settings.hw = "npu";
    settings.rule = QuantizerPropagationRule::MergeWithPotentialRequantization;
    auto state = computeQuantization(model, settings);
    ASSERT_TRUE(state.ok());
    auto back = setupFromJson(state->setup.toJson());
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->toJson(), state->setup.toJson());
    EXPECT_FALSE(setupFromJson(nlohmann::json::object()).ok());
}

TEST(QuantizationState, RuleArgumentsRoundTrip) {
    for (auto rule : {QuantizerPropagationRule::DoNotMergeBranches,
                      QuantizerPropagationRule::MergeIfAllBranchesSame,
                      QuantizerPropagationRule::MergeWithPotentialRequantization,
                      QuantizerPropagationRule::MergeAllInOne}) {
        EXPECT_EQ(ruleFromArgument(ruleArgument(rule)), rule);
    }
    EXPECT_FALSE(ruleFromArgument("sometimes"));
}

} // namespace
} // namespace qs::quantization
