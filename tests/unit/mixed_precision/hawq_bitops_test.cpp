// HAWQ's measures on hand-built problems: the BitOps ratio (uniform 8 = 1.0, uniform 4 = 2.0, a
// hand-computed mix), liberal and strict activation bits, the metric, the selection rule with its
// tie rule and NNCF's out-of-range error, and the exact Pareto front against brute force and
// against the trace-order choice.

#include "core/mixed_precision/bitops.h"
#include "core/mixed_precision/pareto_search.h"
#include "core/mixed_precision/trace_order_candidates.h"
#include "hawq_test_problems.h"

#include <gtest/gtest.h>

#include <random>

namespace qs::mixed_precision {
namespace {

using testing::handProblem;

LayerPerturbations perturbationsFor(const HawqProblem& problem, std::mt19937& rng) {
    std::uniform_real_distribution<double> unit(0.5, 1.5);
    LayerPerturbations out(problem.layers.size());
    for (size_t l = 0; l < problem.layers.size(); ++l) {
        double noise = unit(rng);
        for (auto it = problem.layers[l].bitsAllowed.rbegin();
             it != problem.layers[l].bitsAllowed.rend(); ++it) {
            out[l][*it] = noise;
            noise *= 4.0 * unit(rng); // fewer bits, more noise
        }
    }
    return out;
}

TEST(HawqBitOps, UniformEightIsOneAndUniformFourIsTwo) {
    const HawqProblem problem = handProblem(3, {4, 8}, {4, 8}, {100, 300, 50});
    EXPECT_DOUBLE_EQ(maxBitOps(problem), 450.0 * 8.0);
    const LayerPerturbations noise(3, {{4, 1.0}, {8, 0.1}});
    const std::vector<double> traces{1.0, 1.0, 1.0};
    auto eight = evaluateCandidate(problem, traces, noise, {8, 8, 8});
    ASSERT_TRUE(eight.ok());
    EXPECT_DOUBLE_EQ(eight->ratio, 1.0);
    auto four = evaluateCandidate(problem, traces, noise, {4, 4, 4});
    ASSERT_TRUE(four.ok());
    EXPECT_EQ(four->activationBits, (std::vector<int>{4, 4, 4}));
    EXPECT_DOUBLE_EQ(four->ratio, 2.0);
    // By hand: 100*4 + 300*8 + 50*4 = 3000 BitOps, maxBits 3600 -> 1.2.
    auto mixed = evaluateCandidate(problem, traces, noise, {4, 8, 4});
    ASSERT_TRUE(mixed.ok());
    EXPECT_DOUBLE_EQ(mixed->ratio, 3600.0 / 3000.0);
    EXPECT_DOUBLE_EQ(mixed->metric, 1.0 + 0.1 + 1.0);
}

TEST(HawqBitOps, ActivationBitsOfTheFeedingQuantizerCount) {
    // A 4-bit weight behind an activation that only allows 8 costs 8 bits.
    HawqProblem problem = handProblem(2, {4, 8}, {4, 8}, {100, 100});
    problem.activations[1].bitsAllowed = {8};
    auto bits = assignActivationBits(problem, std::vector<int>{4, 4});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits, (std::vector<int>{4, 8}));
    EXPECT_DOUBLE_EQ(bitOps(problem, std::vector<int>{4, 4}, *bits), 400.0 + 800.0);
}

TEST(HawqBitOps, LiberalAssignment) {
    // One group: two layers (4 and 8 bits) and their two activations.
    HawqProblem problem = handProblem(2, {2, 4, 8}, {4, 8}, {}, {0, 0});
    auto bits = assignActivationBits(problem, std::vector<int>{8, 4});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits, (std::vector<int>{4, 4})); // min(allowed ∩ weight bits of the group)
    problem.activations[0].bitsAllowed = {8};   // the only allowed one
    problem.activations[1].bitsAllowed = {4, 8};
    bits = assignActivationBits(problem, std::vector<int>{2, 2});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits, (std::vector<int>{8, 4})); // no match with {2}: min(allowed)
    problem.activations[1].bitsAllowed = {};
    problem.activations[1].currentBits = 16; // none of the bits: keeps its own
    bits = assignActivationBits(problem, std::vector<int>{2, 2});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ((*bits)[1], 16);
}

TEST(HawqBitOps, StrictAssignment) {
    HawqProblem problem = handProblem(2, {4, 8}, {4, 8}, {}, {0, 0});
    problem.mode = BitwidthAssignmentMode::Strict;
    problem.activations[1].bitsAllowed = {2, 4, 8};
    auto bits = assignActivationBits(problem, std::vector<int>{8, 8});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits, (std::vector<int>{8, 8})); // min(common {4,8} ∩ {8})
    bits = assignActivationBits(problem, std::vector<int>{4, 4});
    ASSERT_TRUE(bits.ok());
    EXPECT_EQ(*bits, (std::vector<int>{4, 4}));
    const auto split = assignActivationBits(problem, std::vector<int>{4, 8});
    ASSERT_FALSE(split.ok());
    EXPECT_NE(split.error().message().find("different bit widths"), std::string::npos);
}

TEST(HawqSelection, RatioAtLeastTargetSmallestMetricFirstOnTies) {
    std::vector<HawqCandidate> candidates(4);
    candidates[0].ratio = 1.0;
    candidates[0].metric = 0.1;
    candidates[1].ratio = 1.6;
    candidates[1].metric = 0.5;
    candidates[2].ratio = 1.5;
    candidates[2].metric = 0.5;
    candidates[3].ratio = 2.0;
    candidates[3].metric = 0.9;
    const std::vector<size_t> all{0, 1, 2, 3};
    auto chosen = selectForRatio(candidates, all, 1.5);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(*chosen, 1U); // 1 and 2 tie on the metric: the first index
    chosen = selectForRatio(candidates, all, 1.55);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(*chosen, 1U); // 2 is below the target
    chosen = selectForRatio(candidates, all, 1.0);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(*chosen, 0U);
    chosen = selectForRatio(candidates, all, 2.0);
    ASSERT_TRUE(chosen.ok());
    EXPECT_EQ(*chosen, 3U);
}

TEST(HawqSelection, OutOfRangeIsNncfsError) {
    std::vector<HawqCandidate> candidates(2);
    candidates[0].ratio = 1.0;
    candidates[1].ratio = 1.3333333;
    const std::vector<size_t> all{0, 1};
    auto high = selectForRatio(candidates, all, 1.5);
    ASSERT_FALSE(high.ok());
    EXPECT_EQ(high.error().message(),
              "Invalid compression ratio=1.5. Should be within range [1.000, 1.333]");
    auto low = selectForRatio(candidates, all, 0.5);
    ASSERT_FALSE(low.ok());
    EXPECT_EQ(low.error().message(),
              "Invalid compression ratio=0.5. Should be within range [1.000, 1.333]");
}

/// Brute force over every assignment (with `filtered`, those NNCF's excessive-bitwidth filter
/// keeps: not using every excessive bit width): the smallest metric with BitOps <= budget.
double bruteForceBest(const HawqProblem& problem, const std::vector<double>& traces,
                      const LayerPerturbations& noise, double budget, bool filtered = true) {
    const std::vector<int> excessive = excessiveBitwidths(problem);
    double best = std::numeric_limits<double>::infinity();
    std::vector<int> bits(problem.layers.size());
    std::function<void(size_t)> visit = [&](size_t l) {
        if (l == problem.layers.size()) {
            const bool usesEvery =
                !excessive.empty() && std::all_of(excessive.begin(), excessive.end(), [&](int b) {
                    return std::find(bits.begin(), bits.end(), b) != bits.end();
                });
            if (filtered && usesEvery) {
                return;
            }
            auto candidate = evaluateCandidate(problem, traces, noise, bits);
            if (candidate.ok() &&
                bitOps(problem, bits, candidate->activationBits) <= budget * (1 + 1e-12)) {
                best = std::min(best, candidate->metric);
            }
            return;
        }
        for (const int b : problem.layers[l].bitsAllowed) {
            bits[l] = b;
            visit(l + 1);
        }
    };
    visit(0);
    return best;
}

TEST(HawqPareto, FrontIsExactAndNeverWorseThanTraceOrder) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> traceDist(0.01, 10.0);
    std::uniform_int_distribution<int64_t> macsDist(10, 1000);
    // Activation bit sets: NPU-like (2 excessive), all bits (none excessive), 8 only (2 and 4
    // excessive: only assignments using both are dropped).
    const std::vector<std::vector<int>> activationSets = {{4, 8}, {2, 4, 8}, {8}};
    int filterMattered = 0;
    for (int trial = 0; trial < 30; ++trial) {
        // 6 layers in 4 groups.
        const std::vector<int>& activationBits = activationSets[trial % 3];
        std::vector<int64_t> macs;
        std::vector<double> traces;
        for (int l = 0; l < 6; ++l) {
            macs.push_back(macsDist(rng));
            traces.push_back(traceDist(rng));
        }
        HawqProblem problem = handProblem(6, {2, 4, 8}, activationBits, macs, {0, 1, 1, 2, 3, 3});
        if (trial % 2 == 1) {
            // Layers whose input is not quantized (NNCF warns and counts their weights alone):
            // there a 2-bit weight is cheaper than a 4-bit one, so the filter changes the front.
            problem.layers[0].activation.reset();
            problem.layers[4].activation.reset();
        }
        const std::vector<int> excessive = excessiveBitwidths(problem);
        const LayerPerturbations noise = perturbationsFor(problem, rng);
        NullProgress none;
        auto front = paretoFront(problem, traces, noise, none);
        ASSERT_TRUE(front.ok()) << front.error().toString();
        for (size_t i = 1; i < front->size(); ++i) {
            EXPECT_LT((*front)[i].ratio, (*front)[i - 1].ratio);
            EXPECT_LT((*front)[i].metric,
                      (*front)[i - 1].metric + 1e-12); // more BitOps, less noise
        }
        for (const HawqCandidate& point : *front) {
            if (!excessive.empty()) {
                EXPECT_FALSE(std::all_of(excessive.begin(), excessive.end(), [&](int b) {
                    return std::find(point.weightBits.begin(), point.weightBits.end(), b) !=
                           point.weightBits.end();
                })) << "a front point uses every excessive bit width";
            }
            const double budget = maxBitOps(problem) / point.ratio;
            EXPECT_NEAR(point.metric, bruteForceBest(problem, traces, noise, budget),
                        1e-9 * (1 + point.metric));
            if (bruteForceBest(problem, traces, noise, budget, false) < point.metric * (1 - 1e-9)) {
                ++filterMattered;
            }
        }
        // Every filtered assignment's budget: the front reaches the brute-force optimum there.
        std::vector<HawqCandidate> ordered;
        for (auto& bits : traceOrderCandidates(problem, traces)) {
            auto candidate = evaluateCandidate(problem, traces, noise, bits);
            ASSERT_TRUE(candidate.ok());
            ordered.push_back(*candidate);
        }
        std::vector<size_t> orderedIds(ordered.size());
        std::iota(orderedIds.begin(), orderedIds.end(), size_t{0});
        std::vector<size_t> frontIds(front->size());
        std::iota(frontIds.begin(), frontIds.end(), size_t{0});
        for (const HawqCandidate& c : ordered) {
            auto byTrace = selectForRatio(ordered, orderedIds, c.ratio);
            auto byFront = selectForRatio(*front, frontIds, c.ratio);
            ASSERT_TRUE(byTrace.ok());
            ASSERT_TRUE(byFront.ok()) << byFront.error().toString();
            EXPECT_LE((*front)[*byFront].metric, ordered[*byTrace].metric * (1 + 1e-12));
            EXPECT_GE((*front)[*byFront].ratio, c.ratio * (1 - 1e-12));
            EXPECT_NEAR((*front)[*byFront].metric,
                        bruteForceBest(problem, traces, noise, maxBitOps(problem) / c.ratio),
                        1e-9 * (1 + (*front)[*byFront].metric));
        }
    }
    // Without the filter some of these fronts would be lower: the test sees the filter.
    EXPECT_GT(filterMattered, 0);
}

TEST(HawqPareto, ExcessiveFilterDropsOnlyAssignmentsUsingEveryExcessiveWidth) {
    // Two layers without a quantized input, bits {2, 4, 8}, activations 8 only: 2 and 4 are
    // excessive. (2|4) and (4|2) are dropped, (2|2), (2|8), (4|4)... stay.
    HawqProblem problem = handProblem(2, {2, 4, 8}, {8}, {10, 10});
    problem.layers[0].activation.reset();
    problem.layers[1].activation.reset();
    ASSERT_EQ(excessiveBitwidths(problem), (std::vector<int>{2, 4}));
    const LayerPerturbations noise(2, {{2, 4.0}, {4, 1.0}, {8, 0.0}});
    NullProgress none;
    auto front = paretoFront(problem, std::vector<double>{1.0, 2.0}, noise, none);
    ASSERT_TRUE(front.ok()) << front.error().toString();
    std::vector<std::vector<int>> bits;
    for (const HawqCandidate& point : *front) {
        bits.push_back(point.weightBits);
    }
    // BitOps 10 x bits each: (2|2) 40, metric 12; (2|4) 60, metric 6 would be on the front but
    // uses 2 and 4; (4|4) 80, metric 3; (2|8) 100, metric 4, dominated; (4|8) 120, metric 1;
    // (8|8) 160, metric 0.
    EXPECT_EQ(bits, (std::vector<std::vector<int>>{{2, 2}, {4, 4}, {4, 8}, {8, 8}}));
}

TEST(HawqPareto, StrictModeOptionsAreUniformPerGroup) {
    HawqProblem problem = handProblem(3, {4, 8}, {4, 8}, {10, 20, 30}, {0, 0, 1});
    problem.mode = BitwidthAssignmentMode::Strict;
    const LayerPerturbations noise(3, {{4, 1.0}, {8, 0.1}});
    NullProgress none;
    auto front = paretoFront(problem, std::vector<double>{1.0, 2.0, 3.0}, noise, none);
    ASSERT_TRUE(front.ok());
    for (const HawqCandidate& point : *front) {
        EXPECT_EQ(point.weightBits[0], point.weightBits[1]);
    }
    // (4|4) 240 BitOps, (4|8) and (8|4) both 360 with equal metrics (one kept), (8|8) 480.
    EXPECT_EQ(front->size(), 3U);
}

} // namespace
} // namespace qs::mixed_precision
