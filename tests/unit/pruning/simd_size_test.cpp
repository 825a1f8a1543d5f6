// SIMD sizes from HW configs: MCT's defaults by weight bits (32 / 64 / 128), an explicit
// "simd_size" in a config body, the minimum over a node's candidates, and a bad value refused.
#include "core/pruning/simd_size.h"
#include "pruning_test_models.h"

#include <gtest/gtest.h>

namespace qs::pruning {
namespace {

quantization::HWConfig configWithWeights(const std::string& weights) {
    const std::string json = R"({"target_device": "TEST", "config": {"quantization": {
        "w8": {"bits": 8, "mode": "symmetric", "granularity": "perchannel"},
        "w4": {"bits": 4, "mode": "symmetric", "granularity": "perchannel"},
        "w2": {"bits": 2, "mode": "symmetric", "granularity": "perchannel"},
        "w8s16": {"bits": 8, "mode": "symmetric", "granularity": "perchannel", "simd_size": 16}}},
        "operations": [{"type": "Convolution", "quantization": {"activations": "w8",
                        "weights": )" +
                             weights + "}}]}";
    return quantization::HWConfig::parse(json, "test").value();
}

TEST(SimdSize, DefaultsFollowTheWeightBitsAndTheMinimumWins) {
    const graph::Graph graph = testing::mctConv();
    const graph::NodeId conv = *graph.findNode("conv");
    EXPECT_EQ(nodeSimdSize(configWithWeights(R"("w8")"), graph, conv), 32);
    EXPECT_EQ(nodeSimdSize(configWithWeights(R"("w4")"), graph, conv), 64);
    EXPECT_EQ(nodeSimdSize(configWithWeights(R"("w2")"), graph, conv), 128);
    EXPECT_EQ(nodeSimdSize(configWithWeights(R"(["w4", "w2"])"), graph, conv), 64);
    EXPECT_EQ(nodeSimdSize(configWithWeights(R"(["w8s16", "w4"])"), graph, conv), 16);
    EXPECT_EQ(nodeSimdSize(quantization::HWConfig::builtin("cpu").value(), graph, conv), 32);
    EXPECT_EQ(simdSizesByNode(configWithWeights(R"("w4")"), graph, 1)[conv.index()], 1);
}

TEST(SimdSize, ABadSimdSizeIsRefusedNamingTheField) {
    const std::string json = R"({"config": {"quantization": {"w": {"bits": 8, "simd_size": 0}}},
        "operations": [{"type": "Convolution", "quantization": {"weights": "w"}}]})";
    const auto parsed = quantization::HWConfig::parse(json, "bad");
    ASSERT_FALSE(parsed.ok());
    EXPECT_NE(parsed.error().toString().find("simd_size"), std::string::npos);
}

} // namespace
} // namespace qs::pruning
