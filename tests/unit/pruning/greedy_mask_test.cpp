// The greedy grow-back: memory <= target and maximal, pruned scores below kept scores per entry,
// group 0 always kept, locks and fixed counts, the minimum in the error of an unreachable target.
#include "core/pruning/greedy_mask.h"
#include "core/pruning/pruning_workflow.h"
#include "pruning_test_models.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace qs::pruning {
namespace {

struct PruningSetup {
    graph::Graph graph;
    SectionDetection detection;
    std::vector<EntryImportance> importance;
};

PruningSetup setupFor(graph::Graph graph, int64_t simd, ImportanceMetric metric, uint64_t seed) {
    PruningSetup setup{std::move(graph), {}, {}};
    setup.detection = detectPruningSections(setup.graph).value();
    std::mt19937_64 rng(seed);
    for (const PruningSection& section : setup.detection.sections) {
        setup.importance.push_back(
            entryImportance(setup.graph, section, metric, {}, simd, rng).value());
    }
    return setup;
}

/// The group the greedy would add next: the largest next group score over entries not full.
int nextSection(const std::vector<EntryImportance>& importance, const std::vector<int64_t>& kept) {
    int best = -1;
    double bestScore = 0.0;
    for (size_t s = 0; s < importance.size(); ++s) {
        if (kept[s] >= importance[s].channels()) {
            continue;
        }
        const auto g = static_cast<size_t>(kept[s] / importance[s].simd);
        if (best < 0 || importance[s].groupScores[g] > bestScore) {
            best = static_cast<int>(s);
            bestScore = importance[s].groupScores[g];
        }
    }
    return best;
}

TEST(GreedyMasks, MemoryBelowTargetAndMaximalForEverySimdAndTarget) {
    for (const int64_t simd : {1, 2, 4}) {
        for (const ImportanceMetric metric : {ImportanceMetric::L2, ImportanceMetric::Random}) {
            PruningSetup setup = setupFor(testing::chainModel(), simd, metric, 3);
            MemoryCalculator memory(setup.graph, setup.detection,
                                    std::vector<int64_t>(setup.graph.numNodeSlots(), simd), true);
            const int64_t dense = memory.denseParameters() * kFp32BytesPerParameter;
            for (const double fraction : {0.5, 0.6, 0.75, 0.9}) {
                const auto target = static_cast<int64_t>(fraction * static_cast<double>(dense));
                const GreedyMasks masks = greedyMasks(memory, setup.importance, {}, target).value();
                EXPECT_LE(masks.parameters * kFp32BytesPerParameter, target);
                EXPECT_EQ(masks.parameters, memory.parameters(masks.kept));
                const int next = nextSection(setup.importance, masks.kept);
                if (next >= 0) {
                    std::vector<int64_t> more = masks.kept;
                    const EntryImportance& e = setup.importance[static_cast<size_t>(next)];
                    more[static_cast<size_t>(next)] =
                        e.channelsInGroups(masks.kept[static_cast<size_t>(next)] / e.simd + 1);
                    EXPECT_GT(memory.parameters(more) * kFp32BytesPerParameter, target)
                        << "simd " << simd << " target " << fraction;
                }
                for (size_t s = 0; s < masks.kept.size(); ++s) {
                    EXPECT_GE(masks.kept[s], std::min(simd, setup.importance[s].channels()));
                }
            }
        }
    }
}

TEST(GreedyMasks, PrunedScoresAreBelowKeptScoresPerEntry) {
    for (const int64_t simd : {1, 3}) {
        PruningSetup setup = setupFor(testing::mlpModel(), simd, ImportanceMetric::L2, 0);
        MemoryCalculator memory(setup.graph, setup.detection,
                                std::vector<int64_t>(setup.graph.numNodeSlots(), simd), false);
        const int64_t target = memory.denseParameters() * kFp32BytesPerParameter / 2;
        const GreedyMasks masks = greedyMasks(memory, setup.importance, {}, target).value();
        for (size_t s = 0; s < masks.kept.size(); ++s) {
            const EntryImportance& e = setup.importance[s];
            const std::vector<uint8_t> mask = channelMask(e, masks.kept[s]);
            // Channel scores always; the unrolled group scores too with SIMD 1 (MCT's assertion).
            const std::vector<double> unrolled = e.unrolledScores();
            for (const auto* scores : {&e.channelScores, simd == 1 ? &unrolled : nullptr}) {
                if (scores == nullptr) {
                    continue;
                }
                double maxPruned = -1e300;
                double minKept = 1e300;
                for (size_t c = 0; c < mask.size(); ++c) {
                    if (mask[c] != 0) {
                        minKept = std::min(minKept, (*scores)[c]);
                    } else {
                        maxPruned = std::max(maxPruned, (*scores)[c]);
                    }
                }
                EXPECT_LE(maxPruned, minKept) << "section " << s << " simd " << simd;
            }
        }
    }
}

TEST(GreedyMasks, UnreachableTargetNamesTheMinimum) {
    PruningSetup setup = setupFor(testing::chainModel(), 4, ImportanceMetric::L2, 0);
    MemoryCalculator memory(setup.graph, setup.detection,
                            std::vector<int64_t>(setup.graph.numNodeSlots(), 4), false);
    const auto result = greedyMasks(memory, setup.importance, {}, 400);
    ASSERT_FALSE(result.ok());
    // Group 0 (4 channels) of both entries: conv1 27*4+4, bn 16, prelu 4, mul 4, add 1,
    // conv2 4*4*9, conv3 4*4+4, fc 15 = 316 parameters.
    EXPECT_NE(result.error().toString().find("minimum of 1264 bytes"), std::string::npos)
        << result.error().toString();
}

TEST(GreedyMasks, LockAndFixedCountsAreKept) {
    PruningSetup setup = setupFor(testing::chainModel(), 1, ImportanceMetric::L2, 0);
    MemoryCalculator memory(setup.graph, setup.detection,
                            std::vector<int64_t>(setup.graph.numNodeSlots(), 1), false);
    const int64_t target = memory.denseParameters() * kFp32BytesPerParameter * 8 / 10;
    const std::vector<EntryConstraint> constraints = {{EntryConstraint::Kind::Lock, 0},
                                                      {EntryConstraint::Kind::Keep, 3}};
    const GreedyMasks masks = greedyMasks(memory, setup.importance, constraints, target).value();
    EXPECT_EQ(masks.kept[0], 8);
    EXPECT_EQ(masks.kept[1], 3);
    const std::vector<EntryConstraint> bad = {{}, {EntryConstraint::Kind::Keep, 7}};
    EXPECT_FALSE(greedyMasks(memory, setup.importance, bad, target).ok());
}

TEST(PruningWorkflow, TargetMemoryParsing) {
    EXPECT_TRUE(parseTargetMemory("50%").value().fraction);
    EXPECT_DOUBLE_EQ(parseTargetMemory("12.5%").value().value, 0.125);
    EXPECT_EQ(parseTargetMemory("51200000").value().bytes(0), 51200000);
    for (const char* bad : {"", "%", "0%", "150%", "-3", "12kb", "1.5"}) {
        EXPECT_FALSE(parseTargetMemory(bad).ok()) << bad;
    }
}

} // namespace
} // namespace qs::pruning
