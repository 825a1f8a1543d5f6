// The LFH Hutchinson estimator: exact in expectation (checked against ||J||_F^2 from one backward
// per output unit), granularities that add up, batched results equal to batch-1 ones, and the
// output rules (Softmax differentiated at its input, ArgMax refused, a target that is Y refused).

#include "core/hessian/hessian_service.h"
#include "hessian_test_models.h"

#include <gtest/gtest.h>

#include <cmath>

namespace qs::hessian {
namespace {

using testing::exactFrobenius;
using testing::randomInputs;
using testing::sampleOf;

struct Fixture {
    runtime::Executor executor;
    runtime::Tensor x;
};

Fixture makeFixture(graph::Graph graph, int64_t samples, uint64_t seed = 3) {
    runtime::Tensor x = randomInputs(graph, samples, seed);
    return {runtime::Executor::create(std::move(graph)).value(), x};
}

HessianScores fetch(const Fixture& f, HessianScoresRequest request, uint64_t seed = 11,
                    int64_t sourceBatch = 4) {
    TensorBatchSource source({f.x}, sourceBatch);
    HessianService service(f.executor, source, seed);
    NullProgress progress;
    auto scores = service.fetch(request, progress);
    EXPECT_TRUE(scores.ok()) << scores.error().toString();
    return scores.ok() ? *scores : HessianScores{};
}

/// The Hutchinson mean after 2,000 iterations is within 3 % of ||J||_F^2 for every sample and
/// target; the exact value is one backward per output element.
void expectConverges(graph::Graph graph, HessianMode mode, const std::vector<std::string>& nodes,
                     const std::vector<std::string>& tensors) {
    const Fixture f = makeFixture(std::move(graph), 2);
    HessianScoresRequest request;
    request.mode = mode;
    request.targetNodes = nodes;
    request.samples = 2;
    request.batch = 2;
    request.iterations = 2000;
    const HessianScores scores = fetch(f, request);
    ASSERT_EQ(scores.targets.size(), nodes.size());
    for (size_t t = 0; t < nodes.size(); ++t) {
        for (int64_t s = 0; s < 2; ++s) {
            const double exact = exactFrobenius(f.executor, sampleOf(f.x, s), tensors[t]);
            const double estimate = scores.targets[t].perSample[static_cast<size_t>(s)][0];
            ASSERT_GT(exact, 0.0) << nodes[t];
            EXPECT_NEAR(estimate / exact, 1.0, 0.03) << nodes[t] << " sample " << s;
        }
    }
}

TEST(HessianEstimator, LinearLayerConvergesToTheFrobeniusNorm) {
    expectConverges(testing::linearModel(), HessianMode::Activation, {"fc1"}, {"fc1_output_0"});
    expectConverges(testing::linearModel(), HessianMode::Weights, {"fc1", "fc2"}, {"w1", "w2"});
}

TEST(HessianEstimator, LinearLayerMatchesTheClosedForm) {
    // Y = (x W1 + b1) W2^T + b2: dY/dh = W2 for every sample, so ||J||_F^2 = ||W2||_F^2.
    const Fixture f = makeFixture(testing::linearModel(), 1);
    const graph::Value& w2 = f.executor.graph().value(*f.executor.graph().findValue("w2"));
    const runtime::Tensor w = runtime::Tensor::wrap(w2.initializer);
    double norm = 0.0;
    for (int64_t i = 0; i < w.numElements(); ++i) {
        norm += static_cast<double>(w.data<float>()[i]) * w.data<float>()[i];
    }
    EXPECT_NEAR(exactFrobenius(f.executor, f.x, "fc1_output_0"), norm, 1e-4 * norm);
}

TEST(HessianEstimator, ConvReluGemmConverges) {
    expectConverges(testing::convReluGemm(), HessianMode::Activation, {"conv"}, {"conv_output_0"});
    expectConverges(testing::convReluGemm(), HessianMode::Weights, {"conv", "fc"}, {"wc", "wf"});
}

TEST(HessianEstimator, ResidualBlockConverges) {
    expectConverges(testing::residualBlock(), HessianMode::Activation, {"conv1", "conv2"},
                    {"conv1_output_0", "conv2_output_0"});
    expectConverges(testing::residualBlock(), HessianMode::Weights, {"conv1", "conv2", "mm"},
                    {"w1", "w2", "wm"});
}

/// Per-channel scores add up to the per-tensor one, and per-element ones to both (same draws).
void expectGranularitiesAddUp(graph::Graph graph, HessianMode mode,
                              const std::vector<std::string>& nodes) {
    const Fixture f = makeFixture(std::move(graph), 3);
    HessianScoresRequest request;
    request.mode = mode;
    request.targetNodes = nodes;
    request.samples = 3;
    request.batch = 3;
    request.iterations = 7;
    request.granularity = HessianScoresGranularity::PerTensor;
    const HessianScores tensor = fetch(f, request);
    request.granularity = HessianScoresGranularity::PerOutputChannel;
    const HessianScores channel = fetch(f, request);
    request.granularity = HessianScoresGranularity::PerElement;
    const HessianScores element = fetch(f, request);
    for (size_t t = 0; t < nodes.size(); ++t) {
        for (size_t s = 0; s < 3; ++s) {
            const double total = tensor.targets[t].perSample[s][0];
            double channels = 0.0;
            for (const double v : channel.targets[t].perSample[s]) {
                channels += v;
            }
            double elements = 0.0;
            for (const double v : element.targets[t].perSample[s]) {
                elements += v;
            }
            EXPECT_GT(channel.targets[t].perSample[s].size(), 1U) << nodes[t];
            EXPECT_NEAR(channels, total, 1e-9 * total) << nodes[t];
            EXPECT_NEAR(elements, total, 1e-9 * total) << nodes[t];
            EXPECT_EQ(static_cast<int64_t>(element.targets[t].perSample[s].size()),
                      element.targets[t].numel());
        }
    }
}

TEST(HessianEstimator, PerChannelScoresAddUpToPerTensor) {
    expectGranularitiesAddUp(testing::convReluGemm(), HessianMode::Activation, {"conv"});
    expectGranularitiesAddUp(testing::residualBlock(), HessianMode::Activation, {"conv1", "conv2"});
    expectGranularitiesAddUp(testing::convReluGemm(), HessianMode::Weights, {"conv", "fc"});
    expectGranularitiesAddUp(testing::residualBlock(), HessianMode::Weights, {"conv2", "mm"});
}

TEST(HessianEstimator, ChannelAxisFollowsTheConventions) {
    const Fixture f = makeFixture(testing::residualBlock(), 1);
    HessianScoresRequest request;
    request.mode = HessianMode::Weights;
    request.granularity = HessianScoresGranularity::PerOutputChannel;
    request.targetNodes = {"conv1", "mm"};
    request.samples = 1;
    request.batch = 1;
    request.iterations = 2;
    const HessianScores scores = fetch(f, request);
    EXPECT_EQ(scores.targets[0].perSample[0].size(), 3U); // Conv W [3, 3, 3, 3]: axis 0
    EXPECT_EQ(scores.targets[1].perSample[0].size(), 4U); // MatMul B [3, 4]: the last axis
}

/// Batch B gives each sample the scores of a batch-1 run with the same draws (1e-5 relative).
void expectBatchedEqualsBatchOne(graph::Graph graph, HessianMode mode,
                                 const std::vector<std::string>& nodes,
                                 HessianScoresGranularity granularity) {
    const Fixture f = makeFixture(std::move(graph), 5);
    HessianScoresRequest request;
    request.mode = mode;
    request.granularity = granularity;
    request.targetNodes = nodes;
    request.samples = 5;
    request.iterations = 5;
    request.batch = 5;
    const HessianScores batched = fetch(f, request);
    request.batch = 1;
    const HessianScores single = fetch(f, request);
    ASSERT_EQ(batched.targets.size(), nodes.size());
    for (size_t t = 0; t < nodes.size(); ++t) {
        for (size_t s = 0; s < 5; ++s) {
            const std::vector<double>& a = batched.targets[t].perSample[s];
            const std::vector<double>& b = single.targets[t].perSample[s];
            ASSERT_EQ(a.size(), b.size());
            for (size_t i = 0; i < a.size(); ++i) {
                EXPECT_NEAR(a[i], b[i], 1e-5 * std::max(std::abs(b[i]), 1e-12))
                    << nodes[t] << " sample " << s << " value " << i;
            }
        }
    }
}

TEST(HessianEstimator, WeightsModeBatchedEqualsBatchOne) {
    expectBatchedEqualsBatchOne(testing::convReluGemm(), HessianMode::Weights, {"conv", "fc"},
                                HessianScoresGranularity::PerElement);
    expectBatchedEqualsBatchOne(testing::residualBlock(), HessianMode::Weights,
                                {"conv1", "conv2", "mm"},
                                HessianScoresGranularity::PerOutputChannel);
    expectBatchedEqualsBatchOne(testing::linearModel(), HessianMode::Weights, {"fc1", "fc2"},
                                HessianScoresGranularity::PerTensor);
}

TEST(HessianEstimator, ActivationModeBatchedEqualsBatchOne) {
    expectBatchedEqualsBatchOne(testing::residualBlock(), HessianMode::Activation,
                                {"conv1", "conv2", "mm"},
                                HessianScoresGranularity::PerOutputChannel);
}

TEST(HessianEstimator, SoftmaxOutputIsDifferentiatedAtItsInput) {
    const Fixture withSoftmax = makeFixture(testing::linearWithSoftmax(false), 2);
    const Fixture plain = makeFixture(testing::linearModel(), 2);
    HessianScoresRequest request;
    request.targetNodes = {"fc1"};
    request.samples = 2;
    request.batch = 2;
    request.iterations = 4;
    const HessianScores a = fetch(withSoftmax, request);
    const HessianScores b = fetch(plain, request);
    ASSERT_EQ(a.notes.size(), 1U);
    EXPECT_NE(a.notes[0].find("Softmax node 'softmax'"), std::string::npos) << a.notes[0];
    EXPECT_EQ(a.outputs, std::vector<std::string>{"fc2_output_0"});
    EXPECT_EQ(a.targets[0].perSample, b.targets[0].perSample);
    // The logits producer is then Y itself: left out of the default targets, refused by name.
    request.targetNodes = {};
    const HessianScores defaults = fetch(withSoftmax, request);
    ASSERT_EQ(defaults.targets.size(), 1U);
    EXPECT_EQ(defaults.targets[0].node, "fc1");
    TensorBatchSource source({withSoftmax.x}, 2);
    HessianService service(withSoftmax.executor, source);
    NullProgress progress;
    request.targetNodes = {"fc2"};
    auto refused = service.fetch(request, progress);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("target node 'fc2'"), std::string::npos)
        << refused.error().toString();
}

TEST(HessianEstimator, ArgMaxOutputIsRefusedWithTheNodeName) {
    // Refused while resolving Y, before anything runs (the executor has no ArgMax kernel).
    const graph::Graph graph = testing::linearWithSoftmax(true);
    auto refused = resolveOutputs(graph, {});
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("ArgMax node 'argmax'"), std::string::npos)
        << refused.error().toString();
    // Choosing the differentiable output works: the Softmax's input.
    auto chosen = resolveOutputs(graph, {"softmax_output_0"});
    ASSERT_TRUE(chosen.ok()) << chosen.error().toString();
    EXPECT_EQ(chosen->names, std::vector<std::string>{"fc2_output_0"});
    EXPECT_EQ(chosen->notes.size(), 1U);
}

TEST(HessianEstimator, TargetThatIsAGraphOutputIsRefused) {
    const Fixture f = makeFixture(testing::linearModel(), 1);
    TensorBatchSource source({f.x}, 1);
    HessianService service(f.executor, source);
    NullProgress progress;
    HessianScoresRequest request;
    request.samples = 1;
    request.batch = 1;
    request.targetNodes = {"fc2"};
    auto refused = service.fetch(request, progress);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("target node 'fc2'"), std::string::npos);
    request.targetNodes = {"relu_nowhere"};
    auto unknown = service.fetch(request, progress);
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().toString().find("relu_nowhere"), std::string::npos);
}

} // namespace
} // namespace qs::hessian
