// HW config loading: alias expansion order, built-in devices, validation errors naming the field.

#include "core/quantization/hw_config.h"

#include <gtest/gtest.h>

namespace qs::quantization {
namespace {

TEST(HWConfigTest, AliasExpandsInKeyOrderLastKeyFastest) {
    auto hw = HWConfig::builtin("cpu");
    ASSERT_TRUE(hw.ok()) << hw.error().toString();
    const HWConfigOp* embedding = hw->findOp("Embedding");
    ASSERT_NE(embedding, nullptr);
    ASSERT_GE(embedding->weights.size(), 4u);
    // q8_w_sym_any_nr -> [PC/nr=T, PC/nr=F, PT/nr=T, PT/nr=F], signedness forced.
    EXPECT_EQ(embedding->weights[0].toString(), "B:8 M:S SGN:S PC:Y NR:Y");
    EXPECT_EQ(embedding->weights[1].toString(), "B:8 M:S SGN:S PC:Y NR:N");
    EXPECT_EQ(embedding->weights[2].toString(), "B:8 M:S SGN:S PC:N NR:Y");
    EXPECT_EQ(embedding->weights[3].toString(), "B:8 M:S SGN:S PC:N NR:N");
    EXPECT_FALSE(embedding->hasActivations);
    const HWConfigOp* conv = hw->findOp("Convolution");
    ASSERT_NE(conv, nullptr);
    ASSERT_EQ(conv->activations.size(), 4u);
    EXPECT_EQ(conv->activations[0].toString(), "B:8 M:S SGN:ANY PC:N NR:N");
    EXPECT_EQ(conv->activations[1].toString(), "B:8 M:A SGN:ANY PC:N NR:N");
    EXPECT_TRUE(hw->findOp("Concat")->unifiedScales());
    EXPECT_FALSE(hw->findOp("Add")->unifiedScales());
}

TEST(HWConfigTest, NpuHasLowBitOptionsAndUnifiedEltwise) {
    auto hw = HWConfig::builtin("NPU");
    ASSERT_TRUE(hw.ok());
    const HWConfigOp* conv = hw->findOp("Convolution");
    EXPECT_EQ(conv->activations.back().numBits, 4);
    EXPECT_EQ(conv->weights.back().numBits, 2);
    EXPECT_TRUE(hw->findOp("Add")->unifiedScales());
    EXPECT_FALSE(hw->findOp("LogicalNot")->unifiedScales());
    auto gpu = HWConfig::builtin("gpu");
    ASSERT_TRUE(gpu.ok());
    EXPECT_TRUE(gpu->findOp("Interpolate", "linear")->hasActivations);
    EXPECT_FALSE(gpu->findOp("Interpolate", "nearest")->hasActivations);
    EXPECT_TRUE(HWConfig::builtin("any").ok());
    EXPECT_FALSE(HWConfig::builtin("tpu").ok());
}

TEST(HWConfigTest, ErrorsNameTheField) {
    auto unknownAlias = HWConfig::parse(
        R"({"operations": [{"type": "Convolution", "quantization": {"activations": "q8_nope"}}]})",
        "user.json");
    ASSERT_FALSE(unknownAlias.ok());
    EXPECT_NE(unknownAlias.error().toString().find("operations[0].quantization.activations"),
              std::string::npos);
    EXPECT_NE(unknownAlias.error().toString().find("q8_nope"), std::string::npos);
    auto badMode = HWConfig::parse(
        R"({"config": {"quantization": {"q8": {"bits": 8, "mode": "sym"}}}, "operations": [{"type": "Add", "quantization": {"activations": "q8"}}]})",
        "user.json");
    ASSERT_FALSE(badMode.ok());
    EXPECT_NE(badMode.error().toString().find("config.quantization.q8.mode"), std::string::npos);
    auto unknownField =
        HWConfig::parse(R"({"operations": [{"type": "Add", "colour": 1}]})", "user.json");
    ASSERT_FALSE(unknownField.ok());
    EXPECT_NE(unknownField.error().toString().find("operations[0].colour"), std::string::npos);
    EXPECT_FALSE(HWConfig::parse("{not json", "user.json").ok());
    // A bare word that is no file is a device name: the error lists the built-in ones.
    auto unknownDevice = HWConfig::fromArgument("tpu");
    ASSERT_FALSE(unknownDevice.ok());
    EXPECT_EQ(unknownDevice.error().message(),
              "unknown HW config 'tpu' (expected cpu, gpu, npu or a .json file)");
}

TEST(HWConfigTest, HostileFilesAreRefusedBeforeTheyCost) {
    const auto errorOf = [](const std::string& text) {
        auto parsed = HWConfig::parse(text, "user.json");
        return parsed.ok() ? std::string("accepted") : parsed.error().toString();
    };
    // A bit width checked as the JSON integer it is: 2^32 + 8 must not wrap to 8.
    EXPECT_EQ(
        errorOf(
            R"({"config": {"quantization": {"q": {"bits": 4294967304}}}, "operations": [{"type": "Add", "quantization": {"activations": "q"}}]})"),
        "HW config 'user.json': HW config field 'config.quantization.q.bits': expected an "
        "integer bit width 1..32, got 4294967304");
    EXPECT_EQ(errorOf(R"({"operations": [], "operations": []})"),
              "HW config 'user.json': operations: key given twice");
    // Eleven fields of four values each would expand into 4^11 configs.
    std::string alias;
    for (const char* field : {"bits", "mode", "granularity", "narrow_range", "signedness_to_force",
                              "level_low", "level_high", "simd_size"}) {
        alias += std::string(alias.empty() ? "" : ", ") + "\"" + field + "\": ";
        alias +=
            std::string(field) == "bits"          ? "[2, 4, 6, 8]"
            : std::string(field) == "mode"        ? "[\"symmetric\", \"asymmetric\"]"
            : std::string(field) == "granularity" ? "[\"perchannel\", \"pertensor\"]"
            : std::string(field) == "narrow_range" || std::string(field) == "signedness_to_force"
                ? "[true, false]"
                : "[1, 2, 3, 4, 5, 6, 7, 8]";
    }
    EXPECT_NE(
        errorOf(R"({"config": {"quantization": {"q": {)" + alias +
                R"(}}}, "operations": [{"type": "Add", "quantization": {"activations": "q"}}]})")
            .find("expands into more than 1024 quantizer configs"),
        std::string::npos);
}

TEST(HWConfigTest, InlineDictAndDeduplication) {
    auto hw = HWConfig::parse(
        R"({"config": {"quantization": {"q8": {"bits": 8, "mode": ["symmetric", "asymmetric"], "granularity": "pertensor"}}},
            "operations": [{"type": "MatMul", "quantization": {"activations": ["q8", "q8", {"bits": 4, "mode": ["symmetric"], "granularity": ["pertensor"]}]}}]})",
        "user.json");
    ASSERT_TRUE(hw.ok()) << hw.error().toString();
    const auto& list = hw->findOp("MatMul")->activations;
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[2].numBits, 4);
}

} // namespace
} // namespace qs::quantization
