// MCT's memory calculator cases and the incremental count against a full recount.
#include "core/pruning/memory_calculator.h"
#include "pruning_test_models.h"

#include <gtest/gtest.h>

#include <random>

namespace qs::pruning {
namespace {

std::vector<int64_t> simdEverywhere(const graph::Graph& graph, int64_t simd) {
    return std::vector<int64_t>(graph.numNodeSlots(), simd);
}

TEST(MemoryCalculator, MctConvOneToTwoChannelsIs20ParametersAnd320Padded) {
    const graph::Graph graph = testing::mctConv();
    const SectionDetection detection = detectPruningSections(graph).value();
    EXPECT_TRUE(detection.sections.empty());
    const MemoryCalculator plain(graph, detection, simdEverywhere(graph, 32), false);
    EXPECT_EQ(plain.denseParameters(), 20);
    EXPECT_EQ(plain.parameters({}), 20);
    const MemoryCalculator padded(graph, detection, simdEverywhere(graph, 32), true);
    EXPECT_EQ(padded.parameters({}), 320); // 2 output channels count as 32
    EXPECT_EQ(padded.denseParameters(), 20);
}

TEST(MemoryCalculator, ChainCountsSharedNodeOnceWithBothMasks) {
    const graph::Graph graph = testing::chainModel();
    const SectionDetection detection = detectPruningSections(graph).value();
    ASSERT_EQ(detection.sections.size(), 2U);
    const MemoryCalculator memory(graph, detection, simdEverywhere(graph, 1), false);
    // conv1 3x3x3x8 + 8, bn 4x8, prelu 8, mul 8, add 1, conv2 8x6x9, conv3 6x4 + 4, fc 12 + 3.
    const int64_t dense = 216 + 8 + 32 + 8 + 8 + 1 + 432 + 24 + 4 + 12 + 3;
    EXPECT_EQ(memory.denseParameters(), dense);
    EXPECT_EQ(memory.parameters({8, 6}), dense);
    // Keep 5 of conv1's 8 and 2 of conv2's 6: conv1 27*5+5, bn 4*5, prelu 5, mul 5, add 1,
    // conv2 5*2*9 (in = previous mask, out = own: counted once), conv3 2*4 + 4, fc 15.
    EXPECT_EQ(memory.parameters({5, 2}), 140 + 20 + 5 + 5 + 1 + 90 + 12 + 15);
}

TEST(MemoryCalculator, PaddingRoundsEveryOutputChannelAxisUp) {
    const graph::Graph graph = testing::chainModel();
    const SectionDetection detection = detectPruningSections(graph).value();
    const MemoryCalculator memory(graph, detection, simdEverywhere(graph, 4), true);
    // SIMD 4: conv1 5 -> 8 channels, bn/prelu/mul 5 -> 8, conv2 2 -> 4 out (in 5), conv3 4, fc 3
    // -> 4 outputs; the scalar Add constant is not padded.
    const int64_t expected =
        (27 * 8 + 8) + 4 * 8 + 8 + 8 + 1 + 5 * 4 * 9 + (2 * 4 + 4) + (4 * 4 + 4);
    EXPECT_EQ(memory.parameters({5, 2}), expected);
}

TEST(MemoryCalculator, IncrementalEqualsFullRecountAfterEveryStep) {
    for (const bool padding : {false, true}) {
        for (const graph::Graph& graph :
             {testing::chainModel(), testing::mlpModel(), testing::gapGemmModel()}) {
            const SectionDetection detection = detectPruningSections(graph).value();
            ASSERT_FALSE(detection.sections.empty());
            MemoryCalculator memory(graph, detection, simdEverywhere(graph, 4), padding);
            std::mt19937 rng(7);
            for (int step = 0; step < 200; ++step) {
                const int s = static_cast<int>(rng() % detection.sections.size());
                const int64_t channels = detection.sections[static_cast<size_t>(s)].channels;
                memory.setKept(s,
                               1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(channels)));
                ASSERT_EQ(memory.current(), memory.parameters(memory.kept())) << "step " << step;
            }
        }
    }
}

} // namespace
} // namespace qs::pruning
