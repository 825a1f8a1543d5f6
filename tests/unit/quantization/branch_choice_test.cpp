// Per-branch choices under branch-merging rules on the demo model: with MERGE_ALL_IN_ONE a
// non-default config for a quantizer serving several branches is reported, its default config and
// single-consumer points are not, and the requantization rule reports nothing.

#include "core/onnx/model_io.h"
#include "core/quantization/branch_choice.h"

#include <gtest/gtest.h>

namespace qs::quantization {
namespace {

const char* const kDemoModel = QS_TEST_DATA_DIR "/../../resources/models/demo_cnn.onnx";

QuantizationState stateWith(const graph::Graph& model, QuantizerPropagationRule rule) {
    QuantizationSettings settings;
    settings.hw = "npu";
    settings.rule = rule;
    auto state = computeQuantization(model, settings);
    EXPECT_TRUE(state.ok());
    return std::move(state).value();
}

TEST(BranchChoice, NonDefaultConfigOfABranchServingQuantizerIsReported) {
    auto model = onnx::importModel(kDemoModel);
    ASSERT_TRUE(model.ok()) << model.error().toString();
    const QuantizationState state = stateWith(*model, QuantizerPropagationRule::MergeAllInOne);
    int shared = -1;
    int single = -1;
    for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight || point.possibleConfigs.size() < 2) {
            continue;
        }
        const size_t ops = point.directlyQuantizedOperatorNodeNames.size();
        (ops > 1 ? shared : single) = id;
    }
    ASSERT_GE(shared, 0) << "the demo model has a fork with a multi-config quantizer";
    const auto& candidates = state.proposal.setup.quantizationPoints.at(shared).possibleConfigs;
    EXPECT_EQ(mergedBranchChoices(state, {{shared, candidates.at(1)}}), std::vector<int>{shared});
    EXPECT_TRUE(mergedBranchChoices(state, {{shared, candidates.at(0)}}).empty());
    if (single >= 0) {
        const auto& own = state.proposal.setup.quantizationPoints.at(single).possibleConfigs;
        EXPECT_TRUE(mergedBranchChoices(state, {{single, own.at(1)}}).empty());
    }
    const QuantizationState requant =
        stateWith(*model, QuantizerPropagationRule::MergeWithPotentialRequantization);
    QuantizerConfigChoice all;
    for (const auto& [id, point] : requant.proposal.setup.quantizationPoints) {
        all[id] = point.possibleConfigs.back();
    }
    EXPECT_TRUE(mergedBranchChoices(requant, all).empty());
    EXPECT_TRUE(ruleMergesBranches(QuantizerPropagationRule::MergeIfAllBranchesSame));
    EXPECT_FALSE(ruleMergesBranches(QuantizerPropagationRule::DoNotMergeBranches));
}

} // namespace
} // namespace qs::quantization
