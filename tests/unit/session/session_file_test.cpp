// `.qscope` session files on the committed tiny residual model: a captured session survives the
// JSON round trip and the file round trip, restores the same choices, refuses a changed model,
// and every kind of bad input gives an error naming the problem. Format 2: feature sections
// round-trip, unknown sections are kept, missing ones are fine, and version-1 files still open.

#include "core/onnx/model_io.h"
#include "core/session/hawq_section.h"
#include "core/session/sections.h"
#include "core/session/session_file.h"
#include "core/support/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace qs::session {

using quantization::computeQuantization;
using quantization::QuantizerPropagationRule;

namespace {

const std::filesystem::path kModel = QS_TEST_DATA_DIR "/models/tiny_residual.onnx";

std::filesystem::path tempPath(const std::string& name) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("qs_session_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir / name;
}

/// NPU settings with the first point that has a 4-bit candidate switched to 4 bits.
QuantizationState editedState(const graph::Graph& model) {
    QuantizationSettings settings;
    settings.hw = "npu";
    settings.rule = QuantizerPropagationRule::MergeWithPotentialRequantization;
    auto state = computeQuantization(model, settings);
    EXPECT_TRUE(state.ok());
    for (const auto& [id, point] : state->proposal.setup.quantizationPoints) {
        for (const QuantizerConfig& config : point.possibleConfigs) {
            if (config.numBits == 4) {
                EXPECT_TRUE(chooseConfig(*state, id, config).ok());
                return std::move(state).value();
            }
        }
    }
    ADD_FAILURE() << "no 4-bit candidate on the tiny model with the NPU config";
    return std::move(state).value();
}

TEST(SessionFile, RoundTripRestoresChoicesAndSettings) {
    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok());
    const QuantizationState state = editedState(*model);
    auto session = captureSession(kModel, *hashModelFile(kModel), state);
    ASSERT_TRUE(session.ok()) << session.error().toString();
    session->view = SessionView{1.5, 10.0, -20.0, {"/layer1", "/features#section 2 of 5"}};
    EXPECT_EQ(session->modelHash.rfind("fnv1a64:", 0), 0U);
    EXPECT_EQ(session->choices.size(), state.choice.size());

    auto parsed = sessionFromJson(toJson(*session));
    ASSERT_TRUE(parsed.ok()) << parsed.error().toString();
    EXPECT_EQ(*parsed, *session);

    const auto path = tempPath("round_trip.qscope");
    ASSERT_TRUE(writeSessionFile(path, *session).ok());
    auto read = readSessionFile(path);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(*read, *session);
    ASSERT_TRUE(checkSessionModel(*read, kModel).ok());

    // A fresh state with the saved settings plus the saved choices is the edited state.
    auto fresh = computeQuantization(*model, read->settings);
    ASSERT_TRUE(fresh.ok());
    EXPECT_FALSE(fresh->choice == state.choice);
    auto choices = sessionChoicesFor(*read, *fresh);
    ASSERT_TRUE(choices.ok()) << choices.error().toString();
    ASSERT_TRUE(chooseConfigs(*fresh, *choices).ok());
    EXPECT_EQ(fresh->choice, state.choice);
    EXPECT_EQ(fresh->setup.toJson(), state.setup.toJson());
}

TEST(SessionFile, ChangedModelIsRefused) {
    const auto copy = tempPath("changed.onnx");
    std::filesystem::copy_file(kModel, copy, std::filesystem::copy_options::overwrite_existing);
    auto model = onnx::importModel(copy);
    ASSERT_TRUE(model.ok());
    auto session = captureSession(copy, *hashModelFile(copy), editedState(*model));
    ASSERT_TRUE(session.ok());
    ASSERT_TRUE(checkSessionModel(*session, copy).ok());
    std::ofstream(copy, std::ios::app) << "x";
    const auto checked = checkSessionModel(*session, copy);
    ASSERT_FALSE(checked.ok());
    EXPECT_NE(checked.error().message().find("changed since the session was saved"),
              std::string::npos);
}

TEST(SessionFile, ChoicesForOtherPointsAreRefused) {
    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok());
    auto session = captureSession(kModel, *hashModelFile(kModel), editedState(*model));
    ASSERT_TRUE(session.ok());
    auto state = computeQuantization(*model, session->settings);
    ASSERT_TRUE(state.ok());

    SessionFile moved = *session;
    moved.choices.begin()->second.point.targetNodeName = "no_such_node";
    auto refused = sessionChoicesFor(moved, *state);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("no_such_node"), std::string::npos);

    SessionFile badConfig = *session;
    badConfig.choices.begin()->second.config.numBits = 3;
    refused = sessionChoicesFor(badConfig, *state);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message().find("not a candidate"), std::string::npos);
}

TEST(SessionFile, BadFilesGiveClearErrors) {
    const auto corrupt = tempPath("corrupt.qscope");
    ASSERT_TRUE(writeFileAtomically(corrupt, std::string_view("{\"quantscope_session\": 1,")).ok());
    auto read = readSessionFile(corrupt);
    ASSERT_FALSE(read.ok());
    EXPECT_NE(read.error().toString().find("not valid JSON"), std::string::npos);
    EXPECT_NE(read.error().toString().find("corrupt.qscope"), std::string::npos);

    EXPECT_FALSE(readSessionFile(tempPath("missing.qscope")).ok());

    auto notSession = sessionFromJson(nlohmann::json{{"quantization_points", {}}});
    ASSERT_FALSE(notSession.ok());
    EXPECT_NE(notSession.error().message().find("not a Quantscope session"), std::string::npos);

    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok());
    auto session = captureSession(kModel, *hashModelFile(kModel), editedState(*model));
    ASSERT_TRUE(session.ok());
    nlohmann::json json = toJson(*session);
    json["quantscope_session"] = 99;
    EXPECT_NE(sessionFromJson(json).error().message().find("version 99"), std::string::npos);
    json = toJson(*session);
    json["sections"]["quantization"]["rule"] = "merge_sometimes";
    EXPECT_NE(sessionFromJson(json).error().message().find("merge_sometimes"), std::string::npos);
    json = toJson(*session);
    json["sections"]["quantization"].erase("preset");
    EXPECT_NE(sessionFromJson(json).error().message().find("preset"), std::string::npos);
    json = toJson(*session);
    nlohmann::json& choices = json["sections"]["quantization"]["choices"];
    choices["abc"] = choices.begin().value();
    EXPECT_FALSE(sessionFromJson(json).ok());
}

TEST(SessionFile, EveryFieldIsCheckedWithItsPath) {
    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok());
    auto session = captureSession(kModel, *hashModelFile(kModel), editedState(*model));
    ASSERT_TRUE(session.ok());
    const nlohmann::json good = toJson(*session);
    const std::string id = good["sections"]["quantization"]["choices"].begin().key();
    const std::string choice = "sections.quantization.choices[" + id + "]";
    const auto errorOf = [](const nlohmann::json& json) {
        auto read = parseSessionText(json.dump());
        return read.ok() ? std::string("accepted") : read.error().message();
    };
    nlohmann::json json = good;
    json["sections"]["quantization"]["choices"][id]["qconfig"]["num_bits"] = 1e30;
    EXPECT_EQ(errorOf(json), choice + ".qconfig.num_bits: expected an integer in 2..16, got 1e+30");
    json = good;
    json["sections"]["quantization"]["choices"][id]["qip"]["input_port_id"] = -4;
    EXPECT_EQ(errorOf(json), choice + ".qip.input_port_id: -4 is out of range 0..2147483647");
    json = good;
    json["sections"]["quantization"]["preset"] = 3;
    EXPECT_EQ(errorOf(json), "sections.quantization.preset: expected a string, got an integer");
    json = good;
    json["view"] = {{"zoom", -1.0}, {"center_x", 0.0}, {"center_y", 0.0}};
    EXPECT_EQ(errorOf(json), "view.zoom: must be positive");
    json = good;
    json["model"]["hash"] = nullptr;
    EXPECT_EQ(errorOf(json), "model.hash: expected a string, got null");
    json = good;
    json["quantscope_session"] = 2.5;
    EXPECT_EQ(errorOf(json), "quantscope_session: expected an integer in 0..2147483647, got 2.5");
    json = good;
    json["colour"] = "blue";
    EXPECT_NE(errorOf(json).find("colour: unknown field"), std::string::npos);
    // Unknown sections are still kept, whatever they hold.
    json = good;
    json["sections"]["from_the_future"] = {1, 2, 3};
    auto kept = parseSessionText(json.dump());
    ASSERT_TRUE(kept.ok()) << kept.error().toString();
    EXPECT_EQ(kept->sections.at("from_the_future"), nlohmann::json({1, 2, 3}));
    const std::string text = good.dump();
    EXPECT_EQ(errorOf(nlohmann::json::parse(text)), "accepted");
    auto twice = parseSessionText("{\"model\": null, " + text.substr(1));
    ASSERT_FALSE(twice.ok());
    EXPECT_EQ(twice.error().message(), "model: key given twice");
}

TEST(SessionFile, SectionsRoundTripAndUnknownOnesAreKept) {
    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok());
    auto session = captureSession(kModel, *hashModelFile(kModel), editedState(*model));
    ASSERT_TRUE(session.ok());
    const CalibrationSummary summary{
        .dataset = "random 8 (seed 0)",
        .samples = 8,
        .batchSize = 8,
        .rangeEstimator = "minmax",
        .seconds = 0.25,
        .outputs = {{"logits", 0.999, 0.01, 1.0}, {"aux", 0.9, 2.0, {}}}};
    setSection(*session, kCalibrationSection, toJson(summary));
    setSection(*session, "hawq_from_the_future", {{"bits", {4, 8}}});
    const auto path = tempPath("sections.qscope");
    ASSERT_TRUE(writeSessionFile(path, *session).ok());
    auto read = readSessionFile(path);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    EXPECT_EQ(*read, *session);
    auto restored = calibrationSummary(*read);
    ASSERT_TRUE(restored.ok()) << restored.error().toString();
    ASSERT_TRUE(restored->has_value());
    EXPECT_EQ(**restored, summary);
    ASSERT_NE(findSection(*read, "hawq_from_the_future"), nullptr);
    EXPECT_EQ((*findSection(*read, "hawq_from_the_future"))["bits"][1], 8);

    // Missing sections are fine: no calibration, defaults and no choices without quantization.
    nlohmann::json bare = toJson(*session);
    bare["sections"].erase("calibration");
    bare["sections"].erase("quantization");
    auto partial = sessionFromJson(bare);
    ASSERT_TRUE(partial.ok()) << partial.error().toString();
    EXPECT_TRUE(partial->choices.empty());
    EXPECT_EQ(partial->settings, QuantizationSettings{});
    EXPECT_FALSE(calibrationSummary(*partial)->has_value());
    bare.erase("sections");
    EXPECT_TRUE(sessionFromJson(bare).ok());

    // A malformed known section is an error naming it when it is read.
    setSection(*session, kCalibrationSection, {{"dataset", 3}});
    EXPECT_EQ(calibrationSummary(*session).error().message(),
              "sections.calibration.dataset: expected a string, got an integer");
}

TEST(SessionFile, VersionOneFilesStillOpen) {
    // A version-1 file as the previous build wrote it: settings and choices at the top level.
    const nlohmann::json v1 = nlohmann::json::parse(R"({
      "quantscope_session": 1,
      "model": {"path": "/models/tiny_residual.onnx", "hash": "fnv1a64:0123456789abcdef"},
      "quantization": {"hw_config": "npu", "preset": "mixed",
                       "rule": "merge_with_potential_requantization"},
      "choices": {"3": {"qip": {"qip_class": "ActivationQuantizationInsertionPoint",
                                "target_node_name": "dw", "input_port_id": null},
                        "qconfig": {"num_bits": 4, "mode": "asymmetric", "signedness_to_force": null,
                                    "per_channel": false, "narrow_range": false}}},
      "view": {"zoom": 2.0, "center_x": 1.0, "center_y": 2.0}
    })");
    auto session = sessionFromJson(v1);
    ASSERT_TRUE(session.ok()) << session.error().toString();
    EXPECT_EQ(session->modelHash, "fnv1a64:0123456789abcdef");
    EXPECT_EQ(session->settings.hw, "npu");
    EXPECT_EQ(session->settings.preset, quantization::QuantizationPreset::Mixed);
    ASSERT_EQ(session->choices.size(), 1U);
    EXPECT_EQ(session->choices.at(3).point.targetNodeName, "dw");
    EXPECT_EQ(session->choices.at(3).config.numBits, 4);
    ASSERT_TRUE(session->view.has_value());
    EXPECT_TRUE(session->sections.empty());
    // Saved again, it is a version-2 file with the same contents.
    const nlohmann::json v2 = toJson(*session);
    EXPECT_EQ(v2["quantscope_session"], 2);
    EXPECT_EQ(v2["sections"]["quantization"]["hw_config"], "npu");
    EXPECT_EQ(*sessionFromJson(v2), *session);
}

} // namespace
} // namespace qs::session

namespace qs::session {
namespace {

TEST(HawqSection, RoundTripsAndNamesBadFields) {
    HawqSummary summary;
    summary.target = 1.5;
    summary.mode = "liberal";
    summary.search = "pareto";
    summary.bits = {2, 4, 8};
    summary.samples = 32;
    summary.iterations = 100;
    summary.ratio = 1.52;
    summary.metric = 0.25;
    summary.requantizers = 2;
    summary.layers = {{.node = "conv1", .avgTrace = 1e-3, .weightBits = 4},
                      {.node = "fc", .avgTrace = 2.0, .weightBits = 8}};
    auto back = hawqSummaryFromJson(toJson(summary));
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(*back, summary);
    SessionFile file;
    auto none = hawqSummary(file);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    setSection(file, kHawqSection, toJson(summary));
    auto stored = hawqSummary(file);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(stored->value(), summary);

    nlohmann::json bad = toJson(summary);
    bad.erase("ratio");
    auto missing = hawqSummaryFromJson(bad);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message(), "sections.hawq.ratio: missing");
    bad = toJson(summary);
    bad["mode"] = "sideways";
    EXPECT_FALSE(hawqSummaryFromJson(bad).ok());
    bad = toJson(summary);
    bad["layers"] = {{{"node", "x"}}};
    auto layer = hawqSummaryFromJson(bad);
    ASSERT_FALSE(layer.ok());
    EXPECT_EQ(layer.error().message(), "sections.hawq.layers[0].avg_trace: missing");
}

} // namespace
} // namespace qs::session
