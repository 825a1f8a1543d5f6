// Importing a saved setup onto a fresh quantization state of the same model: the choices it gives
// finalize to the very same quantizers; a setup made under another HW config, or with a config no
// candidate offers, is refused with the point named and the state left as it was.

#include "core/onnx/model_io.h"
#include "core/quantization/setup_import.h"
#include "core/quantization/setup_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace qs::quantization {
namespace {

class SetupImport : public ::testing::Test {
protected:
    void SetUp() override {
        auto model = onnx::importModel(QS_DEMO_MODEL);
        ASSERT_TRUE(model.ok()) << model.error().toString();
        m_model = std::move(model).value();
        m_npu.hw = "npu";
        m_npu.preset = QuantizationPreset::Mixed;
        auto state = computeQuantization(m_model, m_npu);
        ASSERT_TRUE(state.ok()) << state.error().toString();
        m_state = std::move(state).value();
    }

    /// `m_state` with every weight point that offers 4 bits at 4 bits.
    SingleConfigQuantizerSetup fourBitWeights() const {
        std::vector<int> weights;
        for (const auto& [id, point] : m_state.proposal.setup.quantizationPoints) {
            if (point.insertionPoint.isWeight) {
                weights.push_back(id);
            }
        }
        QuantizationState changed = m_state;
        const QuantizerConfigChoice fours = configsWithBitwidth(changed, weights, 4);
        EXPECT_FALSE(fours.empty()) << "the NPU config offers no 4-bit weights on the demo model";
        EXPECT_TRUE(chooseConfigs(changed, fours).ok());
        return changed.setup;
    }

    graph::Graph m_model;
    QuantizationSettings m_npu;
    QuantizationState m_state;
};

TEST_F(SetupImport, SavedSetupGivesBackTheSameQuantizers) {
    const SingleConfigQuantizerSetup saved = fourBitWeights();
    ASSERT_NE(saved.toJson(), m_state.setup.toJson());
    auto read = parseSetup(saved.toJson().dump(2), m_model);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    auto choice = choicesForSetup(m_state, *read);
    ASSERT_TRUE(choice.ok()) << choice.error().toString();
    QuantizationState imported = m_state;
    ASSERT_TRUE(chooseConfigs(imported, *choice).ok());
    EXPECT_EQ(imported.setup.toJson(), saved.toJson());
    // Importing the state's own setup changes nothing.
    auto same = choicesForSetup(m_state, m_state.setup);
    ASSERT_TRUE(same.ok()) << same.error().toString();
    EXPECT_EQ(*same, m_state.choice);
}

TEST_F(SetupImport, SetupOfOtherSettingsIsRefusedNamingThePoint) {
    const SingleConfigQuantizerSetup saved = fourBitWeights();
    auto cpu = computeQuantization(m_model, {});
    ASSERT_TRUE(cpu.ok());
    auto refused = choicesForSetup(*cpu, saved);
    ASSERT_FALSE(refused.ok());
    const std::string message = refused.error().toString();
    EXPECT_NE(message.find("propagation with HW config 'cpu', preset performance"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("quantization point "), std::string::npos) << message;

    SingleConfigQuantizerSetup odd = m_state.setup;
    SingleConfigQuantizationPoint& first = odd.quantizationPoints.begin()->second;
    first.qconfig.numBits = 3;
    auto noCandidate = choicesForSetup(m_state, odd);
    ASSERT_FALSE(noCandidate.ok());
    EXPECT_NE(noCandidate.error().toString().find("B:3 "), std::string::npos)
        << noCandidate.error().toString();
    EXPECT_NE(noCandidate.error().toString().find("none of its candidates"), std::string::npos);
}

} // namespace
} // namespace qs::quantization
