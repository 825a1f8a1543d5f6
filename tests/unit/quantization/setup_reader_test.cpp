// The strict setup reader on the committed tiny residual model: a written setup reads back, and
// each kind of broken field is refused with one message naming its JSON path and the problem.

#include "core/onnx/model_io.h"
#include "core/quantization/quantization_state.h"
#include "core/quantization/setup_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace qs::quantization {
namespace {

class SetupReader : public ::testing::Test {
protected:
    void SetUp() override {
        auto model = onnx::importModel(QS_TEST_DATA_DIR "/models/tiny_residual.onnx");
        ASSERT_TRUE(model.ok());
        m_model = std::move(model).value();
        auto state = computeQuantization(m_model, {});
        ASSERT_TRUE(state.ok());
        m_setup = state->setup;
        m_json = m_setup.toJson();
        for (const auto& [id, point] : m_setup.quantizationPoints) {
            if (point.insertionPoint.isWeight && m_weightId < 0) {
                m_weightId = id;
            }
            if (!point.insertionPoint.isWeight && m_activationId < 0) {
                m_activationId = id;
            }
        }
        ASSERT_GE(m_weightId, 0);
        ASSERT_GE(m_activationId, 0);
    }

    /// The error message of reading `json`, or "accepted".
    std::string errorOf(const nlohmann::json& json) const { return errorOfText(json.dump()); }

    std::string errorOfText(const std::string& text) const {
        auto read = parseSetup(text, m_model);
        return read.ok() ? std::string("accepted") : read.error().toString();
    }

    nlohmann::json& point(nlohmann::json& json, int id) const {
        return json["quantization_points"][std::to_string(id)];
    }

    std::string path(int id) const { return "quantization_points[" + std::to_string(id) + "]"; }

    graph::Graph m_model;
    SingleConfigQuantizerSetup m_setup;
    nlohmann::json m_json;
    int m_weightId = -1;
    int m_activationId = -1;
};

TEST_F(SetupReader, WrittenSetupReadsBack) {
    auto back = parseSetup(m_json.dump(2), m_model);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->toJson(), m_json);
}

TEST_F(SetupReader, InputPortBeyondTheNodesInputs) {
    nlohmann::json json = m_json;
    const std::string node =
        m_setup.quantizationPoints.at(m_weightId).insertionPoint.targetNodeName;
    const auto inputs = m_model.node(*m_model.findNode(node)).inputs.size();
    nlohmann::json& entry = point(json, m_activationId);
    entry["qip"]["target_node_name"] = node;
    entry["qip"]["input_port_id"] = 77;
    EXPECT_EQ(errorOf(json), path(m_activationId) + ".qip.input_port_id: node '" + node + "' has " +
                                 std::to_string(inputs) + " inputs, no input 77");
    entry["qip"]["input_port_id"] = -1;
    EXPECT_EQ(errorOf(json),
              path(m_activationId) + ".qip.input_port_id: -1 is out of range 0..2147483647");
    entry["qip"]["input_port_id"] = 0.5;
    EXPECT_EQ(errorOf(json),
              path(m_activationId) +
                  ".qip.input_port_id: expected an integer in 0..2147483647, got 0.5");
}

TEST_F(SetupReader, UnknownNodesAndWeightlessWeightPoints) {
    nlohmann::json json = m_json;
    point(json, m_activationId)["qip"]["target_node_name"] = "no_such_node";
    EXPECT_EQ(errorOf(json),
              path(m_activationId) + ".qip.target_node_name: no node 'no_such_node' in the model");
    json = m_json;
    point(json, m_activationId)["qip"]["target_node_name"] = "nncf_model_input_9";
    EXPECT_EQ(errorOf(json), path(m_activationId) + ".qip: no model input 'nncf_model_input_9'");
    json = m_json;
    const std::string activationNode =
        m_setup.quantizationPoints.at(m_activationId).insertionPoint.targetNodeName;
    std::string weightless;
    for (const graph::NodeId node : m_model.nodeIds()) {
        if (m_model.node(node).opType == "Relu") {
            weightless = m_model.node(node).name;
        }
    }
    ASSERT_FALSE(weightless.empty());
    point(json, m_weightId)["qip"]["target_node_name"] = weightless;
    EXPECT_EQ(errorOf(json), path(m_weightId) + ".qip.target_node_name: node '" + weightless +
                                 "' has no constant weight to quantize");
    json = m_json;
    point(json, m_weightId)["directly_quantized_operator_node_names"] = {"ghost"};
    EXPECT_EQ(errorOf(json), path(m_weightId) +
                                 ".directly_quantized_operator_node_names[0]: no node 'ghost' in "
                                 "the model");
}

TEST_F(SetupReader, GroupsAndLinksNameExistingPoints) {
    nlohmann::json json = m_json;
    json["unified_scale_groups"] = {{"0", {m_activationId, 99999}}};
    EXPECT_EQ(errorOf(json), "unified_scale_groups[0][1]: no quantization point 99999");
    json["unified_scale_groups"] = {{"0", {m_activationId, m_weightId}}};
    EXPECT_EQ(errorOf(json), "unified_scale_groups[0][1]: quantization point " +
                                 std::to_string(m_weightId) +
                                 " is a weight point; scales are unified between activations");
    json["unified_scale_groups"] = {{"0", {m_activationId, m_activationId}}};
    EXPECT_EQ(errorOf(json), "unified_scale_groups[0][1]: quantization point " +
                                 std::to_string(m_activationId) + " is listed twice in the group");
    json = m_json;
    json["requantization"] = {{{"requantizer", m_activationId}, {"upstream", 4242}}};
    EXPECT_EQ(errorOf(json), "requantization[0].upstream: no quantization point 4242");
    json = m_json;
    json["merged"] = {{{"removed", m_activationId}, {"merged_into", m_weightId}}};
    EXPECT_EQ(errorOf(json), "merged[0].removed: quantization point " +
                                 std::to_string(m_activationId) +
                                 " is still in quantization_points");
}

TEST_F(SetupReader, UnifiedScaleMembersShareOneGranularity) {
    int second = -1;
    for (const auto& [id, qp] : m_setup.quantizationPoints) {
        if (!qp.insertionPoint.isWeight && id != m_activationId) {
            second = id;
        }
    }
    ASSERT_GE(second, 0);
    nlohmann::json json = m_json;
    point(json, m_activationId)["qconfig"]["num_bits"] = 8;
    point(json, second)["qconfig"] = point(json, m_activationId)["qconfig"];
    json["unified_scale_groups"] = {{"0", {m_activationId, second}}};
    EXPECT_EQ(errorOf(json), "accepted");
    // Bit widths may differ (each member computes its scale from the shared range and its own
    // config, as HAWQ's choices need); a per-channel member cannot share a per-tensor range.
    point(json, second)["qconfig"]["num_bits"] = 4;
    EXPECT_EQ(errorOf(json), "accepted");
    point(json, second)["qconfig"]["per_channel"] = true;
    const std::string error = errorOf(json);
    EXPECT_EQ(error.rfind("unified_scale_groups[0][1]: quantization point " +
                              std::to_string(second) + " (B:4 ",
                          0),
              0U)
        << error;
    EXPECT_NE(error.find("PC:Y "), std::string::npos) << error;
    EXPECT_NE(
        error.find("cannot share a scale with point " + std::to_string(m_activationId) + " (B:8 "),
        std::string::npos)
        << error;
    EXPECT_NE(error.find("share one per-tensor range"), std::string::npos) << error;
}

TEST_F(SetupReader, NumbersTypesAndIds) {
    nlohmann::json json = m_json;
    point(json, m_weightId)["qconfig"]["num_bits"] = 1e30;
    EXPECT_EQ(errorOf(json),
              path(m_weightId) + ".qconfig.num_bits: expected an integer in 2..16, got 1e+30");
    point(json, m_weightId)["qconfig"]["num_bits"] = 99;
    EXPECT_EQ(errorOf(json), path(m_weightId) + ".qconfig.num_bits: 99 is out of range 2..16");
    json = m_json;
    json["quantization_points"]["07"] = point(json, m_weightId);
    EXPECT_EQ(errorOf(json), "quantization_points[07]: the key '07' is not an id (0, 1, 2, ...)");
    json = m_json;
    json["quantization_points"]["4000"] = point(json, m_weightId);
    EXPECT_EQ(errorOf(json),
              "quantization_points[4000].qip: the same insertion point " +
                  m_setup.quantizationPoints.at(m_weightId).insertionPoint.toString() + " as " +
                  path(m_weightId));
    json = m_json;
    point(json, m_weightId)["qip_class"] = "BiasQuantizationInsertionPoint";
    EXPECT_NE(errorOf(json).find(path(m_weightId) + ".qip_class: unknown insertion point class"),
              std::string::npos);
    json = m_json;
    point(json, m_activationId)["qip"]["input_port"] = 0; // a typo must not make an output point
    EXPECT_NE(errorOf(json).find(path(m_activationId) + ".qip.input_port: unknown field"),
              std::string::npos);
    json = m_json;
    json.erase("quantization_points");
    EXPECT_EQ(errorOf(json), "quantization_points: missing");
    EXPECT_EQ(errorOf(nlohmann::json::array()), "(top level): expected an object, got an array");
}

TEST_F(SetupReader, RepeatedKeysDeepNestingAndBadJson) {
    const std::string text = m_json.dump();
    // The same top-level key twice: a plain parse would keep the second silently.
    const std::string twice = "{\"merged\": [], " + text.substr(1);
    EXPECT_EQ(errorOfText(twice), "merged: key given twice");
    EXPECT_EQ(errorOfText(std::string(200, '[') + std::string(200, ']')),
              "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
              "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
              "[0][0][0][0][0][0][0][0][0][0]: nested deeper than 64 levels");
    EXPECT_NE(errorOfText("{\"quantization_points\": ").find("not valid JSON"), std::string::npos);
    auto missing = readSetupFile("/nonexistent/setup.json", m_model);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().toString(), "file '/nonexistent/setup.json': no such file");
}

} // namespace
} // namespace qs::quantization
