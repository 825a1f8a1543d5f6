// Data-aware sensitivity: hand-computed activation statistics (per-sample and pooled), the token
// axis of MatMul/Gemm inputs, dataset loading, and ratio mixing that keeps the layer whose inputs
// vary most in the backup mode.

#include "core/compression/activation_statistics.h"
#include "core/compression/weight_compression.h"
#include "core/graph/graph_builder.h"
#include "core/runtime/batching.h"
#include "core/runtime/dataset_request.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace qs::compression {
namespace {

using runtime::Tensor;

double statisticOf(SensitivityMetric metric, int64_t tokenAxis,
                   const std::vector<Tensor>& batches) {
    ActivationStatistic statistic(metric, tokenAxis);
    for (const Tensor& batch : batches) {
        const auto added = statistic.add(batch);
        EXPECT_TRUE(added.ok()) << added.error().toString();
    }
    return statistic.value();
}

// Two samples of 3 tokens x 2 channels. Sample 0: channel 0 = 1, 2, 3 (var 2/3, max 3),
// channel 1 = 0 (var 0); sample 1: channel 0 = 0, channel 1 = 2, -2, 0 (var 8/3, max 2).
Tensor twoSamples() {
    return Tensor::fromVector<float>({2, 3, 2}, {1, 0, 2, 0, 3, 0, 0, 2, 0, -2, 0, 0});
}

TEST(ActivationStatistic, PerSampleStatisticsAreAveraged) {
    const std::vector<Tensor> batches = {twoSamples()};
    // mean over channels: sample 0 (2/3 + 0) / 2, sample 1 (0 + 8/3) / 2; averaged: 5/6.
    EXPECT_NEAR(statisticOf(SensitivityMetric::MeanActivationVariance, -2, batches), 5.0 / 6.0,
                1e-12);
    // max over channels: 2/3 and 8/3; averaged: 5/3.
    EXPECT_NEAR(statisticOf(SensitivityMetric::MaxActivationVariance, -2, batches), 5.0 / 3.0,
                1e-12);
    // mean over channels of max |x|: (3 + 0) / 2 and (0 + 2) / 2; averaged: 1.25.
    EXPECT_NEAR(statisticOf(SensitivityMetric::MeanActivationMagnitude, -2, batches), 1.25, 1e-12);
}

TEST(ActivationStatistic, SamplesSplitAcrossBatchesGiveTheSameValue) {
    const Tensor all = twoSamples();
    const std::vector<Tensor> split = {runtime::sliceBatch(all, 0, 1),
                                       runtime::sliceBatch(all, 1, 2)};
    EXPECT_NEAR(statisticOf(SensitivityMetric::MaxActivationVariance, -2, split), 5.0 / 3.0, 1e-12);
}

TEST(ActivationStatistic, RankTwoPoolsRowsOfEveryBatch) {
    // Rows are the token axis: channel 0 = 1, 3, 5, 7 (mean 4, var 5), channel 1 = 0, 0, 0, 4
    // (mean 1, var 3), split over two batches; Chan's merge must see one sequence.
    const Tensor rows = Tensor::fromVector<float>({4, 2}, {1, 0, 3, 0, 5, 0, 7, 4});
    const std::vector<Tensor> split = {runtime::sliceBatch(rows, 0, 2),
                                       runtime::sliceBatch(rows, 2, 4)};
    EXPECT_NEAR(statisticOf(SensitivityMetric::MeanActivationVariance, -2, split), 4.0, 1e-12);
    EXPECT_NEAR(statisticOf(SensitivityMetric::MaxActivationVariance, -2, split), 5.0, 1e-12);
    EXPECT_NEAR(statisticOf(SensitivityMetric::MeanActivationMagnitude, -2, split), 5.5, 1e-12);
}

TEST(ActivationStatistic, TokensAlongTheLastAxis) {
    // [channels = 2, tokens = 3]: channel 0 = 1, 2, 3 (var 2/3), channel 1 = 4, 4, 4 (var 0).
    const std::vector<Tensor> batches = {Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 4, 4})};
    EXPECT_NEAR(statisticOf(SensitivityMetric::MaxActivationVariance, -1, batches), 2.0 / 3.0,
                1e-12);
    EXPECT_NEAR(statisticOf(SensitivityMetric::MeanActivationMagnitude, -1, batches), 3.5, 1e-12);
}

TEST(ActivationStatistic, RefusesNonFloatAndChangingChannels) {
    ActivationStatistic statistic(SensitivityMetric::MeanActivationVariance, -2);
    const auto ints = statistic.add(Tensor::fromVector<int64_t>({2, 2}, {1, 2, 3, 4}));
    ASSERT_FALSE(ints.ok());
    EXPECT_NE(ints.error().message().find("float32"), std::string::npos);
    ASSERT_TRUE(statistic.add(Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4})).ok());
    const auto wider = statistic.add(Tensor::fromVector<float>({1, 3}, {1, 2, 3}));
    ASSERT_FALSE(wider.ok());
    EXPECT_NE(wider.error().message().find("3 channels"), std::string::npos);
}

TEST(ActivationStatistic, MetricNamesRoundTrip) {
    for (const auto metric :
         {SensitivityMetric::WeightQuantizationError, SensitivityMetric::MeanActivationVariance,
          SensitivityMetric::MaxActivationVariance, SensitivityMetric::MeanActivationMagnitude}) {
        const auto parsed = parseSensitivityMetric(sensitivityMetricName(metric));
        ASSERT_TRUE(parsed.ok());
        EXPECT_EQ(parsed.value(), metric);
    }
    EXPECT_EQ(parseSensitivityMetric("MAX_ACTIVATION_VARIANCE").value(),
              SensitivityMetric::MaxActivationVariance);
    const auto bad = parseSensitivityMetric("hessian");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message().find("unknown sensitivity metric 'hessian'"),
              std::string::npos);
}

std::vector<float> ramp(int64_t count, float scale) {
    std::vector<float> values(static_cast<size_t>(count));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = scale * (static_cast<float>((i * 7) % 23) - 11.0F) / 11.0F;
    }
    return values;
}

TEST(ActivationProbe, TokenAxisFollowsTheContractedAxis) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {4, 16});
    const auto w = ramp(int64_t{16} * 8, 1.0F);
    const auto right = b.op("MatMul", "right", {x, b.weight("w1", {16, 8}, w)});
    const auto left = b.op("MatMul", "left", {b.weight("w2", {8, 4}, w), right});
    b.op("Gemm", "gemm", {left, b.weight("w3", {16, 8}, w)},
         {{"transA", int64_t{1}}, {"transB", int64_t{0}}});
    const graph::Graph graph = b.take();
    const auto node = [&](const char* name) { return *graph.findNode(name); };
    const auto rightProbe = activationProbeOf(graph, node("right"), 1);
    ASSERT_TRUE(rightProbe.ok());
    EXPECT_EQ(rightProbe.value().tokenAxis, -2);
    EXPECT_EQ(rightProbe.value().value, x);
    const auto leftProbe = activationProbeOf(graph, node("left"), 0);
    ASSERT_TRUE(leftProbe.ok());
    EXPECT_EQ(leftProbe.value().tokenAxis, -1);
    EXPECT_EQ(leftProbe.value().value, right);
    const auto gemmProbe = activationProbeOf(graph, node("gemm"), 1);
    ASSERT_TRUE(gemmProbe.ok());
    EXPECT_EQ(gemmProbe.value().tokenAxis, -1);
}

/// Two parallel MatMuls whose weights differ only by a factor of 2 (the second has 4x the INT8
/// error: a quarter of the data-free sensitivity), the second fed with 10x the input: 100x the
/// activation variance, 10x the magnitude. A head MatMul joins them (the last, not ratio-defining).
graph::Graph parallelLayers() {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {-1, 4, 16});
    const std::vector<float> quiet = ramp(int64_t{16} * 8, 1.0F);
    const std::vector<float> loud = ramp(int64_t{16} * 8, 2.0F);
    const std::vector<float> ten = {10.0F};
    const auto a = b.op("MatMul", "quiet", {x, b.weight("quiet.weight", {16, 8}, quiet)});
    const auto scaled = b.op("Mul", "amplify", {x, b.weight("ten", {1}, ten)});
    const auto c = b.op("MatMul", "loud", {scaled, b.weight("loud.weight", {16, 8}, loud)});
    const auto sum = b.op("Add", "join", {a, c});
    const std::vector<float> head = ramp(int64_t{8} * 4, 0.5F);
    b.output(b.op("MatMul", "head", {sum, b.weight("head.weight", {8, 4}, head)}));
    return b.take();
}

const WeightDecision& decision(const CompressionPlan& plan, const std::string& weight) {
    for (const WeightDecision& d : plan.weights) {
        if (d.valueName == weight) {
            return d;
        }
    }
    ADD_FAILURE() << "no decision for " << weight;
    return plan.weights.front();
}

TEST(DataAwareSensitivity, LayerWithLargerInputVarianceStaysInBackupMode) {
    const graph::Graph graph = parallelLayers();
    runtime::DatasetRequest source;
    source.randomSamples = 6;
    source.batchSize = 4; // 4 + 2 samples: two runs
    auto data = runtime::loadDataset(graph, source);
    ASSERT_TRUE(data.ok()) << data.error().toString();
    EXPECT_EQ(data.value().inputs[0].shape(), (runtime::Shape{6, 4, 16}));
    EXPECT_EQ(data.value().batchSize, 4);

    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    options.groupSize = 16;
    options.ratio = 0.6; // one of the two equal-sized layers goes 4-bit
    NullProgress progress;

    // Data-free: the loud weight has the larger INT8 error, the lower sensitivity: 4-bit.
    auto dataFree = planWeightCompression(graph, options, progress);
    ASSERT_TRUE(dataFree.ok()) << dataFree.error().toString();
    EXPECT_EQ(decision(dataFree.value(), "loud.weight").mode, CompressionMode::Int4Asym);
    EXPECT_EQ(decision(dataFree.value(), "quiet.weight").mode, CompressionMode::Int8Asym);

    for (const auto metric :
         {SensitivityMetric::MeanActivationVariance, SensitivityMetric::MaxActivationVariance,
          SensitivityMetric::MeanActivationMagnitude}) {
        options.sensitivity = metric;
        auto plan = planWeightCompression(graph, options, progress, &data.value());
        ASSERT_TRUE(plan.ok()) << plan.error().toString();
        const WeightDecision& quiet = decision(plan.value(), "quiet.weight");
        const WeightDecision& loud = decision(plan.value(), "loud.weight");
        const double factor = metric == SensitivityMetric::MeanActivationMagnitude ? 10.0 : 100.0;
        EXPECT_NEAR(loud.activationStatistic / quiet.activationStatistic, factor, factor * 1e-5)
            << sensitivityMetricName(metric);
        EXPECT_GT(loud.sensitivity, quiet.sensitivity) << sensitivityMetricName(metric);
        EXPECT_EQ(loud.mode, CompressionMode::Int8Asym) << sensitivityMetricName(metric);
        EXPECT_EQ(quiet.mode, CompressionMode::Int4Asym) << sensitivityMetricName(metric);
        EXPECT_EQ(decision(plan.value(), "head.weight").mode, CompressionMode::Int8Asym);
        EXPECT_EQ(planToJson(plan.value())["options"]["sensitivity_metric"],
                  sensitivityMetricName(metric));
    }
}

TEST(DataAwareSensitivity, NeedsADataset) {
    const graph::Graph graph = parallelLayers();
    WeightCompressionOptions options;
    options.mode = CompressionMode::Int4Asym;
    options.groupSize = 16;
    options.ratio = 0.6;
    options.sensitivity = SensitivityMetric::MaxActivationVariance;
    NullProgress progress;
    const auto plan = planWeightCompression(graph, options, progress);
    ASSERT_FALSE(plan.ok());
    EXPECT_NE(plan.error().message().find("'max_activation_variance' needs a dataset"),
              std::string::npos)
        << plan.error().toString();
}

TEST(CompressionDataset, RefusesAmbiguousOrUnfitSources) {
    const graph::Graph graph = parallelLayers();
    runtime::DatasetRequest none;
    EXPECT_FALSE(runtime::loadDataset(graph, none).ok());
    runtime::DatasetRequest two;
    two.randomSamples = 2;
    two.imagesDir = "/nonexistent";
    const auto ambiguous = runtime::loadDataset(graph, two);
    ASSERT_FALSE(ambiguous.ok());
    EXPECT_NE(ambiguous.error().message().find("exactly one dataset"), std::string::npos);
    runtime::DatasetRequest npy;
    npy.npyFiles = {"a.npy", "b.npy"};
    const auto count = runtime::loadDataset(graph, npy);
    ASSERT_FALSE(count.ok());
    EXPECT_NE(count.error().message().find("1 input(s), got 2 .npy file(s)"), std::string::npos);
    runtime::DatasetRequest images;
    images.imagesDir = "/nonexistent";
    const auto notImages = runtime::loadDataset(graph, images);
    ASSERT_FALSE(notImages.ok());
    EXPECT_NE(notImages.error().message().find("NCHW"), std::string::npos);

    graph::GraphBuilder b(13);
    const auto ids = b.input("ids", {1, 4}, graph::DataType::Int64);
    b.output(b.op("Identity", "copy", {ids}), graph::DataType::Int64);
    runtime::DatasetRequest random;
    random.randomSamples = 2;
    const auto ints = runtime::loadDataset(b.take(), random);
    ASSERT_FALSE(ints.ok());
    EXPECT_NE(ints.error().message().find("float inputs only; 'ids' is"), std::string::npos);
}

TEST(CompressionDataset, StaticBatchStacksSamples) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {1, 16});
    const std::vector<float> w = ramp(int64_t{16} * 8, 1.0F);
    b.output(b.op("MatMul", "fc", {x, b.weight("fc.weight", {16, 8}, w)}));
    const graph::Graph graph = b.take();
    runtime::DatasetRequest source;
    source.randomSamples = 3;
    const auto data = runtime::loadDataset(graph, source);
    ASSERT_TRUE(data.ok()) << data.error().toString();
    EXPECT_EQ(data.value().inputs[0].shape(), (runtime::Shape{3, 16}));
    EXPECT_EQ(data.value().batchSize, 1);
    source.batchSize = 2;
    const auto wrongBatch = runtime::loadDataset(graph, source);
    ASSERT_FALSE(wrongBatch.ok());
    EXPECT_NE(wrongBatch.error().message().find("static batch of 1, not 2"), std::string::npos);
}

} // namespace
} // namespace qs::compression
