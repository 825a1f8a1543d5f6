// QuantizerConfig predicates, string form and merge ordering.

#include "core/quantization/merge_configs.h"
#include "core/quantization/quantizer_config.h"

#include <gtest/gtest.h>

namespace qs::quantization {
namespace {

QuantizerConfig cfg(int bits, QuantizationMode mode = QuantizationMode::Symmetric,
                    bool perChannel = false) {
    QuantizerConfig c;
    c.numBits = bits;
    c.mode = mode;
    c.perChannel = perChannel;
    return c;
}

TEST(QuantizerConfigTest, StringFormIsNncfs) {
    EXPECT_EQ(QuantizerConfig{}.toString(), "B:8 M:S SGN:ANY PC:N NR:N");
    QuantizerConfig w = cfg(4, QuantizationMode::Asymmetric, true);
    w.signednessToForce = true;
    w.narrowRange = true;
    EXPECT_EQ(w.toString(), "B:4 M:A SGN:S PC:Y NR:Y");
}

TEST(QuantizerConfigTest, RequantizationValidity) {
    const QuantizerConfig up8 = cfg(8);
    EXPECT_TRUE(cfg(4).isValidRequantizationFor(up8));
    EXPECT_FALSE(cfg(16).isValidRequantizationFor(up8));
    EXPECT_FALSE(cfg(4, QuantizationMode::Asymmetric).isValidRequantizationFor(up8));
    QuantizerConfig forced = up8;
    forced.signednessToForce = true;
    EXPECT_FALSE(cfg(4).isValidRequantizationFor(forced));
    QuantizerConfig narrow = cfg(4);
    narrow.narrowRange = true;
    EXPECT_FALSE(narrow.isValidRequantizationFor(up8));
}

TEST(QuantizerConfigTest, RedundancyAndCompatibility) {
    EXPECT_TRUE(cfg(8).isRedundantWithDownstream(cfg(8, QuantizationMode::Asymmetric, true)));
    EXPECT_FALSE(cfg(8, QuantizationMode::Asymmetric).isRedundantWithDownstream(cfg(8)));
    EXPECT_FALSE(cfg(8, QuantizationMode::Symmetric, true).isRedundantWithDownstream(cfg(8)));
    EXPECT_FALSE(cfg(8).isRedundantWithDownstream(cfg(4)));
    QuantizerConfig signedCfg = cfg(8);
    signedCfg.signednessToForce = true;
    EXPECT_TRUE(cfg(8).isCompatibleWith(signedCfg));
    EXPECT_FALSE(cfg(8).isCompatibleWith(cfg(8, QuantizationMode::Symmetric, true)));
}

TEST(QuantizerConfigTest, MergedListOrderedByBranchPriorityThenTieBreak) {
    const QuantizerConfigList a = {cfg(8, QuantizationMode::Symmetric, true), cfg(8),
                                   cfg(16, QuantizationMode::Symmetric, true), cfg(16)};
    const QuantizerConfigList b = {cfg(8), cfg(16), cfg(4)};
    const MergedConfigs all =
        mergeConfigsForBranches({a, b}, QuantizerPropagationRule::MergeAllInOne);
    EXPECT_EQ(all.mergedList, (QuantizerConfigList{cfg(8), cfg(16)}));
    EXPECT_FALSE(all.branchLists[0].has_value());
    const MergedConfigs requant =
        mergeConfigsForBranches({a, b}, QuantizerPropagationRule::MergeWithPotentialRequantization);
    EXPECT_EQ(requant.mergedList,
              (QuantizerConfigList{cfg(8), cfg(16), cfg(16, QuantizationMode::Symmetric, true)}));
    EXPECT_TRUE(requant.branchLists[0].has_value());
    EXPECT_TRUE(requant.branchLists[1].has_value());
    EXPECT_TRUE(mergeConfigsForBranches({a, b}, QuantizerPropagationRule::MergeIfAllBranchesSame)
                    .mergedList.empty());
    EXPECT_TRUE(mergeConfigsForBranches({a, a}, QuantizerPropagationRule::DoNotMergeBranches)
                    .mergedList.empty());
    // Equal priority: more bits first.
    EXPECT_EQ(orderByBranchPriority({cfg(4), cfg(8)}, {{cfg(4), cfg(8)}, {cfg(8), cfg(4)}}),
              (QuantizerConfigList{cfg(8), cfg(4)}));
}

TEST(QuantizerConfig, JsonRoundTripsAndRejectsUnknownModes) {
    QuantizerConfig forced = cfg(4, QuantizationMode::Asymmetric, true);
    forced.signednessToForce = false;
    forced.narrowRange = true;
    for (const QuantizerConfig& config : {cfg(8), forced}) {
        auto back = quantizerConfigFromJson(toJson(config), "qconfig");
        ASSERT_TRUE(back.ok()) << back.error().toString();
        EXPECT_EQ(*back, config) << config.toString();
    }
    const auto errorOf = [](const nlohmann::json& json) {
        auto read = quantizerConfigFromJson(json, "qconfig");
        return read.ok() ? std::string("accepted") : read.error().message();
    };
    nlohmann::json bad = toJson(cfg(8));
    bad["mode"] = "Symmetric";
    EXPECT_EQ(errorOf(bad),
              "qconfig.mode: unknown quantization mode 'Symmetric' (expected symmetric or "
              "asymmetric)");
    bad.erase("mode");
    EXPECT_EQ(errorOf(bad), "qconfig.mode: missing");
    bad = toJson(cfg(8));
    bad["num_bits"] = 1e30; // no float-to-int conversion before the range check
    EXPECT_EQ(errorOf(bad), "qconfig.num_bits: expected an integer in 2..16, got 1e+30");
    bad["num_bits"] = 4294967304LL;
    EXPECT_EQ(errorOf(bad), "qconfig.num_bits: 4294967304 is out of range 2..16");
    bad["num_bits"] = "8";
    EXPECT_EQ(errorOf(bad), "qconfig.num_bits: expected an integer in 2..16, got a string");
    bad = toJson(cfg(8));
    bad["per_channel"] = 1;
    EXPECT_EQ(errorOf(bad), "qconfig.per_channel: expected true or false, got an integer");
    bad = toJson(cfg(8));
    bad["levels"] = 256;
    EXPECT_NE(errorOf(bad).find("qconfig.levels: unknown field"), std::string::npos);
}

} // namespace
} // namespace qs::quantization
