// Weight statistics for the inspector: exact values on a small tensor, integer tensors, and
// clear errors for non-numeric or truncated tensors.
#include "core/report/tensor_statistics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qs::report {
namespace {

TEST(TensorStatistics, MinMaxMeanStd) {
    const std::vector<float> values = {1.0F, 2.0F, 3.0F, 4.0F, -2.0F, 4.0F};
    const auto tensor =
        graph::TensorData::fromValues(graph::DataType::Float, {2, 3}, std::span(values));
    auto stats = tensorStatistics(*tensor);
    ASSERT_TRUE(stats.ok()) << stats.error().toString();
    EXPECT_EQ(stats->count, 6);
    EXPECT_DOUBLE_EQ(stats->min, -2.0);
    EXPECT_DOUBLE_EQ(stats->max, 4.0);
    EXPECT_DOUBLE_EQ(stats->mean, 2.0);
    // Squared deviations: 1, 0, 1, 4, 16, 4 -> 26 / 6.
    EXPECT_NEAR(stats->stddev, std::sqrt(26.0 / 6.0), 1e-12);
}

TEST(TensorStatistics, IntegersAndEmpty) {
    const std::vector<int8_t> values = {-128, 127};
    auto stats = tensorStatistics(
        *graph::TensorData::fromValues(graph::DataType::Int8, {2}, std::span(values)));
    ASSERT_TRUE(stats.ok());
    EXPECT_DOUBLE_EQ(stats->mean, -0.5);
    const std::vector<float> none;
    auto empty = tensorStatistics(
        *graph::TensorData::fromValues(graph::DataType::Float, {0, 4}, std::span(none)));
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ(empty->count, 0);
}

TEST(TensorStatistics, BadTensorsAreErrors) {
    const graph::TensorData text(graph::DataType::String, {1}, std::string("abc"));
    auto stats = tensorStatistics(text);
    ASSERT_FALSE(stats.ok());
    EXPECT_NE(stats.error().message().find("no statistics"), std::string::npos);
    const graph::TensorData truncated(graph::DataType::Float, {4}, std::string(8, '\0'));
    stats = tensorStatistics(truncated);
    ASSERT_FALSE(stats.ok());
    EXPECT_NE(stats.error().message().find("needs 16"), std::string::npos);
}

} // namespace
} // namespace qs::report
