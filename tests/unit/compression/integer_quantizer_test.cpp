// Hand-computed cases of the integer weight quantizer (reference/nncf-quantization.md §5):
// asymmetric and symmetric grids, the negative symmetric scale, constant rows and the epsilon
// floor, group layouts, int4 packing.

#include "core/compression/integer_quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace qs::compression {
namespace {

constexpr float kEps = std::numeric_limits<float>::epsilon();

std::vector<int> signedCodes(const QuantizedWeight& q) {
    std::vector<int> out;
    for (uint8_t code : q.codes) {
        out.push_back(static_cast<int8_t>(code));
    }
    return out;
}

std::vector<int> unsignedCodes(const QuantizedWeight& q) {
    return {q.codes.begin(), q.codes.end()};
}

TEST(WeightLayout, MatMulConvAndStrided) {
    auto matmul = makeWeightLayout({64, 32}, -1);
    ASSERT_TRUE(matmul.ok());
    EXPECT_EQ(matmul->outer, 64);
    EXPECT_EQ(matmul->channels, 32);
    EXPECT_EQ(matmul->inner, 1);
    auto conv = makeWeightLayout({8, 3, 3, 3}, 0);
    ASSERT_TRUE(conv.ok());
    EXPECT_EQ(conv->outer, 1);
    EXPECT_EQ(conv->inner, 27);
    EXPECT_FALSE(conv->hasSingleReductionAxis());
    auto transposed = makeWeightLayout({4, 8, 3, 3}, 1);
    ASSERT_TRUE(transposed.ok());
    EXPECT_EQ(transposed->outer, 4);
    EXPECT_EQ(transposed->inner, 9);
    EXPECT_FALSE(makeWeightLayout({4, 4}, 2).ok());
}

// [K=4, N=2], per output channel (column). Column 0 spans [0, 255]: scale 1, zp 0, and the
// ties 100.5 -> 100, 101.5 -> 102 round half to even. Column 1 spans [-2, 253]: zp 2.
TEST(IntegerQuantizer, Int8AsymPerChannel) {
    const std::vector<float> w = {0, -2, 100.5F, 0, 101.5F, 3, 255, 253};
    auto layout = makeWeightLayout({4, 2}, 1);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int8Asym, -1);
    ASSERT_TRUE(q.ok()) << q.error().toString();
    EXPECT_EQ(q->scaleDims, (std::vector<int64_t>{2}));
    EXPECT_EQ(q->scales, (std::vector<float>{1, 1}));
    EXPECT_EQ(q->zeroPoints, (std::vector<uint8_t>{0, 2}));
    EXPECT_EQ(unsignedCodes(*q), (std::vector<int>{0, 0, 100, 2, 102, 5, 255, 255}));
    EXPECT_EQ(q->dequantizeAxis(), 1);
    const std::vector<float> back = dequantizeWeight(*q);
    EXPECT_EQ(back, (std::vector<float>{0, -2, 100, 0, 102, 3, 255, 253}));
}

// [K=4, N=1], groups of 2 rows: {0, 15} -> scale 1, zp 0; {-1.5, 6} -> scale 0.5, zp 3.
TEST(IntegerQuantizer, Int4AsymGroupedAlongRows) {
    const std::vector<float> w = {0, 15, -1.5F, 6};
    auto layout = makeWeightLayout({4, 1}, 1);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int4Asym, 2);
    ASSERT_TRUE(q.ok()) << q.error().toString();
    EXPECT_EQ(q->scaleDims, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(q->scales, (std::vector<float>{1, 0.5F}));
    EXPECT_EQ(q->zeroPoints, (std::vector<uint8_t>{0, 3}));
    EXPECT_EQ(unsignedCodes(*q), (std::vector<int>{0, 15, 0, 15}));
    EXPECT_EQ(q->dequantizeAxis(), 0);
    EXPECT_EQ(dequantizeWeight(*q), w);
}

// Row 0 {-1, 4, 2, 0.5}: |min| = 1 < max = 4, so s = -4 and scale = -0.5: the largest magnitude
// maps to -8. Row 1 {-4, 1, 3, 0}: |min| = 4 >= 3, scale = 0.5.
TEST(IntegerQuantizer, Int4SymNegativeScale) {
    const std::vector<float> w = {-1, 4, 2, 0.5F, -4, 1, 3, 0};
    auto layout = makeWeightLayout({2, 4}, 0);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int4Sym, 4);
    ASSERT_TRUE(q.ok()) << q.error().toString();
    EXPECT_EQ(q->groupSize, 4); // one group per row stays group-wise: scale [2, 1]
    EXPECT_EQ(q->scaleDims, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(q->scales, (std::vector<float>{-0.5F, 0.5F}));
    EXPECT_TRUE(q->zeroPoints.empty());
    EXPECT_EQ(signedCodes(*q), (std::vector<int>{2, -8, -4, -1, -8, 2, 6, 0}));
    EXPECT_EQ(dequantizeWeight(*q), w);
}

// Group-wise along the contiguous axis (Gemm transB [N, K]): scale [N, K / g].
TEST(IntegerQuantizer, Int8SymGroupedAlongColumns) {
    const std::vector<float> w = {-128, 64, 1, -2, 127, 0, 0, 0};
    auto layout = makeWeightLayout({2, 4}, 0);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int8Sym, 2);
    ASSERT_TRUE(q.ok()) << q.error().toString();
    EXPECT_EQ(q->scaleDims, (std::vector<int64_t>{2, 2}));
    // {-128, 64}: 1; {1, -2}: 2/128; {127, 0}: -127/128; {0, 0}: 0 -> eps.
    EXPECT_EQ(q->scales, (std::vector<float>{1, 2.0F / 128, -127.0F / 128, kEps}));
    EXPECT_EQ(signedCodes(*q), (std::vector<int>{-128, 64, 64, -128, -128, 0, 0, 0}));
    EXPECT_EQ(q->dequantizeAxis(), 1);
}

// Constant rows: the range is 0, so the scale takes the epsilon floor. A positive constant then
// saturates (NNCF's behaviour: zero is not forced into the asymmetric range).
TEST(IntegerQuantizer, ConstantRowsUseEpsilonScale) {
    const std::vector<float> w = {0.7F, 0.7F, -0.7F, -0.7F, 0, 0};
    auto layout = makeWeightLayout({3, 2}, 0);
    auto asym = quantizeWeight(w, *layout, CompressionMode::Int8Asym, -1);
    ASSERT_TRUE(asym.ok());
    EXPECT_EQ(asym->scales, (std::vector<float>{kEps, kEps, kEps}));
    EXPECT_EQ(asym->zeroPoints, (std::vector<uint8_t>{0, 255, 0}));
    EXPECT_EQ(unsignedCodes(*asym), (std::vector<int>{255, 255, 0, 0, 0, 0}));

    auto sym = quantizeWeight(w, *layout, CompressionMode::Int4Sym, -1);
    ASSERT_TRUE(sym.ok());
    // 0.7: |min| >= max, scale 0.7/8, q = round(8) clipped to 7; -0.7 maps to -8 exactly.
    EXPECT_EQ(sym->scales, (std::vector<float>{0.7F / 8, 0.7F / 8, kEps}));
    EXPECT_EQ(signedCodes(*sym), (std::vector<int>{7, 7, -8, -8, 0, 0}));
}

// A huge negative constant: -round(min/scale) overflows int32 and numpy's cast gives INT32_MIN,
// so the zero point clips to 0, not 255.
TEST(IntegerQuantizer, ZeroPointOverflowMatchesNumpyCast) {
    const std::vector<float> w = {-1000, -1000};
    auto layout = makeWeightLayout({1, 2}, 0);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int8Asym, -1);
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(q->zeroPoints, (std::vector<uint8_t>{0}));
    EXPECT_EQ(unsignedCodes(*q), (std::vector<int>{0, 0}));
}

TEST(IntegerQuantizer, StridedPerChannel) {
    // [2, 2, 2] with the channel in the middle: channel 0 = {0, 1, 4, 5}, channel 1 = {2, 3, 6, 7}
    std::vector<float> w(8);
    for (size_t i = 0; i < w.size(); ++i) {
        w[i] = static_cast<float>(i);
    }
    auto layout = makeWeightLayout({2, 2, 2}, 1);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int8Asym, -1);
    ASSERT_TRUE(q.ok());
    EXPECT_EQ(q->scales, (std::vector<float>{5.0F / 255, 5.0F / 255}));
    EXPECT_EQ(q->zeroPoints, (std::vector<uint8_t>{0, 0}));
    EXPECT_EQ(q->codes[5], 255); // element 5 is channel 0's max
    EXPECT_EQ(q->codes[7], 255);
    EXPECT_EQ(q->codes[0], 0);
    EXPECT_EQ(q->zeroPoints[1], 0); // zero is not forced into [2, 7]: 2 maps to round(102)
    EXPECT_EQ(q->codes[2], 102);
}

TEST(IntegerQuantizer, GroupSizeErrors) {
    std::vector<float> w(size_t{96} * 4, 1.0F);
    auto layout = makeWeightLayout({96, 4}, 1);
    auto q = quantizeWeight(w, *layout, CompressionMode::Int4Asym, 128);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.error().message(), "Channel size 96 should be divisible by size of group 128");
    auto conv = makeWeightLayout({4, 2, 3, 3}, 0);
    std::vector<float> c(72, 1.0F);
    auto grouped = quantizeWeight(c, *conv, CompressionMode::Int4Asym, 2);
    ASSERT_FALSE(grouped.ok());
    EXPECT_EQ(grouped.error().code(), Errc::Unsupported);
    EXPECT_FALSE(quantizeWeight(c, *conv, CompressionMode::None, -1).ok());
}

TEST(IntegerQuantizer, ErrorMetrics) {
    // Column 0 of the int8 case loses 0.5 at two elements: channel means 0.5/4 and 0.
    const std::vector<float> w = {0, -2, 100.5F, 0, 101.5F, 3, 255, 253};
    auto layout = makeWeightLayout({4, 2}, 1);
    auto maxMean =
        quantizationError(w, *layout, CompressionMode::Int8Asym, -1, ErrorMetric::MaxMean);
    ASSERT_TRUE(maxMean.ok());
    EXPECT_DOUBLE_EQ(*maxMean, 0.5 / 4);
    auto frobenius =
        quantizationError(w, *layout, CompressionMode::Int8Asym, -1, ErrorMetric::Frobenius);
    EXPECT_DOUBLE_EQ(*frobenius, std::sqrt(0.5));
}

TEST(Int4Packing, LowNibbleFirst) {
    const std::vector<uint8_t> codes = {0x1, 0xF, 0x8, 0x7, 0xA};
    const std::string packed = packInt4(codes);
    ASSERT_EQ(packed.size(), 3U);
    EXPECT_EQ(static_cast<uint8_t>(packed[0]), 0xF1);
    EXPECT_EQ(static_cast<uint8_t>(packed[1]), 0x78);
    EXPECT_EQ(static_cast<uint8_t>(packed[2]), 0x0A);
    EXPECT_EQ(unpackInt4(packed, 5, false), codes);
    const std::vector<uint8_t> signedCodes = {0xF8, 0x07, 0xFF};
    EXPECT_EQ(unpackInt4(packInt4(signedCodes), 3, true), signedCodes);
}

} // namespace
} // namespace qs::compression
