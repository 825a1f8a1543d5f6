// NNCF's trace-order candidates on hand-built problems: the count formula, the trace order, the
// closest-config rule, de-duplication, the excessive-bitwidth filter and strict mode.

#include "core/mixed_precision/trace_order_candidates.h"
#include "hawq_test_problems.h"

#include <gtest/gtest.h>

#include <set>

namespace qs::mixed_precision {
namespace {

using testing::handProblem;

TEST(HawqCandidates, CountFollowsNncfFormula) {
    EXPECT_EQ(nonDecreasingSequenceCount(50, 3), 1326U); // the reference's example
    EXPECT_EQ(nonDecreasingSequenceCount(1, 3), 3U);
    EXPECT_EQ(nonDecreasingSequenceCount(0, 3), 0U);
    const std::vector<int> all{2, 4, 6, 8};
    for (size_t m = 1; m <= all.size(); ++m) {
        const std::vector<int> bits(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(m));
        for (size_t length = 1; length <= 7; ++length) {
            const auto sequences = nonDecreasingSequences(length, bits);
            EXPECT_EQ(sequences.size(), nonDecreasingSequenceCount(length, m))
                << "L=" << length << " m=" << m;
            std::set<std::vector<int>> unique(sequences.begin(), sequences.end());
            EXPECT_EQ(unique.size(), sequences.size());
            for (const auto& sequence : sequences) {
                EXPECT_EQ(sequence.size(), length);
                EXPECT_TRUE(std::is_sorted(sequence.begin(), sequence.end()));
            }
        }
    }
    // NNCF's order: one width first (2 2 2, 4 4 4), then pairs with their cut points.
    const auto sequences = nonDecreasingSequences(3, std::vector<int>{2, 4});
    ASSERT_EQ(sequences.size(), 4U);
    EXPECT_EQ(sequences[0], (std::vector<int>{2, 2, 2}));
    EXPECT_EQ(sequences[1], (std::vector<int>{4, 4, 4}));
    EXPECT_EQ(sequences[2], (std::vector<int>{2, 4, 4}));
    EXPECT_EQ(sequences[3], (std::vector<int>{2, 2, 4}));
}

TEST(HawqCandidates, LayersAreOrderedByTraceAscending) {
    const std::vector<double> traces{3.0, 1.0, 2.0, 1.0};
    EXPECT_EQ(traceOrder(traces), (std::vector<size_t>{1, 3, 2, 0}));
    // Every candidate gives a lower-trace layer at most the bits of a higher-trace one.
    const HawqProblem problem = handProblem(4, {2, 4, 8}, {2, 4, 8});
    const auto candidates = traceOrderCandidates(problem, traces);
    EXPECT_EQ(candidates.size(), nonDecreasingSequenceCount(4, 3));
    for (const auto& bits : candidates) {
        EXPECT_LE(bits[1], bits[3]);
        EXPECT_LE(bits[3], bits[2]);
        EXPECT_LE(bits[2], bits[0]);
    }
}

TEST(HawqCandidates, ClosestAllowedConfigFirstOnTies) {
    EXPECT_EQ(closestAllowedBits(std::vector<int>{4, 8}, 6), 4);
    EXPECT_EQ(closestAllowedBits(std::vector<int>{4, 8}, 2), 4);
    EXPECT_EQ(closestAllowedBits(std::vector<int>{2, 8}, 4), 2);
    EXPECT_EQ(closestAllowedBits(std::vector<int>{8}, 2), 8);
    // Layer 0 allows 8 only: it takes 8 in every sequence and duplicates are dropped.
    HawqProblem problem = handProblem(2, {2, 4, 8}, {2, 4, 8});
    problem.layers[0].bitsAllowed = {8};
    const auto candidates = traceOrderCandidates(problem, std::vector<double>{1.0, 2.0});
    // Sequences (trace order 0, 1): 22 44 88 24 28 48 -> (8,2) (8,4) (8,8) (8,4) (8,8) (8,8).
    ASSERT_EQ(candidates.size(), 3U);
    EXPECT_EQ(candidates[0], (std::vector<int>{8, 2}));
    EXPECT_EQ(candidates[1], (std::vector<int>{8, 4}));
    EXPECT_EQ(candidates[2], (std::vector<int>{8, 8}));
}

TEST(HawqCandidates, ExcessiveBitwidthFilterDropsSequencesUsingThem) {
    // No activation allows 2 bits: 2 is excessive, no candidate uses it.
    const HawqProblem npuLike = handProblem(3, {2, 4, 8}, {4, 8});
    EXPECT_EQ(excessiveBitwidths(npuLike), (std::vector<int>{2}));
    const auto filtered = traceOrderCandidates(npuLike, std::vector<double>{1.0, 2.0, 3.0});
    EXPECT_EQ(filtered.size(), nonDecreasingSequenceCount(3, 2));
    for (const auto& bits : filtered) {
        EXPECT_EQ(std::count(bits.begin(), bits.end(), 2), 0);
    }
    // With 2-bit activations nothing is excessive.
    const HawqProblem open = handProblem(3, {2, 4, 8}, {2, 4, 8});
    EXPECT_TRUE(excessiveBitwidths(open).empty());
    EXPECT_EQ(traceOrderCandidates(open, std::vector<double>{1.0, 2.0, 3.0}).size(),
              nonDecreasingSequenceCount(3, 3));
}

TEST(HawqCandidates, StrictModeKeepsGroupsUniform) {
    // Layers 0 and 2 share group 0; layer 1 is alone.
    HawqProblem problem = handProblem(3, {4, 8}, {4, 8}, {}, {0, 1, 0});
    problem.mode = BitwidthAssignmentMode::Strict;
    ASSERT_TRUE(narrowToCommonBits(problem).ok());
    const auto candidates = traceOrderCandidates(problem, std::vector<double>{1.0, 2.0, 3.0});
    ASSERT_FALSE(candidates.empty());
    for (const auto& bits : candidates) {
        EXPECT_EQ(bits[0], bits[2]);
    }
    // Liberal keeps the split ones: (4, 8, 8) splits group 0.
    problem.mode = BitwidthAssignmentMode::Liberal;
    EXPECT_GT(traceOrderCandidates(problem, std::vector<double>{1.0, 2.0, 3.0}).size(),
              candidates.size());
}

TEST(HawqCandidates, StrictModeErrorsWhenGroupSharesNoBitwidth) {
    HawqProblem problem = handProblem(2, {4, 8}, {4, 8}, {}, {0, 0});
    problem.layers[1].bitsAllowed = {2};
    problem.mode = BitwidthAssignmentMode::Strict;
    const auto result = narrowToCommonBits(problem);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message().find("adjacency group 0"), std::string::npos)
        << result.error().message();
    EXPECT_NE(result.error().message().find("share no bit width"), std::string::npos);
    // A common width narrows every layer of the group to it.
    problem.layers[1].bitsAllowed = {2, 4};
    problem.activations[0].bitsAllowed = {4, 8};
    problem.activations[1].bitsAllowed = {2, 4, 8};
    ASSERT_TRUE(narrowToCommonBits(problem).ok());
    EXPECT_EQ(problem.layers[0].bitsAllowed, (std::vector<int>{4}));
    EXPECT_EQ(problem.layers[1].bitsAllowed, (std::vector<int>{4}));
}

} // namespace
} // namespace qs::mixed_precision
