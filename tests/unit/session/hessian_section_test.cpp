// The session's "hessian" section: real scores of the tiny residual model survive the session file
// round trip exactly; a malformed section is an error naming the problem; the dataset fingerprint
// follows the dataset's files (a rewritten .npy changes it, the same request gives the same one).

#include "core/hessian/hessian_service.h"
#include "core/onnx/model_io.h"
#include "core/runtime/dataset_request.h"
#include "core/runtime/npy.h"
#include "core/session/hessian_section.h"
#include "core/session/session_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <unistd.h>

namespace qs::session {
namespace {

const std::filesystem::path kModel = QS_TEST_DATA_DIR "/models/tiny_residual.onnx";

std::filesystem::path tempPath(const std::string& name) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                      ("qs_hessian_section_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return dir / name;
}

TEST(HessianSection, ScoresRoundTripThroughTheSessionFile) {
    auto model = onnx::importModel(kModel);
    ASSERT_TRUE(model.ok()) << model.error().toString();
    runtime::DatasetRequest dataset;
    dataset.randomSamples = 3;
    auto data = runtime::loadDataset(*model, dataset);
    ASSERT_TRUE(data.ok()) << data.error().toString();
    hessian::TensorBatchSource source(data->inputs, 1); // the model's static batch
    hessian::HessianScoresRequest request;
    request.granularity = hessian::HessianScoresGranularity::PerOutputChannel;
    request.samples = 3;
    request.batch = 1;
    request.iterations = 5;
    NullProgress progress;
    auto scores = hessian::runHessianScores(*model, request, source, progress);
    ASSERT_TRUE(scores.ok()) << scores.error().toString();
    ASSERT_FALSE(scores->targets.empty());

    auto session = captureSession(kModel, *hashModelFile(kModel),
                                  *quantization::computeQuantization(*model, {}));
    ASSERT_TRUE(session.ok());
    HessianSection section{.dataset = dataset.describe(),
                           .datasetFingerprint = datasetFingerprint(dataset),
                           .modelHash = session->modelHash,
                           .datasetRequest = dataset,
                           .seconds = 0.5,
                           .scores = *scores};
    setHessianSection(*session, section);
    const auto path = tempPath("hessian.qscope");
    ASSERT_TRUE(writeSessionFile(path, *session).ok());
    auto read = readSessionFile(path);
    ASSERT_TRUE(read.ok()) << read.error().toString();
    auto restored = hessianSection(*read);
    ASSERT_TRUE(restored.ok()) << restored.error().toString();
    ASSERT_TRUE(restored->has_value());
    const HessianSection& back = **restored;
    EXPECT_EQ(back.dataset, section.dataset);
    EXPECT_EQ(back.datasetFingerprint, section.datasetFingerprint);
    EXPECT_EQ(back.modelHash, section.modelHash);
    EXPECT_EQ(back.datasetRequest.randomSamples, 3);
    EXPECT_EQ(datasetFingerprint(back.datasetRequest), section.datasetFingerprint);
    ASSERT_NE(back.target(scores->targets[0].node), nullptr);
    EXPECT_EQ(back.target("no such node"), nullptr);
    const std::vector<double> mean = scores->targets[0].mean();
    EXPECT_GT(HessianSection::perTensorScore(scores->targets[0]), 0.0);
    EXPECT_NEAR(HessianSection::perTensorScore(scores->targets[0]),
                std::accumulate(mean.begin(), mean.end(), 0.0), 1e-12);
    EXPECT_EQ(back.scores.granularity, hessian::HessianScoresGranularity::PerOutputChannel);
    EXPECT_EQ(back.scores.sampleIndices, scores->sampleIndices);
    ASSERT_EQ(back.scores.targets.size(), scores->targets.size());
    for (size_t t = 0; t < scores->targets.size(); ++t) {
        EXPECT_EQ(back.scores.targets[t].node, scores->targets[t].node);
        EXPECT_EQ(back.scores.targets[t].shape, scores->targets[t].shape);
        EXPECT_EQ(back.scores.targets[t].perSample, scores->targets[t].perSample);
    }

    // A session without the section is fine; a malformed one names the problem.
    read->sections.erase(std::string(kHessianSection));
    EXPECT_FALSE(hessianSection(*read)->has_value());
    read->sections[std::string(kHessianSection)] = {{"dataset", "random 3"}};
    auto malformed = hessianSection(*read);
    ASSERT_FALSE(malformed.ok());
    EXPECT_NE(malformed.error().message().find("sections.hessian.dataset_fingerprint"),
              std::string::npos);
    nlohmann::json noTargets = toJson(section);
    noTargets["scores"].erase("targets");
    auto broken = hessianSectionFromJson(noTargets);
    ASSERT_FALSE(broken.ok());
    EXPECT_NE(broken.error().toString().find("sections.hessian.scores"), std::string::npos);
}

TEST(HessianSection, FingerprintFollowsTheDatasetFiles) {
    const auto file = tempPath("x.npy");
    const runtime::Tensor x = runtime::Tensor::zeros(graph::DataType::Float, {2, 3});
    ASSERT_TRUE(runtime::writeNpy(x, file).ok());
    runtime::DatasetRequest dataset;
    dataset.npyFiles = {file.string()};
    const std::string first = datasetFingerprint(dataset);
    EXPECT_EQ(datasetFingerprint(dataset), first);
    EXPECT_NE(first.find(file.string()), std::string::npos);
    const runtime::Tensor bigger = runtime::Tensor::zeros(graph::DataType::Float, {4, 3});
    ASSERT_TRUE(runtime::writeNpy(bigger, file).ok());
    EXPECT_NE(datasetFingerprint(dataset), first);
    std::filesystem::remove(file);
    EXPECT_NE(datasetFingerprint(dataset).find("missing"), std::string::npos);

    runtime::DatasetRequest random;
    random.randomSamples = 8;
    runtime::DatasetRequest otherSeed = random;
    otherSeed.seed = 1;
    EXPECT_NE(datasetFingerprint(random), datasetFingerprint(otherSeed));
}

} // namespace
} // namespace qs::session
