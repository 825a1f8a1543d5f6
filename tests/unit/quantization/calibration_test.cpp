// Calibration: statistics and ranges by hand, the fake-quant kernel, per-port isolation of
// pre-hook quantizers in the rewritten graph, unified-scale groups, and the simulation report.

#include "core/quantization/calibration.h"
#include "core/quantization/fake_quantize.h"
#include "core/quantization/statistics.h"
#include "core/runtime/executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qs::quantization {
namespace {

using graph::DataType;
using graph::Graph;
using graph::TensorShape;
using graph::ValueId;
using runtime::Tensor;

/// One input's samples, run in batches of `batchSize`.
runtime::Dataset datasetOf(const Tensor& samples, int64_t batchSize = 1) {
    return runtime::Dataset{.inputs = {samples}, .batchSize = batchSize};
}

Progress& noProgress() {
    static NullProgress progress;
    return progress;
}

QuantizerConfig config(int bits, bool perChannel = false, bool narrow = false,
                       QuantizationMode mode = QuantizationMode::Symmetric) {
    QuantizerConfig c;
    c.numBits = bits;
    c.perChannel = perChannel;
    c.narrowRange = narrow;
    c.mode = mode;
    return c;
}

QuantizerParameters params(const QuantizerConfig& c, std::vector<float> lo, std::vector<float> hi) {
    const std::optional<int> axis = c.perChannel ? std::optional<int>(1) : std::nullopt;
    auto p = parametersFromMinMax(c, lo, hi, axis);
    EXPECT_TRUE(p.ok()) << p.error().toString();
    return std::move(p).value();
}

std::vector<float> valuesOf(const Tensor& t) {
    return {t.data<float>(), t.data<float>() + t.numElements()};
}

TEST(CalibrationStatistics, PerSampleAndPerChannel) {
    // Two samples of [C=2, 2]: sample 0 = {1,-2 | 3,4}, sample 1 = {0,1 | -5,2}.
    const Tensor batch = Tensor::fromVector<float>({2, 2, 2}, {1, -2, 3, 4, 0, 1, -5, 2});
    TensorStatistics stats;
    ASSERT_TRUE(stats.addBatch(batch, {}).ok());
    EXPECT_EQ(stats.samples, 2);
    EXPECT_EQ(stats.min, -5.0F);
    EXPECT_EQ(stats.max, 4.0F);
    EXPECT_DOUBLE_EQ(stats.sumSampleMin, -2.0 + -5.0);
    EXPECT_DOUBLE_EQ(stats.sumSampleMax, 4.0 + 2.0);
    EXPECT_DOUBLE_EQ(stats.sumSampleAbsMax, 4.0 + 5.0);
    EXPECT_EQ(stats.channelMin, (std::vector<float>{-2.0F, -5.0F}));
    EXPECT_EQ(stats.channelMax, (std::vector<float>{1.0F, 4.0F}));

    // NNCF default per-tensor: means of per-sample min and (symmetric) |max|.
    auto sym = activationRange(stats, config(8), RangeEstimator::Nncf);
    ASSERT_TRUE(sym.ok());
    EXPECT_FLOAT_EQ(sym->min[0], -3.5F);
    EXPECT_FLOAT_EQ(sym->max[0], 4.5F);
    auto asym = activationRange(stats, config(8, false, false, QuantizationMode::Asymmetric),
                                RangeEstimator::Nncf);
    ASSERT_TRUE(asym.ok());
    EXPECT_FLOAT_EQ(asym->max[0], 3.0F);
    auto minmax = activationRange(stats, config(8), RangeEstimator::MinMax);
    ASSERT_TRUE(minmax.ok());
    EXPECT_FLOAT_EQ(minmax->min[0], -5.0F);
    EXPECT_FLOAT_EQ(minmax->max[0], 5.0F);
    // Per-channel: global per-channel min and |max|.
    auto perChannel = activationRange(stats, config(8, true), RangeEstimator::Nncf);
    ASSERT_TRUE(perChannel.ok());
    EXPECT_EQ(perChannel->max, (std::vector<float>{2.0F, 5.0F}));
    // Percentile needs its statistics.
    EXPECT_FALSE(activationRange(TensorStatistics{}, config(8), RangeEstimator::Nncf).ok());
}

TEST(CalibrationStatistics, Percentiles) {
    // One sample 0..100: the 99th percentile is 99, the 1st is 1 (linear interpolation).
    std::vector<float> ramp(101);
    for (size_t i = 0; i < ramp.size(); ++i) {
        ramp[i] = static_cast<float>(100 - i);
    }
    TensorStatistics stats;
    ASSERT_TRUE(stats
                    .addBatch(Tensor::fromVector<float>({1, 101}, ramp),
                              {.percentiles = true, .percentile = 99.0})
                    .ok());
    auto range = activationRange(stats, config(8, false, false, QuantizationMode::Asymmetric),
                                 RangeEstimator::Percentile);
    ASSERT_TRUE(range.ok());
    EXPECT_FLOAT_EQ(range->min[0], 1.0F);
    EXPECT_FLOAT_EQ(range->max[0], 99.0F);
}

TEST(CalibrationStatistics, WeightRangePerOutputChannel) {
    // [2, 3] weight, output channels on axis 1: columns {1,-4}, {-2,5}, {3,0}.
    const std::vector<float> w = {1, -2, 3, -4, 5, 0};
    const auto data = graph::TensorData::fromValues<float>(DataType::Float, {2, 3}, std::span(w));
    auto range = weightRange(*data, config(8, true), 1);
    ASSERT_TRUE(range.ok());
    EXPECT_EQ(range->min, (std::vector<float>{-4.0F, -2.0F, 0.0F}));
    EXPECT_EQ(range->max, (std::vector<float>{4.0F, 5.0F, 3.0F}));
    auto perTensor = weightRange(*data, config(8), std::nullopt);
    ASSERT_TRUE(perTensor.ok());
    EXPECT_EQ(perTensor->max, (std::vector<float>{5.0F}));
}

TEST(FakeQuantize, RoundsHalfToEvenAndClipsToTheGrid) {
    QuantizerParameters p;
    p.quantMin = -8;
    p.quantMax = 7;
    p.scale = {0.5F};
    p.zeroPoint = {0};
    std::vector<float> x = {0.26F, -0.25F, 10.0F, -10.0F, 0.75F};
    const std::vector<int64_t> shape = {5};
    ASSERT_TRUE(fakeQuantize(x, shape, p).ok());
    EXPECT_EQ(x, (std::vector<float>{0.5F, 0.0F, 3.5F, -4.0F, 1.0F}));
    // Per channel along axis 1 of [1, 2], zero point 2 on channel 1: 1.0 -> round(1)+2 = 3 -> 1.
    p.channelAxis = 1;
    p.quantMin = 0;
    p.quantMax = 3;
    p.scale = {1.0F, 1.0F};
    p.zeroPoint = {0, 2};
    std::vector<float> y = {5.0F, -5.0F};
    const std::vector<int64_t> shape2 = {1, 2};
    ASSERT_TRUE(fakeQuantize(y, shape2, p).ok());
    EXPECT_EQ(y, (std::vector<float>{3.0F, -2.0F}));
}

/// x [1, 2, 3] -> Relu -> t; t feeds Identity a, b and c (all graph outputs).
Graph fanOutGraph() {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({1, 2, 3}));
    const ValueId t = g.addValue("t", DataType::Float, TensorShape::ofDims({1, 2, 3}));
    g.addInput(x);
    g.addNode("relu", "Relu", {x}, {t});
    for (const char* name : {"a", "b", "c"}) {
        const ValueId y =
            g.addValue(std::string("y_") + name, DataType::Float, TensorShape::ofDims({1, 2, 3}));
        g.addNode(name, "Identity", {t}, {y});
        g.addOutput(y);
    }
    return g;
}

SingleConfigQuantizationPoint activationPoint(const std::string& node, std::optional<int> port,
                                              const QuantizerConfig& c) {
    SingleConfigQuantizationPoint p;
    p.insertionPoint.targetNodeName = node;
    p.insertionPoint.inputPortId = port;
    p.qconfig = c;
    return p;
}

Result<std::vector<Tensor>> runRewritten(const Graph& model,
                                         const SingleConfigQuantizerSetup& setup,
                                         const QuantizerParametersMap& parameters,
                                         const Tensor& x) {
    QS_ASSIGN_OR_RETURN(FakeQuantizedModel fq, insertFakeQuantizers(model, setup, parameters));
    QS_ASSIGN_OR_RETURN(runtime::Executor exec, runtime::Executor::create(std::move(fq.graph)));
    return exec.run(std::span(&x, 1));
}

TEST(FakeQuantizeGraph, PreHookChangesOnlyItsOwnEdge) {
    const Graph model = fanOutGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("a", 0, config(8));
    setup.quantizationPoints[2] = activationPoint("b", 0, config(4, true, true));
    QuantizerParametersMap parameters;
    parameters[1] = params(config(8), {0.0F}, {2.55F});                        // scale 0.01, 0..255
    parameters[2] = params(config(4, true, true), {0.0F, 0.0F}, {1.4F, 2.8F}); // 0..14 narrow
    const Tensor x = Tensor::fromVector<float>({1, 2, 3}, {0.123F, -1.0F, 3.0F, 0.7F, 1.33F, 2.9F});
    auto out = runRewritten(model, setup, parameters, x);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    const std::vector<float> t = {0.123F, 0.0F, 3.0F, 0.7F, 1.33F, 2.9F};
    std::vector<float> expectA = t;
    std::vector<float> expectB = t;
    const std::vector<int64_t> shape = {1, 2, 3};
    ASSERT_TRUE(fakeQuantize(expectA, shape, parameters[1]).ok());
    ASSERT_TRUE(fakeQuantize(expectB, shape, parameters[2]).ok());
    // Hand check of the oracle: 0.123 -> 0.12, 3.0 clips to 2.55; channel 1 of b has scale 0.2.
    EXPECT_NEAR(expectA[0], 0.12F, 1e-6F);
    EXPECT_NEAR(expectA[2], 2.55F, 1e-6F);
    EXPECT_NEAR(expectB[4], 1.4F, 1e-6F);
    EXPECT_NEAR(expectB[5], 2.8F, 1e-6F);
    EXPECT_EQ(valuesOf((*out)[0]), expectA);
    EXPECT_EQ(valuesOf((*out)[1]), expectB);
    EXPECT_EQ(valuesOf((*out)[2]), t); // consumer c still sees the float tensor
}

TEST(FakeQuantizeGraph, PostHookAndRequantizerChain) {
    const Graph model = fanOutGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("relu", std::nullopt, config(8));
    setup.quantizationPoints[2] = activationPoint("b", 0, config(4));
    QuantizerParametersMap parameters;
    parameters[1] = params(config(8), {0.0F}, {2.55F});
    parameters[2] = params(config(4), {0.0F}, {1.5F}); // scale 0.1, 0..15
    const Tensor x = Tensor::fromVector<float>({1, 2, 3}, {0.123F, -1.0F, 3.0F, 0.7F, 1.33F, 2.9F});
    auto out = runRewritten(model, setup, parameters, x);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    std::vector<float> post = {0.123F, 0.0F, 3.0F, 0.7F, 1.33F, 2.9F};
    const std::vector<int64_t> shape = {1, 2, 3};
    ASSERT_TRUE(fakeQuantize(post, shape, parameters[1]).ok());
    std::vector<float> requantized = post;
    ASSERT_TRUE(fakeQuantize(requantized, shape, parameters[2]).ok());
    EXPECT_EQ(valuesOf((*out)[0]), post);
    EXPECT_EQ(valuesOf((*out)[1]), requantized);
    EXPECT_EQ(valuesOf((*out)[2]), post);
}

/// Two MatMuls sharing one [2, 2] weight: x [1, 2] -> mm1 -> y_mm1, x -> mm2 -> y_mm2.
Graph sharedWeightGraph() {
    Graph g;
    const ValueId x = g.addValue("x", DataType::Float, TensorShape::ofDims({1, 2}));
    const std::vector<float> w = {0.33F, -1.0F, 0.5F, 0.07F};
    const ValueId weight = g.addInitializer(
        "w", graph::TensorData::fromValues<float>(DataType::Float, {2, 2}, std::span(w)));
    g.addInput(x);
    for (const char* name : {"mm1", "mm2"}) {
        const ValueId y = g.addValue(std::string("y_") + name, DataType::Float);
        g.addNode(name, "MatMul", {x, weight}, {y});
        g.addOutput(y);
    }
    return g;
}

TEST(FakeQuantizeGraph, WeightQuantizerGetsItsOwnCopy) {
    // Only mm1 has a weight quantizer.
    const Graph g = sharedWeightGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[3].insertionPoint = {true, "mm1", std::nullopt};
    setup.quantizationPoints[3].qconfig = config(4, true, true);
    const Tensor input = Tensor::fromVector<float>({1, 2}, {1.0F, 0.0F});
    auto parameters = calibrate(g, setup, datasetOf(input), {}, noProgress());
    ASSERT_TRUE(parameters.ok()) << parameters.error().toString();
    const QuantizerParameters& p = parameters->at(3);
    EXPECT_EQ(p.channelAxis, 1); // MatMul weight: output channels on its last axis
    // Column maxima |.| = {0.5, 1.0}; narrow 4-bit: scale = hi / 7.
    EXPECT_NEAR(p.scale[0], 0.5F / 7.0F, 1e-7F);
    EXPECT_NEAR(p.scale[1], 1.0F / 7.0F, 1e-7F);
    auto out = runRewritten(g, setup, *parameters, input);
    ASSERT_TRUE(out.ok()) << out.error().toString();
    // x = [1, 0] picks row 0 of the weight: 0.33 -> round(4.62)=5 * 0.5/7; -1.0 stays.
    EXPECT_NEAR((*out)[0].data<float>()[0], 5.0F * 0.5F / 7.0F, 1e-6F);
    EXPECT_NEAR((*out)[0].data<float>()[1], -1.0F, 1e-6F);
    EXPECT_EQ(valuesOf((*out)[1]), (std::vector<float>{0.33F, -1.0F}));
}

/// x [N, 2] -> Relu -> p (graph output 0); x -> Neg -> Relu -> n (graph output 1).
Graph twoBranchGraph() {
    Graph g;
    TensorShape batched = TensorShape::ofDims({1, 2});
    batched.dims[0] = graph::Dim::symbolic("N");
    const ValueId x = g.addValue("x", DataType::Float, batched);
    const ValueId p = g.addValue("p", DataType::Float, TensorShape::ofDims({1, 2}));
    const ValueId m = g.addValue("m", DataType::Float, TensorShape::ofDims({1, 2}));
    const ValueId n = g.addValue("n", DataType::Float, TensorShape::ofDims({1, 2}));
    g.addInput(x);
    g.addNode("relu_p", "Relu", {x}, {p});
    g.addNode("neg", "Neg", {x}, {m});
    g.addNode("relu_n", "Relu", {m}, {n});
    g.addOutput(p);
    g.addOutput(n);
    return g;
}

TEST(Calibrate, UnifiedGroupSharesTheRangeAndNncfUsesMeans) {
    const Graph model = twoBranchGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("relu_p", std::nullopt, config(8));
    setup.quantizationPoints[2] = activationPoint("relu_n", std::nullopt, config(8));
    // Samples [2, -1] and [4, -3]: p has per-sample max 2, 4 (mean 3); n has 1, 3 (mean 2).
    const Tensor data = Tensor::fromVector<float>({2, 2}, {2.0F, -1.0F, 4.0F, -3.0F});
    auto separate = calibrate(model, setup, datasetOf(data), {}, noProgress());
    ASSERT_TRUE(separate.ok()) << separate.error().toString();
    EXPECT_FLOAT_EQ(separate->at(1).inputHigh[0], 3.0F);
    EXPECT_FLOAT_EQ(separate->at(2).inputHigh[0], 2.0F);
    EXPECT_FALSE(separate->at(1).isSigned); // Relu outputs: min 0 -> unsigned grid
    setup.unifiedScaleGroups[0] = {1, 2};
    auto unified = calibrate(model, setup, datasetOf(data, 2), {}, noProgress());
    ASSERT_TRUE(unified.ok()) << unified.error().toString();
    EXPECT_FLOAT_EQ(unified->at(1).inputHigh[0], 3.0F);
    EXPECT_FLOAT_EQ(unified->at(2).inputHigh[0], 3.0F);
    EXPECT_FLOAT_EQ(unified->at(2).scale[0], 3.0F / 255.0F);
    // Global min/max instead of means.
    auto minmax = calibrate(model, setup, datasetOf(data), {.estimator = RangeEstimator::MinMax},
                            noProgress());
    ASSERT_TRUE(minmax.ok());
    EXPECT_FLOAT_EQ(minmax->at(2).inputHigh[0], 4.0F);
}

TEST(Calibrate, ReportsBadSetups) {
    const Graph model = twoBranchGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("nope", std::nullopt, config(8));
    const Tensor data = Tensor::fromVector<float>({1, 2}, {1.0F, 2.0F});
    auto result = calibrate(model, setup, datasetOf(data), {}, noProgress());
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().toString().find("no node 'nope'"), std::string::npos);
    setup.quantizationPoints[1] = activationPoint("relu_p", 3, config(8));
    EXPECT_FALSE(calibrate(model, setup, datasetOf(data), {}, noProgress()).ok());
}

/// Cancels after `allowed` progress reports.
class CancelAfter final : public Progress {
public:
    explicit CancelAfter(int allowed)
        : m_allowed(allowed) {}

    void report(double, std::string_view) override { ++m_reports; }

    bool isCancelled() const override { return m_reports >= m_allowed; }

    int reports() const { return m_reports; }

private:
    int m_allowed;
    int m_reports = 0;
};

TEST(Calibrate, ReportsProgressPerBatchAndStopsOnCancel) {
    const Graph model = twoBranchGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("relu_p", std::nullopt, config(8));
    const Tensor data = Tensor::fromVector<float>({3, 2}, {1.0F, 2.0F, 3.0F, 4.0F, 5.0F, 6.0F});
    CancelAfter never(100);
    ASSERT_TRUE(calibrate(model, setup, datasetOf(data), {}, never).ok());
    EXPECT_EQ(never.reports(), 4); // batch size 1: one report per sample, one at the end
    CancelAfter early(1);
    auto cancelled = calibrate(model, setup, datasetOf(data), {}, early);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code(), Errc::Cancelled);
    EXPECT_EQ(early.reports(), 1);
    QuantizerParametersMap parameters;
    parameters[1] = params(config(8), {0.0F}, {1.0F});
    CancelAfter simulationCancel(2);
    auto simulation =
        simulateQuantization(model, setup, parameters, datasetOf(data), simulationCancel);
    ASSERT_FALSE(simulation.ok());
    EXPECT_EQ(simulation.error().code(), Errc::Cancelled);
}

TEST(Simulate, ReportsSqnrAndOutputMetrics) {
    const Graph model = twoBranchGraph();
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1] = activationPoint("relu_p", std::nullopt, config(8));
    setup.quantizationPoints[2] = activationPoint("relu_n", std::nullopt, config(2));
    QuantizerParametersMap parameters;
    parameters[1] = params(config(8), {0.0F}, {2.55F}); // scale 0.01: 1.0 and 2.0 are exact
    parameters[2] = params(config(2), {0.0F}, {3.0F});  // scale 1, grid 0..3
    // Sample 0: p = [1, 0], n = [0, 0.4]; sample 1: p = [0, 2], n = [1.6, 0].
    const Tensor data = Tensor::fromVector<float>({2, 2}, {1.0F, -0.4F, -1.6F, 2.0F});
    auto report = simulateQuantization(model, setup, parameters, datasetOf(data), noProgress());
    ASSERT_TRUE(report.ok()) << report.error().toString();
    EXPECT_EQ(report->samples, 2);
    EXPECT_TRUE(std::isinf(report->quantizers.at(1).sqnrDb));
    // n quantized: [0, 0] and [2, 0]; signal 0.16 + 2.56, noise 0.16 + 0.16.
    const double expected = 10.0 * std::log10(2.72 / 0.32);
    EXPECT_NEAR(report->quantizers.at(2).sqnrDb, expected, 1e-4);
    EXPECT_NEAR(report->quantizers.at(2).localSqnrDb, expected, 1e-4);
    ASSERT_EQ(report->outputs.size(), 2U);
    EXPECT_DOUBLE_EQ(report->outputs[0].meanCosine, 1.0);
    EXPECT_DOUBLE_EQ(report->outputs[0].top1Agreement.value(), 1.0);
    // Output n: sample 0 is all zero after quantization (cosine 0), sample 1 is parallel (1).
    EXPECT_NEAR(report->outputs[1].meanCosine, 0.5, 1e-9);
    EXPECT_NEAR(report->outputs[1].minCosine, 0.0, 1e-9);
    EXPECT_NEAR(report->outputs[1].maxAbsError, 0.4, 1e-6);
    EXPECT_DOUBLE_EQ(report->outputs[1].top1Agreement.value(), 0.5);
}

} // namespace
} // namespace qs::quantization
