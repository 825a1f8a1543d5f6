// HessianService: re-batching without dropping or reusing samples, the per-sample cache (counted
// in sweeps), the not-enough-samples error, cancel, early stop, shards and SCORES.json.

#include "core/hessian/hessian_service.h"
#include "core/report/hessian_report.h"
#include "core/runtime/batching.h"
#include "hessian_test_models.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace qs::hessian {
namespace {

using testing::randomInputs;

HessianScoresRequest request(std::vector<std::string> nodes, int64_t samples, int64_t batch,
                             int iterations = 3) {
    HessianScoresRequest r;
    r.targetNodes = std::move(nodes);
    r.samples = samples;
    r.batch = batch;
    r.iterations = iterations;
    r.granularity = HessianScoresGranularity::PerOutputChannel;
    return r;
}

/// Equal within `relative` (batch sizes change the GEMM shapes, so the last bits may differ).
void expectClose(const std::vector<std::vector<double>>& a,
                 const std::vector<std::vector<double>>& b, double relative = 1e-6) {
    ASSERT_EQ(a.size(), b.size());
    for (size_t s = 0; s < a.size(); ++s) {
        ASSERT_EQ(a[s].size(), b[s].size());
        for (size_t i = 0; i < a[s].size(); ++i) {
            EXPECT_NEAR(a[s][i], b[s][i], relative * std::max(std::abs(b[s][i]), 1e-12))
                << "sample " << s << " value " << i;
        }
    }
}

struct Service {
    runtime::Executor executor;
    runtime::Tensor x;
    TensorBatchSource source;
    HessianService service;

    Service(graph::Graph graph, int64_t samples, int64_t sourceBatch)
        : executor(runtime::Executor::create(std::move(graph)).value())
        , x(randomInputs(executor.graph(), samples, 5))
        , source({x}, sourceBatch)
        , service(executor, source, 17) {}

    Result<HessianScores> fetch(const HessianScoresRequest& r) {
        NullProgress progress;
        return service.fetch(r, progress);
    }
};

TEST(HessianService, RebatchesWithoutDroppingOrReusingSamples) {
    // Dataset batches of 5, Hessian batches of 3, 7 samples: batches {0,1,2} {3,4 | 5} {6}.
    Service s(testing::residualBlock(), 9, 5);
    auto scores = s.fetch(request({"conv1", "conv2"}, 7, 3));
    ASSERT_TRUE(scores.ok()) << scores.error().toString();
    EXPECT_EQ(s.service.stats().samplesComputed, 7);
    EXPECT_EQ(s.service.stats().forwardPasses, 3);
    // The samples axis is judged on the first Hessian batch: the source is streamed once, not
    // past sample 6.
    EXPECT_EQ(s.source.batchesRead(), 2);
    ASSERT_EQ(scores->sampleIndices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
    // Each sample's scores are its own: those of a batch-1 service fed sample i alone.
    for (int64_t i = 0; i < 7; ++i) {
        HessianScoresRequest r = request({"conv1", "conv2"}, 1, 1);
        NullProgress progress;
        // Sample i's draws depend on its index: ask for index i of a source padded in front.
        std::vector<runtime::Tensor> padded = {runtime::sliceBatch(s.x, 0, i + 1)};
        TensorBatchSource prefix(padded, 1);
        HessianService indexed(s.executor, prefix, 17);
        r.firstSample = i;
        auto expected = indexed.fetch(r, progress);
        ASSERT_TRUE(expected.ok()) << expected.error().toString();
        for (size_t t = 0; t < 2; ++t) {
            expectClose({scores->targets[t].perSample[static_cast<size_t>(i)]},
                        expected->targets[t].perSample);
        }
    }
}

TEST(HessianService, TheBatchSymbolOnTheSampleAxisNeedsNoTracedForward) {
    // Shapes as import-time inference leaves them: the conv outputs carry the input's "batch" on
    // axis 0, so no forward is run to judge them, and the scores are those of a traced check.
    // (Another symbol or a number there is refused from the graph alone: lfh_estimator's
    // notBatchFirst.)
    const auto withShape = [](graph::Graph graph, const std::string& node,
                              std::vector<graph::Dim> dims) {
        graph::Value& out = graph.value(graph.node(*graph.findNode(node)).outputs[0]);
        out.shape.rankKnown = true;
        out.shape.dims = std::move(dims);
        return graph;
    };
    const auto batchFirst = [] {
        return std::vector<graph::Dim>{graph::Dim::symbolic("batch"), graph::Dim::known(3),
                                       graph::Dim::known(6), graph::Dim::known(6)};
    };
    Service symbolic(withShape(withShape(testing::residualBlock(), "conv1", batchFirst()), "conv2",
                               batchFirst()),
                     4, 4);
    auto scores = symbolic.fetch(request({"conv1", "conv2"}, 4, 2));
    ASSERT_TRUE(scores.ok()) << scores.error().toString();
    EXPECT_EQ(symbolic.service.stats().sampleAxisForwards, 0);
    Service traced(testing::residualBlock(), 4, 4);
    auto same = traced.fetch(request({"conv1", "conv2"}, 4, 2));
    ASSERT_TRUE(same.ok()) << same.error().toString();
    EXPECT_EQ(traced.service.stats().sampleAxisForwards, 1);
    for (size_t t = 0; t < 2; ++t) {
        EXPECT_EQ(scores->targets[t].perSample, same->targets[t].perSample);
    }
}

TEST(HessianService, JudgesTheSamplesAxisOnTheFirstBatchAndRemembersTheVerdict) {
    Service s(testing::sequenceFirst(), 4, 4);
    HessianScoresRequest defaults = request({}, 4, 2);
    auto scores = s.fetch(defaults);
    ASSERT_TRUE(scores.ok()) << scores.error().toString();
    ASSERT_EQ(scores->targets.size(), 1U);
    EXPECT_EQ(scores->targets[0].node, "mm_out");
    const auto leftOut = [](const HessianScores& r) {
        return std::count_if(r.notes.begin(), r.notes.end(), [](const std::string& note) {
            return note.find("node 'mm_seq' is left out: the samples are not on axis 0") !=
                   std::string::npos;
        });
    };
    EXPECT_EQ(leftOut(*scores), 1);
    EXPECT_EQ(s.source.batchesRead(), 1); // no probe of its own: streamed once
    EXPECT_EQ(s.service.stats().forwardPasses, 2);
    // Asked again: the verdict is remembered and nothing is computed.
    auto again = s.fetch(defaults);
    ASSERT_TRUE(again.ok()) << again.error().toString();
    EXPECT_EQ(leftOut(*again), 1);
    EXPECT_EQ(s.service.stats().sweeps, 2 * 3);
    // Named, it is refused, whether judged before or not.
    auto named = s.fetch(request({"mm_seq"}, 4, 2));
    ASSERT_FALSE(named.ok());
    EXPECT_NE(named.error().toString().find("cannot be split per sample"), std::string::npos);
    EXPECT_NE(named.error().toString().find("mm_seq"), std::string::npos);
    for (const int64_t batch : {2, 1}) {
        Service fresh(testing::sequenceFirst(), 4, 4);
        auto refused = fresh.fetch(request({"mm_out", "mm_seq"}, 4, batch));
        ASSERT_FALSE(refused.ok()) << "batch " << batch;
        EXPECT_NE(refused.error().toString().find("'mm_seq'"), std::string::npos);
        EXPECT_EQ(fresh.service.stats().sweeps, 0) << "batch " << batch;
    }
    // mm_out cached by name, then the defaults: mm_seq alone makes every sample wanted, the
    // first batch drops it, and nothing is left to compute.
    Service cached(testing::sequenceFirst(), 4, 4);
    ASSERT_TRUE(cached.fetch(request({"mm_out"}, 4, 2)).ok());
    const HessianServiceStats before = cached.service.stats();
    auto rest = cached.fetch(defaults);
    ASSERT_TRUE(rest.ok()) << rest.error().toString();
    EXPECT_EQ(leftOut(*rest), 1);
    ASSERT_EQ(rest->targets.size(), 1U);
    EXPECT_EQ(cached.service.stats().sweeps, before.sweeps);
    EXPECT_EQ(cached.service.stats().forwardPasses, before.forwardPasses);
    EXPECT_EQ(rest->targets[0].perSample, scores->targets[0].perSample);
    // Batch 1 cannot tell on its own batch: 1 and 2 samples are traced first, with the same
    // verdict.
    Service single(testing::sequenceFirst(), 4, 4);
    auto one = single.fetch(request({}, 4, 1));
    ASSERT_TRUE(one.ok()) << one.error().toString();
    EXPECT_EQ(leftOut(*one), 1);
    ASSERT_EQ(one->targets.size(), 1U);
    expectClose(one->targets[0].perSample, scores->targets[0].perSample);
}

TEST(HessianService, CachesPerSampleAndComputesOnlyWhatIsMissing) {
    Service s(testing::residualBlock(), 6, 2);
    ASSERT_TRUE(s.fetch(request({"conv1", "conv2"}, 4, 2)).ok());
    EXPECT_EQ(s.service.stats().sweeps, 2 * 3); // 2 batches x 3 iterations
    EXPECT_EQ(s.service.stats().targetScoresComputed, 2 * 4);
    // The same targets again: nothing to compute.
    auto again = s.fetch(request({"conv2", "conv1"}, 4, 2));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(s.service.stats().sweeps, 6);
    EXPECT_EQ(again->targets[0].node, "conv2");
    // Overlapping targets and more samples: conv2 only on samples 0..3, both on 4..5, in one
    // sweep per batch and iteration.
    auto overlap = s.fetch(request({"conv2", "mm"}, 6, 2));
    ASSERT_TRUE(overlap.ok()) << overlap.error().toString();
    EXPECT_EQ(s.service.stats().sweeps, 6 + 3 * 3);
    EXPECT_EQ(s.service.stats().targetScoresComputed, 8 + 6 + 2);
    EXPECT_EQ(overlap->targets[0].perSample[0], again->targets[0].perSample[0]);
    // Another granularity is another cache entry.
    HessianScoresRequest tensor = request({"conv1"}, 2, 2);
    tensor.granularity = HessianScoresGranularity::PerTensor;
    ASSERT_TRUE(s.fetch(tensor).ok());
    EXPECT_EQ(s.service.stats().sweeps, 15 + 3);
}

TEST(HessianService, NotEnoughSamplesNamesBothCounts) {
    Service s(testing::linearModel(), 5, 2);
    auto scores = s.fetch(request({"fc1"}, 8, 4));
    ASSERT_FALSE(scores.ok());
    EXPECT_NE(scores.error().toString().find("holds 5"), std::string::npos)
        << scores.error().toString();
    EXPECT_NE(scores.error().toString().find("needs 8"), std::string::npos);
    EXPECT_EQ(s.service.stats().sweeps, 0);
}

/// A source that does not know its size runs out while streaming: the same error.
class UnsizedSource final : public SampleBatchSource {
public:
    explicit UnsizedSource(runtime::Tensor x)
        : m_inner({std::move(x)}, 2) {}

    std::optional<int64_t> size() const override { return std::nullopt; }

    Result<void> rewind() override { return m_inner.rewind(); }

    Result<std::vector<runtime::Tensor>> next() override { return m_inner.next(); }

private:
    TensorBatchSource m_inner;
};

TEST(HessianService, UnsizedSourceRunningOutIsAnError) {
    auto executor = runtime::Executor::create(testing::linearModel()).value();
    UnsizedSource source(randomInputs(executor.graph(), 3, 1));
    HessianService service(executor, source);
    NullProgress progress;
    auto scores = service.fetch(request({"fc1"}, 5, 2), progress);
    ASSERT_FALSE(scores.ok());
    EXPECT_NE(scores.error().toString().find("holds 3"), std::string::npos)
        << scores.error().toString();
}

/// Cancels after `reports` progress reports.
class CancelAfter final : public Progress {
public:
    explicit CancelAfter(int reports)
        : m_left(reports) {}

    void report(double, std::string_view) override { --m_left; }

    bool isCancelled() const override { return m_left <= 0; }

private:
    int m_left;
};

TEST(HessianService, CancelLeavesTheCacheConsistent) {
    Service s(testing::residualBlock(), 6, 3);
    CancelAfter cancel(4); // during the second batch (3 iterations per batch)
    auto cancelled = s.service.fetch(request({"conv1", "mm"}, 6, 2), cancel);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code(), Errc::Cancelled);
    EXPECT_EQ(s.service.stats().forwardPasses, 2);
    EXPECT_EQ(s.service.stats().targetScoresComputed, 2 * 2); // only the finished batch
    // Finishing later computes the two missing batches and matches a fresh service.
    auto finished = s.fetch(request({"conv1", "mm"}, 6, 2));
    ASSERT_TRUE(finished.ok()) << finished.error().toString();
    EXPECT_EQ(s.service.stats().targetScoresComputed, 2 * 6);
    Service fresh(testing::residualBlock(), 6, 3);
    auto reference = fresh.fetch(request({"conv1", "mm"}, 6, 2));
    ASSERT_TRUE(reference.ok());
    for (size_t t = 0; t < 2; ++t) {
        EXPECT_EQ(finished->targets[t].perSample, reference->targets[t].perSample);
    }
}

TEST(HessianService, EarlyStopEndsABatchAfterTheMinimumIterations) {
    Service s(testing::linearModel(), 2, 2);
    HessianScoresRequest r = request({"fc1"}, 2, 2, 100);
    r.earlyStop = true;
    r.tolerance = 10.0; // any change is small enough
    ASSERT_TRUE(s.fetch(r).ok());
    EXPECT_EQ(s.service.stats().sweeps, kMinHessianIterations + 1);
    r.earlyStop = false;
    ASSERT_TRUE(s.fetch(r).ok());
    EXPECT_EQ(s.service.stats().sweeps, kMinHessianIterations + 1 + 100);
}

TEST(HessianService, ShardsMergeExactly) {
    Service s(testing::convReluGemm(), 7, 4);
    auto full = s.fetch(request({"conv"}, 7, 3));
    ASSERT_TRUE(full.ok());
    Service a(testing::convReluGemm(), 7, 4);
    Service b(testing::convReluGemm(), 7, 4);
    HessianScoresRequest first = request({"conv"}, 3, 2);
    HessianScoresRequest second = request({"conv"}, 4, 4);
    second.firstSample = 3;
    auto shardA = a.fetch(first);
    auto shardB = b.fetch(second);
    ASSERT_TRUE(shardA.ok() && shardB.ok());
    auto merged = mergeHessianShards({*shardB, *shardA});
    ASSERT_TRUE(merged.ok()) << merged.error().toString();
    EXPECT_EQ(merged->sampleIndices, full->sampleIndices);
    expectClose(merged->targets[0].perSample, full->targets[0].perSample);
    // Overlap and mismatches are refused.
    auto overlap = mergeHessianShards({*shardA, *full});
    ASSERT_FALSE(overlap.ok());
    EXPECT_NE(overlap.error().toString().find("overlap"), std::string::npos);
    HessianScores other = *shardB;
    other.iterations = 5;
    auto mismatch = mergeHessianShards({*shardA, other});
    ASSERT_FALSE(mismatch.ok());
    EXPECT_NE(mismatch.error().toString().find("iterations"), std::string::npos);
}

TEST(HessianService, ScoresJsonRoundTrips) {
    Service s(testing::residualBlock(), 2, 2);
    auto scores = s.fetch(request({"conv1", "mm"}, 2, 2));
    ASSERT_TRUE(scores.ok());
    const nlohmann::json json = report::toJson(*scores);
    EXPECT_EQ(json["granularity"], "per_output_channel");
    EXPECT_EQ(json["targets"][0]["numel"], 3 * 6 * 6);
    EXPECT_EQ(json["targets"][0]["per_sample"].size(), 2U);
    EXPECT_EQ(json["targets"][0]["mean"].size(), 3U);
    auto back = report::hessianScoresFromJson(json);
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->targets[1].perSample, scores->targets[1].perSample);
    EXPECT_EQ(back->targets[1].shape, scores->targets[1].shape);
    nlohmann::json broken = json;
    broken["targets"][0].erase("per_sample");
    auto refused = report::hessianScoresFromJson(broken);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("per_sample"), std::string::npos);
    // Numbers are checked before they are converted: no float or huge value becomes an int.
    broken = json;
    broken["iterations"] = 1e30;
    refused = report::hessianScoresFromJson(broken);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().toString(),
              "scores: \"iterations\" must hold integers in range, got 1e+30");
    broken = json;
    broken["targets"][0]["shape"] = {4294967296LL, 4294967296LL};
    refused = report::hessianScoresFromJson(broken);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().toString().find("at most 1e12 elements"), std::string::npos);
}

} // namespace
} // namespace qs::hessian
