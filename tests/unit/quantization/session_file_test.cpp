// `.qscope` session files on the committed tiny residual model: a captured session survives the
// JSON round trip and the file round trip, restores the same choices, refuses a changed model,
// and every kind of bad input gives an error naming the problem.

#include "core/onnx/model_io.h"
#include "core/quantization/session_file.h"
#include "core/support/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace qs::quantization {
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
    session->view = SessionView{1.5, 10.0, -20.0};
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
    json["quantization"]["rule"] = "merge_sometimes";
    EXPECT_NE(sessionFromJson(json).error().message().find("merge_sometimes"), std::string::npos);
    json = toJson(*session);
    json["quantization"].erase("preset");
    EXPECT_NE(sessionFromJson(json).error().message().find("preset"), std::string::npos);
    json = toJson(*session);
    json["choices"]["abc"] = json["choices"].begin().value();
    EXPECT_FALSE(sessionFromJson(json).ok());
}

} // namespace
} // namespace qs::quantization
