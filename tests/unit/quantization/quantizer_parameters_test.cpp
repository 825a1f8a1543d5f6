// parametersFromMinMax against hand-computed values for every branch of §3's formulas:
// symmetric signed / unsigned / forced, the levels/(levels-2) factor, narrow range, the zero
// filter, asymmetric widening, zero inclusion and both zero-point snapping options, 2/4/8 bits.

#include "core/quantization/quantizer_parameters.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace qs::quantization {
namespace {

QuantizerConfig cfg(int bits, QuantizationMode mode, bool narrow = false,
                    std::optional<bool> signedness = std::nullopt, bool perChannel = false) {
    QuantizerConfig c;
    c.numBits = bits;
    c.mode = mode;
    c.narrowRange = narrow;
    c.signednessToForce = signedness;
    c.perChannel = perChannel;
    return c;
}

constexpr auto kSym = QuantizationMode::Symmetric;
constexpr auto kAsym = QuantizationMode::Asymmetric;

QuantizerParameters perTensor(const QuantizerConfig& config, float min, float max) {
    const std::vector<float> lo{min};
    const std::vector<float> hi{max};
    auto params = parametersFromMinMax(config, lo, hi, std::nullopt);
    EXPECT_TRUE(params.ok()) << params.error().toString();
    return std::move(params).value();
}

void expectParams(const QuantizerParameters& p, int qmin, int qmax, float lo, float hi, float scale,
                  int zp, size_t channel = 0) {
    EXPECT_EQ(p.quantMin, qmin);
    EXPECT_EQ(p.quantMax, qmax);
    EXPECT_NEAR(p.inputLow.at(channel), lo, 1e-6F * (1.0F + std::abs(lo)));
    EXPECT_NEAR(p.inputHigh.at(channel), hi, 1e-6F * (1.0F + std::abs(hi)));
    EXPECT_NEAR(p.scale.at(channel), scale, 1e-6F * scale);
    EXPECT_EQ(p.zeroPoint.at(channel), zp);
}

TEST(QuantizerParametersTest, SymmetricSignedFullRangeUses128Over127) {
    // hi = 2.54; lo = -2.54 * 256/254 = -2.56; scale = 5.1/255 = 0.02; zp = -128 - round(-128).
    const auto p = perTensor(cfg(8, kSym), -1.0F, 2.54F);
    EXPECT_TRUE(p.isSigned);
    EXPECT_EQ(p.levels(), 256);
    expectParams(p, -128, 127, -2.56F, 2.54F, 0.02F, 0);
}

TEST(QuantizerParametersTest, SymmetricSignedNarrowRange) {
    // lo = -hi; grid -127..127 (255 levels); scale = 2.54/254 = 0.01; zp = -127 - round(-127).
    const auto p = perTensor(cfg(8, kSym, true), -1.0F, 1.27F);
    EXPECT_EQ(p.levels(), 255);
    expectParams(p, -127, 127, -1.27F, 1.27F, 0.01F, 0);
}

TEST(QuantizerParametersTest, SymmetricUnsignedFromStatistics) {
    const auto p = perTensor(cfg(8, kSym), 0.0F, 2.55F);
    EXPECT_FALSE(p.isSigned);
    expectParams(p, 0, 255, 0.0F, 2.55F, 0.01F, 0);
    // Narrow unsigned: high - 1, so 0..254 and scale = 2.54 / 254.
    const auto narrow = perTensor(cfg(8, kSym, true), 0.5F, 2.54F);
    expectParams(narrow, 0, 254, 0.0F, 2.54F, 0.01F, 0);
}

TEST(QuantizerParametersTest, ForcedSignednessOverridesStatistics) {
    // Forced signed on non-negative data: lo = -1.27 * 128/127 = -1.28, scale = 2.55/255.
    const auto forcedSigned = perTensor(cfg(8, kSym, false, true), 0.0F, 1.27F);
    EXPECT_TRUE(forcedSigned.isSigned);
    expectParams(forcedSigned, -128, 127, -1.28F, 1.27F, 0.01F, 0);
    // Forced unsigned only keeps non-negative data unsigned: negative statistics still make it
    // signed, as in NNCF's symmetric_range (signed = forced signed or any min < 0).
    const auto forcedUnsigned = perTensor(cfg(8, kSym, false, false), 0.0F, 2.55F);
    EXPECT_FALSE(forcedUnsigned.isSigned);
    expectParams(forcedUnsigned, 0, 255, 0.0F, 2.55F, 0.01F, 0);
    const auto negativeStats = perTensor(cfg(8, kSym, false, false), -1.0F, 1.27F);
    EXPECT_TRUE(negativeStats.isSigned);
    expectParams(negativeStats, -128, 127, -1.28F, 1.27F, 0.01F, 0);
}

TEST(QuantizerParametersTest, SymmetricZeroFilterPerChannel) {
    // threshold = max(0.01 * 2.0, 8e-5) = 0.02 lifts channels 1 and 2; one negative min makes the
    // whole quantizer signed; narrow so lo = -hi and scale = hi / 127.
    const std::vector<float> mins{-1.0F, 0.0F, 0.0F};
    const std::vector<float> maxs{2.0F, 0.0F, 0.001F};
    auto result = parametersFromMinMax(cfg(8, kSym, true, std::nullopt, true), mins, maxs, 0);
    ASSERT_TRUE(result.ok()) << result.error().toString();
    const auto& p = *result;
    EXPECT_TRUE(p.isPerChannel());
    EXPECT_EQ(p.channelAxis, 0);
    ASSERT_EQ(p.scale.size(), 3U);
    expectParams(p, -127, 127, -2.0F, 2.0F, 2.0F / 127.0F, 0, 0);
    expectParams(p, -127, 127, -0.02F, 0.02F, 0.02F / 127.0F, 0, 1);
    expectParams(p, -127, 127, -0.02F, 0.02F, 0.02F / 127.0F, 0, 2);
}

TEST(QuantizerParametersTest, SymmetricZeroFilterFloor) {
    // An all-zero tensor: hi = 8e-5, unsigned, scale = 8e-5/255.
    const auto p = perTensor(cfg(8, kSym), 0.0F, 0.0F);
    expectParams(p, 0, 255, 0.0F, 8e-5F, 8e-5F / 255.0F, 0);
}

TEST(QuantizerParametersTest, SymmetricLowBitGrids) {
    // 4-bit signed: grid -8..7, 16 levels, lo = -0.7 * 16/14 = -0.8, scale = 1.5/15 = 0.1.
    expectParams(perTensor(cfg(4, kSym), -1.0F, 0.7F), -8, 7, -0.8F, 0.7F, 0.1F, 0);
    // 4-bit unsigned: 0..15, scale = 1.5/15.
    expectParams(perTensor(cfg(4, kSym), 0.0F, 1.5F), 0, 15, 0.0F, 1.5F, 0.1F, 0);
    // 4-bit signed narrow: -7..7, scale = 1.4/14.
    expectParams(perTensor(cfg(4, kSym, true), -1.0F, 0.7F), -7, 7, -0.7F, 0.7F, 0.1F, 0);
    // 2-bit signed: -2..1, 4 levels, factor 4/2, lo = -2, scale = 3/3.
    expectParams(perTensor(cfg(2, kSym), -1.0F, 1.0F), -2, 1, -2.0F, 1.0F, 1.0F, 0);
}

TEST(QuantizerParametersTest, AsymmetricSnapKeepsHighWhenWider) {
    // lo=-1, hi=3: q0 = round(255/4 = 63.75) = 64. Keep hi: lo' = 64/(64-255)*3 = -192/191,
    // range 4.00524. Keep lo: hi' = 191/64 = 2.984, range 3.984. Keep hi wins.
    // scale = (3 + 192/191)/255 = 3/191; zp = -round(-64) = 64.
    const auto p = perTensor(cfg(8, kAsym), -1.0F, 3.0F);
    EXPECT_FALSE(p.isSigned);
    expectParams(p, 0, 255, -192.0F / 191.0F, 3.0F, 3.0F / 191.0F, 64);
}

TEST(QuantizerParametersTest, AsymmetricSnapKeepsLowWhenWider) {
    // lo=-1, hi=2.9: q0 = round(255/3.9 = 65.38) = 65. Keep hi: lo' = -65/190*2.9 = -0.99211,
    // range 3.892. Keep lo: hi' = 190/65 = 38/13, range 3.923. Keep lo wins.
    // scale = (1 + 38/13)/255 = 1/65; zp = -round(-65) = 65.
    const auto p = perTensor(cfg(8, kAsym), -1.0F, 2.9F);
    expectParams(p, 0, 255, -1.0F, 38.0F / 13.0F, 1.0F / 65.0F, 65);
}

TEST(QuantizerParametersTest, AsymmetricIncludesZero) {
    // All positive: lo moves to 0. All negative: hi moves to 0, zp = 255.
    expectParams(perTensor(cfg(8, kAsym), 1.0F, 2.55F), 0, 255, 0.0F, 2.55F, 0.01F, 0);
    expectParams(perTensor(cfg(8, kAsym), -2.55F, -1.0F), 0, 255, -2.55F, 0.0F, 0.01F, 255);
}

TEST(QuantizerParametersTest, AsymmetricWidensTinyRange) {
    // [0.5, 0.5] -> [0.4992, 0.5008] -> zero included -> [0, 0.5008].
    expectParams(perTensor(cfg(8, kAsym), 0.5F, 0.5F), 0, 255, 0.0F, 0.5008F, 0.5008F / 255.0F, 0);
    // A range just wide enough is left alone.
    expectParams(perTensor(cfg(8, kAsym), 0.0F, 0.001F), 0, 255, 0.0F, 0.001F, 0.001F / 255.0F, 0);
}

TEST(QuantizerParametersTest, AsymmetricNarrowAndLowBit) {
    // Narrow: grid 1..255, scale = 2.54/254, zp = 1 - round(0) = 1.
    expectParams(perTensor(cfg(8, kAsym, true), 0.0F, 2.54F), 1, 255, 0.0F, 2.54F, 0.01F, 1);
    // 4-bit: L = 15, q0 = round(15/3) = 5 exact, both options equal -> keep lo; scale = 3/15,
    // zp = 5.
    expectParams(perTensor(cfg(4, kAsym), -1.0F, 2.0F), 0, 15, -1.0F, 2.0F, 0.2F, 5);
}

TEST(QuantizerParametersTest, RejectsBadInput) {
    const std::vector<float> one{0.0F};
    const std::vector<float> two{0.0F, 1.0F};
    const std::vector<float> nan{std::nanf("")};
    const std::vector<float> minusOne{-1.0F};
    EXPECT_FALSE(parametersFromMinMax(cfg(1, kSym), one, one, std::nullopt).ok());
    EXPECT_FALSE(parametersFromMinMax(cfg(8, kSym), one, two, std::nullopt).ok());
    EXPECT_FALSE(parametersFromMinMax(cfg(8, kSym), two, two, std::nullopt).ok());
    EXPECT_FALSE(
        parametersFromMinMax(cfg(8, kSym, false, std::nullopt, true), two, two, std::nullopt).ok());
    EXPECT_FALSE(parametersFromMinMax(cfg(8, kSym), one, one, 1).ok());
    EXPECT_FALSE(parametersFromMinMax(cfg(8, kSym), nan, one, std::nullopt).ok());
    const auto inverted = parametersFromMinMax(cfg(8, kSym), one, minusOne, std::nullopt);
    ASSERT_FALSE(inverted.ok());
    EXPECT_NE(inverted.error().message().find("invalid statistics"), std::string::npos);
}

TEST(QuantizerParametersTest, EncodingsJson) {
    SingleConfigQuantizerSetup setup;
    setup.quantizationPoints[1].insertionPoint = {false, "conv", 0};
    setup.quantizationPoints[2].insertionPoint = {true, "conv", std::nullopt};
    setup.unifiedScaleGroups[0] = {1};
    QuantizerParametersMap params;
    params[1] = perTensor(cfg(8, kSym), -1.0F, 2.54F);
    params[2] = perTensor(cfg(8, kSym, true), -1.0F, 1.27F);
    const nlohmann::json json = toJson(setup, params);
    const auto& q1 = json.at("quantizers").at("1");
    EXPECT_EQ(q1.at("insertion_point"), "conv:0");
    EXPECT_EQ(q1.at("unified_scale_group"), 0);
    EXPECT_EQ(q1.at("zero_point").at(0), 0);
    EXPECT_NEAR(q1.at("scale").at(0).get<float>(), 0.02F, 1e-8F);
    const auto& q2 = json.at("quantizers").at("2");
    EXPECT_EQ(q2.at("insertion_point"), "conv[W]");
    EXPECT_TRUE(q2.at("is_weight").get<bool>());
    EXPECT_EQ(q2.at("quant_min"), -127);
    EXPECT_TRUE(q2.at("unified_scale_group").is_null());
}

} // namespace
} // namespace qs::quantization
