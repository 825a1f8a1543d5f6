// ScratchFloats: grows zeroed, keeps its contents, never clears per call.

#include "core/runtime/scratch.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace qs::runtime {
namespace {

// What a smaller request finds is what the larger one before it left: nothing is cleared per
// call (a kernel after a larger one pays no memset). A buffer that grows starts zeroed.
TEST(ScratchFloats, GrowsZeroedAndKeepsItsContentsAcrossSmallerRequests) {
    ScratchFloats scratch;
    float* first = scratch.get(64);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(std::all_of(first, first + 64, [](float v) { return v == 0.0F; }));
    std::fill_n(first, 64, 7.0F);

    float* smaller = scratch.get(16);
    EXPECT_EQ(smaller, first);
    EXPECT_TRUE(std::all_of(smaller, smaller + 64, [](float v) { return v == 7.0F; }));

    float* again = scratch.get(64);
    EXPECT_EQ(again, first);
    EXPECT_EQ(again[63], 7.0F);

    float* larger = scratch.get(1 << 20);
    ASSERT_NE(larger, nullptr);
    EXPECT_TRUE(std::all_of(larger, larger + (1 << 20), [](float v) { return v == 0.0F; }));
}

} // namespace
} // namespace qs::runtime
