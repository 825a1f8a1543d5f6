// Accuracy metrics (core/report/accuracy.h) on hand-made scores, label validation errors, and the
// bundled trained demo model: its float top-1 on the committed held-out split equals the count
// recorded next to it by the training script.
#include "core/compression/compression_workflow.h"
#include "core/onnx/model_io.h"
#include "core/pruning/pruning_workflow.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/quantization_state.h"
#include "core/report/accuracy.h"
#include "core/report/calibration_report.h"
#include "core/report/compression_report.h"
#include "core/report/pruning_report.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"
#include "core/runtime/labelled_scores.h"
#include "core/runtime/npy.h"
#include "core/runtime/probe_runner.h"
#include "core/support/progress.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

namespace qs::report {
namespace {
namespace fs = std::filesystem;
using runtime::Tensor;

Tensor scores(int64_t rows, int64_t classes, const std::vector<float>& values) {
    return Tensor::fromVector<float>({rows, classes}, values);
}

TEST(Accuracy, Top1CountsArgmaxAndPerClass) {
    // Three classes: sample 0 right (class 2), sample 1 wrong (label 0, predicted 1), sample 2
    // right (class 0); no top-5 below ten classes.
    const Tensor s = scores(3, 3, {0.1F, 0.2F, 0.9F, 0.3F, 0.5F, 0.2F, 2.0F, -1.0F, 0.0F});
    const std::vector<int64_t> labels = {2, 0, 0};
    auto accuracy = computeAccuracy(s, labels);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    EXPECT_EQ(accuracy->samples, 3);
    EXPECT_EQ(accuracy->classes, 3);
    EXPECT_EQ(accuracy->top1Correct, 2);
    EXPECT_DOUBLE_EQ(accuracy->top1(), 2.0 / 3.0);
    EXPECT_FALSE(accuracy->top5().has_value());
    ASSERT_EQ(accuracy->perClass.size(), 3U);
    EXPECT_EQ(accuracy->perClass[0].samples, 2);
    EXPECT_EQ(accuracy->perClass[0].top1Correct, 1);
    EXPECT_EQ(accuracy->perClass[1].samples, 0);
    EXPECT_EQ(accuracy->perClass[2].top1Correct, 1);
}

TEST(Accuracy, Top5FromTenClassesWithTiesToTheLowerId) {
    // Row 0: six classes score above the label (class 9): top-5 miss. Row 1: the label (class 7)
    // ties with classes 0..4 and 7..9 at 0; the five ties below 7 rank first, so rank 5: miss.
    // Row 2: label 3 ties with class 0 only (rank 1): top-1 miss, top-5 hit.
    std::vector<float> values(30, 0.0F);
    for (int c = 0; c < 10; ++c) {
        values[static_cast<size_t>(c)] = static_cast<float>(10 - c); // 10, 9, ..., 1
    }
    values[9] = 4.5F;                        // between class 5 (5) and class 6 (4): rank 6
    values[10 + 5] = values[10 + 6] = -1.0F; // row 1: classes 5 and 6 below the tie
    for (int c = 0; c < 10; ++c) {
        values[20 + static_cast<size_t>(c)] = c == 0 || c == 3 ? 1.0F : 0.0F;
    }
    auto accuracy = computeAccuracy(scores(3, 10, values), std::vector<int64_t>{9, 7, 3});
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    EXPECT_EQ(accuracy->top1Correct, 0);
    ASSERT_TRUE(accuracy->top5Correct.has_value());
    EXPECT_EQ(*accuracy->top5Correct, 1);
    EXPECT_DOUBLE_EQ(*accuracy->top5(), 1.0 / 3.0);
}

TEST(Accuracy, NanScoreOfTheLabelIsWrong) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    auto accuracy =
        computeAccuracy(scores(2, 2, {nan, -1.0F, 1.0F, nan}), std::vector<int64_t>{0, 0});
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    EXPECT_EQ(accuracy->top1Correct, 1);
}

TEST(Accuracy, LabelCountMismatchNamesBothCounts) {
    auto accuracy =
        computeAccuracy(scores(3, 2, std::vector<float>(6, 0.0F)), std::vector<int64_t>{0, 1});
    ASSERT_FALSE(accuracy.ok());
    EXPECT_EQ(accuracy.error().code(), Errc::InvalidArgument);
    EXPECT_NE(accuracy.error().message().find("2 labels for 3 samples"), std::string::npos)
        << accuracy.error().toString();
}

TEST(Accuracy, LabelOutsideTheClassRangeNamesIdAndClassCount) {
    auto accuracy =
        computeAccuracy(scores(2, 10, std::vector<float>(20, 0.0F)), std::vector<int64_t>{3, 10});
    ASSERT_FALSE(accuracy.ok());
    EXPECT_NE(accuracy.error().message().find("label 10 of sample 1 is outside the output's 10 "
                                              "classes (ids 0..9)"),
              std::string::npos)
        << accuracy.error().toString();
    auto negative = validateLabels(std::vector<int64_t>{-1}, 1, 10);
    ASSERT_FALSE(negative.ok());
    EXPECT_NE(negative.error().message().find("label -1 of sample 0"), std::string::npos);
}

TEST(Accuracy, ScoresMustBeRowsOfClasses) {
    const Tensor sequence = Tensor::fromVector<float>({1, 2, 3}, std::vector<float>(6, 0.0F));
    auto accuracy = computeAccuracy(sequence, std::vector<int64_t>{0});
    ASSERT_FALSE(accuracy.ok());
    EXPECT_NE(accuracy.error().message().find("[N, C]"), std::string::npos);
    const Tensor pooled = Tensor::fromVector<float>({2, 3, 1, 1}, {0, 1, 0, 5, 0, 0});
    auto fromPooled = computeAccuracy(pooled, std::vector<int64_t>{1, 0});
    ASSERT_TRUE(fromPooled.ok()) << fromPooled.error().toString();
    EXPECT_EQ(fromPooled->top1Correct, 2);
}

TEST(Accuracy, LabelsTensorsAreIntegerVectors) {
    auto column = labelsFromTensor(Tensor::fromVector<int32_t>({3, 1}, {4, 0, 2}));
    ASSERT_TRUE(column.ok()) << column.error().toString();
    EXPECT_EQ(*column, (std::vector<int64_t>{4, 0, 2}));
    auto floats = labelsFromTensor(Tensor::fromVector<float>({2}, {1.0F, 0.0F}));
    ASSERT_FALSE(floats.ok());
    EXPECT_NE(floats.error().message().find("int64"), std::string::npos);
    auto matrix = labelsFromTensor(Tensor::fromVector<int64_t>({2, 2}, {1, 0, 1, 0}));
    ASSERT_FALSE(matrix.ok());
    EXPECT_NE(matrix.error().message().find("[2,2]"), std::string::npos);
}

TEST(Accuracy, ReadsLabelsNpyAndNamesTheFileOnError) {
    const fs::path dir = fs::temp_directory_path() / "qs_accuracy_test";
    fs::create_directories(dir);
    ASSERT_TRUE(runtime::writeNpy(Tensor::fromVector<int64_t>({3}, {1, 2, 0}), dir / "y.npy").ok());
    auto labels = readLabelsNpy(dir / "y.npy");
    ASSERT_TRUE(labels.ok()) << labels.error().toString();
    EXPECT_EQ(*labels, (std::vector<int64_t>{1, 2, 0}));
    ASSERT_TRUE(runtime::writeNpy(Tensor::fromVector<double>({1}, {1.0}), dir / "float.npy").ok());
    auto wrong = readLabelsNpy(dir / "float.npy");
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().toString().find("float.npy"), std::string::npos);
    fs::remove_all(dir);
}

TEST(Accuracy, AgreementAndCosineOfTwoOutputs) {
    const Tensor a = scores(3, 2, {1.0F, 0.0F, 0.0F, 2.0F, 0.0F, 0.0F});
    const Tensor b = scores(3, 2, {1.0F, 1.0F, 0.0F, 3.0F, 0.0F, 0.0F});
    auto agreement = compareOutputs(a, b);
    ASSERT_TRUE(agreement.ok()) << agreement.error().toString();
    EXPECT_EQ(agreement->samples, 3);
    // Row 0: argmax 0 vs 0 (tie to the lower id), cosine 1/sqrt(2); row 1: same class, cosine 1;
    // row 2: both zero, cosine 1.
    EXPECT_DOUBLE_EQ(agreement->top1Agreement, 1.0);
    EXPECT_NEAR(agreement->meanCosine, (1.0 / std::sqrt(2.0) + 2.0) / 3.0, 1e-12);
    EXPECT_NEAR(agreement->minCosine, 1.0 / std::sqrt(2.0), 1e-12);
    const Tensor flipped = scores(3, 2, {0.0F, 1.0F, 0.0F, 2.0F, 0.0F, 1.0F});
    auto partial = compareOutputs(a, flipped);
    ASSERT_TRUE(partial.ok());
    EXPECT_DOUBLE_EQ(partial->top1Agreement, 1.0 / 3.0);
    EXPECT_DOUBLE_EQ(partial->minCosine, 0.0);
    auto mismatch = compareOutputs(a, scores(2, 3, std::vector<float>(6, 0.0F)));
    ASSERT_FALSE(mismatch.ok());
    EXPECT_NE(mismatch.error().message().find("[3,2] and [2,3]"), std::string::npos);
}

TEST(Accuracy, JsonCarriesTop5OnlyWhenComputed) {
    auto three = computeAccuracy(scores(1, 3, {0, 1, 0}), std::vector<int64_t>{1});
    ASSERT_TRUE(three.ok());
    const nlohmann::json json = toJson(*three);
    EXPECT_EQ(json["top1_correct"], 1);
    EXPECT_FALSE(json.contains("top5"));
    EXPECT_EQ(json["per_class"].size(), 3U);
}

/// The trained demo model on its committed held-out split, through our executor.
TEST(TrainedDemoModel, FloatTop1EqualsTheRecordedCount) {
    const fs::path models = fs::path(QS_SOURCE_DIR) / "resources/models";
    std::ifstream recordFile(models / "digits_cnn.accuracy.json");
    ASSERT_TRUE(recordFile.good());
    const nlohmann::json record = nlohmann::json::parse(recordFile);
    auto graph = onnx::importModel(models / "digits_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    auto executor = runtime::Executor::create(std::move(*graph), {});
    ASSERT_TRUE(executor.ok()) << executor.error().toString();
    auto inputs = runtime::readNpy(models / "digits_test_inputs.npy");
    ASSERT_TRUE(inputs.ok()) << inputs.error().toString();
    auto labels = readLabelsNpy(models / "digits_test_labels.npy");
    ASSERT_TRUE(labels.ok()) << labels.error().toString();
    runtime::Dataset dataset{.inputs = {std::move(*inputs)}, .batchSize = 64};
    NullProgress progress;
    auto outputs = runtime::runBatched(*executor, dataset, progress);
    ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
    auto accuracy = computeAccuracy((*outputs)[0], *labels);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    EXPECT_EQ(accuracy->samples, record["samples"].get<int64_t>());
    EXPECT_EQ(accuracy->top1Correct, record["correct"].get<int64_t>());
    for (size_t c = 0; c < accuracy->perClass.size(); ++c) {
        const nlohmann::json& recorded = record["per_class"][std::to_string(c)];
        EXPECT_EQ(accuracy->perClass[c].samples, recorded["samples"].get<int64_t>()) << c;
        EXPECT_EQ(accuracy->perClass[c].top1Correct, recorded["correct"].get<int64_t>()) << c;
    }
}

} // namespace
} // namespace qs::report

namespace qs::report {
namespace {

/// Calibrates the trained demo model (CPU config) on the first `samples` of its held-out split
/// with `labelsNpy` as the labels.
Result<quantization::CalibrationOutcome> calibrateDemo(const std::string& labelsNpy,
                                                       int64_t samples) {
    const fs::path models = fs::path(QS_SOURCE_DIR) / "resources/models";
    QS_ASSIGN_OR_RETURN(graph::Graph graph, onnx::importModel(models / "digits_cnn.onnx"));
    QS_ASSIGN_OR_RETURN(quantization::QuantizationState state,
                        quantization::computeQuantization(graph, {}));
    quantization::CalibrationRequest request;
    request.dataset.npyFiles = {(models / "digits_test_inputs.npy").string()};
    request.dataset.labelsNpy = labelsNpy;
    request.dataset.maxSamples = samples;
    NullProgress progress;
    return quantization::runCalibration(graph, state.setup, request, progress);
}

TEST(CalibrationAccuracy, ReportsStateFloatAndQuantizedTop1OfTheDemoModel) {
    const fs::path models = fs::path(QS_SOURCE_DIR) / "resources/models";
    std::ifstream recordFile(models / "digits_cnn.accuracy.json");
    const nlohmann::json record = nlohmann::json::parse(recordFile);
    auto outcome = calibrateDemo((models / "digits_test_labels.npy").string(), 360);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    auto accuracy = calibrationAccuracy(*outcome);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    ASSERT_TRUE(accuracy->has_value());
    const AccuracyComparison& a = **accuracy;
    // The float figure is the recorded one; 8-bit keeps top-1 within one point of it.
    EXPECT_EQ(a.floatModel.samples, 360);
    EXPECT_EQ(a.floatModel.top1Correct, record["correct"].get<int64_t>());
    EXPECT_LE(std::abs(a.compressed.top1() - a.floatModel.top1()), 0.01);
    ASSERT_TRUE(a.floatModel.top5().has_value()); // ten classes
    const nlohmann::json json = toJson(*outcome);
    ASSERT_TRUE(json.contains("accuracy"));
    EXPECT_EQ(json["accuracy"]["float"]["top1_correct"], record["correct"]);
    EXPECT_TRUE(json["accuracy"].contains("quantized"));
    const std::string text = calibrationText(*outcome);
    EXPECT_NE(text.find("Top-1 accuracy: float 98.33 %, quantized"), std::string::npos) << text;
    EXPECT_NE(text.find("Top-5 accuracy"), std::string::npos) << text;
}

TEST(CalibrationAccuracy, NoLabelsNoAccuracyAndBadIdsAreNamed) {
    auto unlabelled = calibrateDemo("", 40);
    ASSERT_TRUE(unlabelled.ok()) << unlabelled.error().toString();
    EXPECT_FALSE(calibrationAccuracy(*unlabelled)->has_value());
    EXPECT_FALSE(toJson(*unlabelled).contains("accuracy"));
    EXPECT_EQ(calibrationText(*unlabelled).find("accuracy"), std::string::npos);

    const fs::path bad = fs::temp_directory_path() / "qs_calibration_bad_labels.npy";
    std::vector<int64_t> ids(40, 1);
    ids[7] = 12;
    ASSERT_TRUE(runtime::writeNpy(Tensor::fromVector<int64_t>({40}, ids), bad).ok());
    auto outcome = calibrateDemo(bad.string(), 40);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    auto accuracy = calibrationAccuracy(*outcome);
    ASSERT_FALSE(accuracy.ok());
    EXPECT_NE(accuracy.error().message().find("label 12 of sample 7"), std::string::npos)
        << accuracy.error().toString();
    fs::remove(bad);
}

} // namespace
} // namespace qs::report

namespace qs::report {
namespace {

const fs::path kModels = fs::path(QS_SOURCE_DIR) / "resources/models";

int64_t recordedCorrect() {
    std::ifstream recordFile(kModels / "digits_cnn.accuracy.json");
    return nlohmann::json::parse(recordFile)["correct"].get<int64_t>();
}

runtime::DatasetRequest labelledSplit() {
    runtime::DatasetRequest request;
    request.npyFiles = {(kModels / "digits_test_inputs.npy").string()};
    request.labelsNpy = (kModels / "digits_test_labels.npy").string();
    return request;
}

TEST(LabelledScores, LabelledBatchesOfClassScoresAreKept) {
    runtime::LabelledScoresCollector collector;
    runtime::SampleBatch unlabelled{.begin = 0, .end = 2};
    collector.add(unlabelled, scores(2, 3, {1, 0, 0, 0, 1, 0}), scores(2, 3, {1, 0, 0, 0, 1, 0}));
    auto none = collector.finish();
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());

    runtime::SampleBatch first{.begin = 0, .end = 2};
    first.labels = Tensor::fromVector<int64_t>({2}, {0, 2});
    collector.add(first, scores(2, 3, {1, 0, 0, 0, 0, 1}), scores(2, 3, {1, 0, 0, 0, 1, 0}));
    runtime::SampleBatch second{.begin = 2, .end = 3};
    second.labels = Tensor::fromVector<int64_t>({1}, {1});
    collector.add(second, scores(1, 3, {0, 1, 0}), scores(1, 3, {0, 1, 0}));
    auto kept = collector.finish();
    ASSERT_TRUE(kept.ok()) << kept.error().toString();
    ASSERT_TRUE(kept->has_value());
    auto accuracy = compareAccuracy(*kept);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    ASSERT_TRUE(accuracy->has_value());
    EXPECT_EQ((*accuracy)->floatModel.samples, 3);
    EXPECT_EQ((*accuracy)->floatModel.top1Correct, 3);
    EXPECT_EQ((*accuracy)->compressed.top1Correct, 2); // the second row says class 1, label 2
    EXPECT_EQ(accuracyText(**accuracy, "pruned")
                  .rfind("Top-1 accuracy: float 100.00 %, pruned "
                         "66.67 % (-33.33 points; 3 labelled",
                         0),
              0U)
        << accuracyText(**accuracy, "pruned");
}

TEST(LabelledScores, ScoresWithTrailingOnesAreClassScores) {
    runtime::LabelledScoresCollector collector;
    runtime::SampleBatch batch{.begin = 0, .end = 1};
    batch.labels = Tensor::fromVector<int64_t>({1}, {1});
    const Tensor pooled = Tensor::fromVector<float>({1, 3, 1, 1}, {0, 1, 0}); // a conv head
    collector.add(batch, pooled, pooled);
    auto kept = collector.finish();
    ASSERT_TRUE(kept.ok()) << kept.error().toString();
    ASSERT_TRUE(kept->has_value());
    auto accuracy = compareAccuracy(*kept);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    EXPECT_EQ((*accuracy)->compressed.top1Correct, 1);
}

TEST(LabelledScores, LabelsForAModelWithoutClassScoresAreAnError) {
    runtime::LabelledScoresCollector collector;
    runtime::SampleBatch batch{.begin = 0, .end = 1};
    batch.labels = Tensor::fromVector<int64_t>({1}, {0});
    const Tensor maps = Tensor::fromVector<float>({1, 1, 2, 2}, {0, 1, 0, 1}); // a detector's map
    collector.add(batch, maps, maps);
    auto result = collector.finish();
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message().find("first output is [1,1,2,2]"), std::string::npos)
        << result.error().toString();
}

TEST(LabelledScores, RequestsSayWhetherTheyCarryLabels) {
    EXPECT_TRUE(labelledSplit().hasLabels());
    runtime::DatasetRequest unlabelled = labelledSplit();
    unlabelled.labelsNpy.clear();
    EXPECT_FALSE(unlabelled.hasLabels());
    runtime::DatasetRequest random;
    random.randomSamples = 4;
    EXPECT_FALSE(random.hasLabels());
    EXPECT_FALSE(runtime::DatasetRequest{}.hasLabels());
    const fs::path dir = fs::temp_directory_path() / "qs_has_labels_classes";
    fs::remove_all(dir);
    fs::create_directories(dir / "cat");
    runtime::DatasetRequest folders;
    folders.imagesDir = dir.string();
    EXPECT_TRUE(folders.hasLabels()); // only class subfolders: ImageNet's layout
    std::ofstream(dir / "loose.png") << "x";
    EXPECT_FALSE(folders.hasLabels());
    fs::remove_all(dir);
}

TEST(CompressionAccuracy, LabelledDatasetScoresTheFloatAndTheCompressedModel) {
    auto graph = onnx::importModel(kModels / "digits_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const graph::Graph dense = *graph;
    compression::WeightCompressionRequest request;
    request.options.mode = compression::CompressionMode::Int4Sym;
    request.options.groupSize = 8;
    request.options.allLayers = true;
    request.options.groupSizeFallback = compression::GroupSizeFallback::Adjust;
    request.dataset = labelledSplit();
    NullProgress progress;
    auto outcome = compression::runWeightCompression(*graph, request, progress);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    auto accuracy = compressionAccuracy(*outcome);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    ASSERT_TRUE(accuracy->has_value());
    EXPECT_EQ((*accuracy)->floatModel.top1Correct, recordedCorrect());

    // The compressed figure is that of the graph it wrote, run on its own.
    auto executor = runtime::Executor::create(*graph, {});
    ASSERT_TRUE(executor.ok()) << executor.error().toString();
    auto dataset = runtime::loadDataset(dense, request.dataset);
    ASSERT_TRUE(dataset.ok()) << dataset.error().toString();
    auto outputs = runtime::runBatched(*executor, *dataset, progress);
    ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
    auto labels = readLabelsNpy(request.dataset.labelsNpy);
    auto direct = computeAccuracy((*outputs)[0], *labels);
    ASSERT_TRUE(direct.ok()) << direct.error().toString();
    EXPECT_EQ((*accuracy)->compressed.top1Correct, direct->top1Correct);
    const nlohmann::json json = toJson(*outcome);
    EXPECT_EQ(json["accuracy"]["float"]["top1_correct"], recordedCorrect());
    EXPECT_EQ(json["accuracy"]["compressed"]["top1_correct"], direct->top1Correct);
    EXPECT_NE(compressionText(*outcome).find("Top-1 accuracy: float 98.33 %, compressed"),
              std::string::npos)
        << compressionText(*outcome);

    // Without labels nothing is scored and the report says nothing about accuracy.
    graph::Graph again = dense;
    request.dataset.labelsNpy.clear();
    auto unlabelled = compression::runWeightCompression(again, request, progress);
    ASSERT_TRUE(unlabelled.ok()) << unlabelled.error().toString();
    EXPECT_FALSE(unlabelled->labelled.has_value());
    EXPECT_FALSE(toJson(*unlabelled).contains("accuracy"));
}

TEST(PruningAccuracy, ScoresTheDenseAndThePrunedModel) {
    auto graph = onnx::importModel(kModels / "digits_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    pruning::PruningRequest request;
    request.importance = pruning::ImportanceMetric::L2;
    request.simd = 1;
    request.target = {.fraction = true, .value = 0.9};
    NullProgress progress;
    pruning::PruningAnalysis analysis;
    auto outcome = pruning::runPruning(*graph, request, progress, &analysis);
    ASSERT_TRUE(outcome.ok()) << outcome.error().toString();
    ASSERT_TRUE(pruning::scorePruning(*graph, labelledSplit(), *outcome, progress).ok());
    auto accuracy = pruningAccuracy(*outcome);
    ASSERT_TRUE(accuracy.ok()) << accuracy.error().toString();
    ASSERT_TRUE(accuracy->has_value());
    EXPECT_EQ((*accuracy)->floatModel.top1Correct, recordedCorrect());
    EXPECT_LT((*accuracy)->compressed.top1Correct, (*accuracy)->floatModel.samples);
    const nlohmann::json json = toJson(analysis, *outcome);
    EXPECT_EQ(json["accuracy"]["pruned"]["top1_correct"], (*accuracy)->compressed.top1Correct);
    EXPECT_NE(pruningText(analysis, *outcome).find("Top-1 accuracy: float 98.33 %, pruned"),
              std::string::npos);
}

} // namespace
} // namespace qs::report
