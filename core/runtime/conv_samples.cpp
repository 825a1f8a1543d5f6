// Conv's test samples (the op registry checks the fast kernel against the reference and the VJP
// against finite differences on each): every kernel path of ops/conv.cpp and its edges.
#include "core/runtime/conv_samples.h"

#include "core/runtime/conv_kernels.h"
#include "core/runtime/op_util.h"

#include <utility>

namespace qs::runtime {
namespace {

/// A sample of the executor's fused form: clamp to [0, 6] (ReLU6) after a residual chosen so that
/// conv + residual lands at least 0.2 away from both bounds, so finite differences never straddle
/// a kink of the clamp.
OpSample fusedSample(std::mt19937& rng, ConvReference reference, std::string label,
                     std::vector<graph::Attribute> attrs, std::vector<Tensor> inputs) {
    graph::Node node;
    node.opType = "Conv";
    node.attributes = attrs;
    const OpContext ctx{node, inputs};
    const Tensor plain = reference(ctx).value()[0];
    Tensor residual = randomAwayFromZero(rng, plain.shape(), 0.2F);
    float* r = residual.mutableData<float>();
    for (int64_t i = 0; i < residual.numElements(); ++i) {
        r[i] -= plain.data<float>()[i];
    }
    inputs.resize(3);
    inputs.push_back(residual);
    attrs.push_back(floatAttribute(std::string(kFusedMinAttr), 0.0F));
    attrs.push_back(floatAttribute(std::string(kFusedMaxAttr), 6.0F));
    return {std::move(label), std::move(attrs), std::move(inputs), {}};
}

/// Depthwise samples: the direct kernel's stride phases, asymmetric pads, dilations and the
/// generic tap loop (9x9), on rows wide enough for its vector loop.
std::vector<OpSample> depthwiseSamples(std::mt19937& rng) {
    std::vector<OpSample> out;
    out.push_back({"depthwise 3x3 stride 1 pad 1",
                   {intAttribute("group", 4), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 4, 9, 19}), randomTensor(rng, {4, 1, 3, 3}),
                    randomTensor(rng, {4})},
                   {}});
    out.push_back(
        {"depthwise stride 2",
         {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1}),
          intsAttribute("strides", {2, 2})},
         {randomTensor(rng, {2, 3, 6, 6}), randomTensor(rng, {3, 1, 3, 3}), randomTensor(rng, {3})},
         {}});
    out.push_back({"depthwise stride 2 asym pads wide",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 2, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 8, 37}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise dilation 2 stride (1, 3) 5x3",
                   {intAttribute("group", 2), intsAttribute("dilations", {2, 2}),
                    intsAttribute("strides", {1, 3}), intsAttribute("pads", {2, 3, 1, 2})},
                   {randomTensor(rng, {1, 2, 10, 40}), randomTensor(rng, {2, 1, 5, 3}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise dilation 2 stride 1 asym pads",
                   {intAttribute("group", 2), intsAttribute("dilations", {2, 2}),
                    intsAttribute("pads", {1, 3, 2, 0})},
                   {randomTensor(rng, {1, 2, 7, 12}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 9x9 (tap count not unrolled)",
                   {intAttribute("group", 2), intsAttribute("pads", {4, 4, 4, 4})},
                   {randomTensor(rng, {1, 2, 10, 11}), randomTensor(rng, {2, 1, 9, 9})},
                   {}});
    // The 3x3 fast path (conv_kernels.cpp): stride 1 tall enough to read the input in place
    // between staged top and bottom bands, odd widths, planes smaller than one vector, and each
    // stride-2 column pattern (begin pads 0, 1, 2; rows and columns differing).
    out.push_back({"depthwise 3x3 stride 1 in place, batch 2, odd width",
                   {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {2, 3, 20, 13}), randomTensor(rng, {3, 1, 3, 3}),
                    randomTensor(rng, {3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 1 below one vector",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 2, 2, 3}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back(
        {"depthwise 3x3 stride 1 bottom pad 2, width 8",
         {intAttribute("group", 2), intsAttribute("pads", {1, 1, 2, 1})},
         {randomTensor(rng, {1, 2, 6, 8}), randomTensor(rng, {2, 1, 3, 3}), randomTensor(rng, {2})},
         {}});
    out.push_back({"depthwise 3x3 stride 1 one column",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 2, 9, 1}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads 0 (end 1)",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {2, 2, 8, 20}), randomTensor(rng, {2, 1, 3, 3}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads top 1 left 0, odd height",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 0, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 9, 10}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 pads 2",
                   {intAttribute("group", 2), intsAttribute("pads", {2, 2, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 7, 19}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise 3x3 stride 2 below one vector",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 3, 4}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    // The AVX-512 row kernel (depthwise_wide.cpp: every 3x3 and 5x5 one at stride 2, at stride 1
    // rows of 8 to 15 and 5x5 ones on longer rows; also the 3x3 samples above with such rows):
    // rows of several 16-output chunks with a partial last one, a single partial chunk, groups of
    // four output rows and the rows left over, begin pads 0 to 2 (a first chunk reaching left of
    // its row), rows of whole chunks, and 5x5 at stride 2 reading a third vector per row.
    out.push_back({"depthwise wide 3x3 stride 2, rows of 35, 10 rows",
                   {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 3, 19, 70}), randomTensor(rng, {3, 1, 3, 3}),
                    randomTensor(rng, {3})},
                   {}});
    out.push_back({"depthwise wide 3x3 stride 2 pads 0, rows of two whole chunks",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 1, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 10, 64}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise wide 5x5 stride 1, rows of 37, batch 2",
                   {intAttribute("group", 2), intsAttribute("pads", {2, 2, 2, 2})},
                   {randomTensor(rng, {2, 2, 9, 37}), randomTensor(rng, {2, 1, 5, 5}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise wide 5x5 stride 1, rows of 10",
                   {intAttribute("group", 2), intsAttribute("pads", {2, 2, 2, 2})},
                   {randomTensor(rng, {1, 2, 6, 10}), randomTensor(rng, {2, 1, 5, 5})},
                   {}});
    out.push_back({"depthwise wide 3x3 stride 1 no left pad, rows of 12",
                   {intAttribute("group", 2), intsAttribute("pads", {1, 0, 1, 2})},
                   {randomTensor(rng, {1, 2, 7, 12}), randomTensor(rng, {2, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise wide 3x3 stride 2 end pads 4, windows past the row and plane",
                   {intAttribute("group", 2), intsAttribute("pads", {0, 0, 4, 4}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 9, 40}), randomTensor(rng, {2, 1, 3, 3}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back({"depthwise wide 5x5 stride 2 asym pads, rows of 33",
                   {intAttribute("group", 2), intsAttribute("pads", {2, 1, 1, 2}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {1, 2, 11, 66}), randomTensor(rng, {2, 1, 5, 5}),
                    randomTensor(rng, {2})},
                   {}});
    out.push_back(
        {"depthwise 1-D stride 2",
         {intAttribute("group", 2), intsAttribute("pads", {1, 1}), intsAttribute("strides", {2})},
         {randomTensor(rng, {1, 2, 23}), randomTensor(rng, {2, 1, 3})},
         {}});
    // The channel-blocked kernel (8 channels or more, rows of at most 16 or 28; blocks of 8, or
    // 16 with AVX-512): partial channel blocks, plane sizes on and off whole transposes, strides,
    // dilations, asymmetric pads and a kernel width it does not unroll.
    out.push_back({"depthwise blocked 5x5 pad 2, 12 channels, 7x7",
                   {intAttribute("group", 12), intsAttribute("pads", {2, 2, 2, 2})},
                   {randomTensor(rng, {1, 12, 7, 7}), randomTensor(rng, {12, 1, 5, 5}),
                    randomTensor(rng, {12})},
                   {}});
    out.push_back({"depthwise blocked 5x5 stride 2 asym pads, batch 2",
                   {intAttribute("group", 16), intsAttribute("pads", {1, 2, 2, 1}),
                    intsAttribute("strides", {2, 2})},
                   {randomTensor(rng, {2, 16, 13, 11}), randomTensor(rng, {16, 1, 5, 5}),
                    randomTensor(rng, {16})},
                   {}});
    out.push_back({"depthwise blocked 3x3 pad 1, 8x8 (whole transposes), no bias",
                   {intAttribute("group", 8), intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {1, 8, 8, 8}), randomTensor(rng, {8, 1, 3, 3})},
                   {}});
    out.push_back({"depthwise blocked 3x3 dilation 2 stride (2, 1), 25 channels",
                   {intAttribute("group", 25), intsAttribute("dilations", {2, 2}),
                    intsAttribute("strides", {2, 1}), intsAttribute("pads", {2, 0, 1, 3})},
                   {randomTensor(rng, {1, 25, 9, 10}), randomTensor(rng, {25, 1, 3, 3}),
                    randomTensor(rng, {25})},
                   {}});
    out.push_back({"depthwise blocked 7x7 (width not unrolled), 16 wide",
                   {intAttribute("group", 8), intsAttribute("pads", {3, 3, 3, 3})},
                   {randomTensor(rng, {1, 8, 5, 16}), randomTensor(rng, {8, 1, 7, 7}),
                    randomTensor(rng, {8})},
                   {}});
    out.push_back(
        {"depthwise blocked 1-D stride 2",
         {intAttribute("group", 10), intsAttribute("pads", {1, 1}), intsAttribute("strides", {2})},
         {randomTensor(rng, {1, 10, 23}), randomTensor(rng, {10, 1, 3})},
         {}});
    return out;
}

/// Winograd samples (3x3, stride 1, at least 16 channels and filters; weights this small run
/// F(4x4, 3x3), winograd_test.cpp covers F(2x2, 3x3)): odd output sizes (a last tile partly
/// outside), no pads and asymmetric pads, rows of more than 8 tiles (the vector loop and its
/// overlapping last step), batch 2 and the fused epilogue.
std::vector<OpSample> winogradSamples(std::mt19937& rng, ConvReference reference) {
    std::vector<OpSample> out;
    out.push_back({"winograd pad 1 odd output batch 2",
                   {intsAttribute("pads", {1, 1, 1, 1})},
                   {randomTensor(rng, {2, 16, 9, 13}), randomTensor(rng, {16, 16, 3, 3}),
                    randomTensor(rng, {16})},
                   {}});
    out.push_back({"winograd no pads 25 filters",
                   {},
                   {randomTensor(rng, {1, 16, 10, 22}), randomTensor(rng, {25, 16, 3, 3})},
                   {}});
    out.push_back({"winograd asym pads wide rows",
                   {intsAttribute("pads", {2, 0, 0, 2})},
                   {randomTensor(rng, {1, 20, 7, 37}), randomTensor(rng, {16, 20, 3, 3}),
                    randomTensor(rng, {16})},
                   {}});
    out.push_back(fusedSample(rng, reference, "fused residual + clip, winograd",
                              {intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {2, 16, 12, 18}),
                               randomTensor(rng, {17, 16, 3, 3}), randomTensor(rng, {17})}));
    return out;
}

/// GEMM samples for the im2col source layouts (padded phase copy for strides 2 and 3, the
/// subsampled copy of 1x1 kernels with strides or pads) and the GEMM's edge tiles: N % 16 of
/// 1-4 (column kernel), 5-8 (half kernel) and 9-15 (full tile), N below 16, and an edge tile
/// over two depth blocks.
std::vector<OpSample> stridedSamples(std::mt19937& rng) {
    const auto strides2 = intsAttribute("strides", {2, 2});
    const auto pads1 = intsAttribute("pads", {1, 1, 1, 1});
    std::vector<OpSample> out;
    out.push_back({"7x7 stride 2 pads 3, C = 3 (stem), N = 120",
                   {strides2, intsAttribute("pads", {3, 3, 3, 3})},
                   {randomTensor(rng, {1, 3, 20, 23}), randomTensor(rng, {8, 3, 7, 7}),
                    randomTensor(rng, {8})},
                   {}});
    out.push_back(
        {"3x3 stride 2 batch 2, N = 20",
         {strides2, pads1},
         {randomTensor(rng, {2, 5, 7, 9}), randomTensor(rng, {7, 5, 3, 3}), randomTensor(rng, {7})},
         {}});
    out.push_back({"3x3 stride 2, N = 2",
                   {strides2},
                   {randomTensor(rng, {1, 3, 4, 6}), randomTensor(rng, {5, 3, 3, 3})},
                   {}});
    out.push_back({"1x1 stride 2 batch 2, N = 30",
                   {strides2},
                   {randomTensor(rng, {2, 6, 9, 11}), randomTensor(rng, {10, 6, 1, 1}),
                    randomTensor(rng, {10})},
                   {}});
    out.push_back({"1x1 stride 2 pads 1, N = 20",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 4, 6, 7}), randomTensor(rng, {5, 4, 1, 1})},
                   {}});
    out.push_back({"1x1 asym pads, stride 1, N = 35",
                   {intsAttribute("pads", {1, 0, 0, 2})},
                   {randomTensor(rng, {1, 3, 4, 5}), randomTensor(rng, {4, 3, 1, 1})},
                   {}});
    out.push_back({"5x5 stride 3 dilation (1, 2) asym pads, N = 25",
                   {intsAttribute("strides", {3, 3}), intsAttribute("dilations", {1, 2}),
                    intsAttribute("pads", {2, 1, 2, 3})},
                   {randomTensor(rng, {1, 2, 13, 17}), randomTensor(rng, {3, 2, 5, 5}),
                    randomTensor(rng, {3})},
                   {}});
    // Phases of 6 columns at stride 7: the last phase reaches past the 40 padded columns.
    out.push_back({"3x3 strides (2, 7) dilation (1, 2), N = 24",
                   {intsAttribute("strides", {2, 7}), intsAttribute("dilations", {1, 2})},
                   {randomTensor(rng, {1, 2, 9, 41}), randomTensor(rng, {3, 2, 3, 3})},
                   {}});
    out.push_back({"3x3 stride 2 depth 288, N = 49",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 32, 14, 14}),
                    randomTensor(rng, {7, 32, 3, 3}, -0.2F, 0.2F), randomTensor(rng, {7})},
                   {}});
    out.push_back({"3x3 stride 2, N = 306 (above the GEMM's row-split threshold)",
                   {strides2, pads1},
                   {randomTensor(rng, {1, 3, 33, 35}), randomTensor(rng, {5, 3, 3, 3}),
                    randomTensor(rng, {5})},
                   {}});
    out.push_back({"1-D stride 2, N = 3",
                   {intsAttribute("strides", {2})},
                   {randomTensor(rng, {1, 3, 7}), randomTensor(rng, {4, 3, 3})},
                   {}});
    return out;
}

} // namespace

std::vector<OpSample> convSamples(std::mt19937& rng, ConvReference reference) {
    std::vector<OpSample> out = {
        {"3x3 pad 1",
         {intsAttribute("pads", {1, 1, 1, 1})},
         {randomTensor(rng, {1, 2, 5, 5}), randomTensor(rng, {3, 2, 3, 3}), randomTensor(rng, {3})},
         {}},
        {"stride 2 dilation 2 asym pads",
         {intsAttribute("strides", {2, 2}), intsAttribute("dilations", {2, 1}),
          intsAttribute("pads", {1, 0, 2, 1})},
         {randomTensor(rng, {2, 2, 7, 6}), randomTensor(rng, {4, 2, 2, 3})},
         {}},
        {"groups 2 same_upper",
         {intAttribute("group", 2), stringAttribute("auto_pad", "SAME_UPPER"),
          intsAttribute("strides", {2, 2})},
         {randomTensor(rng, {1, 4, 5, 5}), randomTensor(rng, {6, 2, 3, 3}), randomTensor(rng, {6})},
         {}},
        {"pointwise",
         {},
         {randomTensor(rng, {1, 4, 3, 3}), randomTensor(rng, {5, 4, 1, 1}), randomTensor(rng, {5})},
         {}},
        {"1-D",
         {intsAttribute("pads", {1, 1})},
         {randomTensor(rng, {2, 2, 7}), randomTensor(rng, {3, 2, 3})},
         {}},
        // Depth 576 in three blocks of 192, 784 columns in blocks of 400: a B block over 256 KiB
        // takes the GEMM's strip-by-strip order, and later depth blocks accumulate into C.
        {"deep GEMM",
         {intsAttribute("pads", {1, 1, 1, 1})},
         {randomTensor(rng, {1, 64, 28, 28}), randomTensor(rng, {8, 64, 3, 3}, -0.1F, 0.1F),
          randomTensor(rng, {8})},
         {}},
    };
    for (OpSample& sample : depthwiseSamples(rng)) {
        out.push_back(std::move(sample));
    }
    for (OpSample& sample : winogradSamples(rng, reference)) {
        out.push_back(std::move(sample));
    }
    for (OpSample& sample : stridedSamples(rng)) {
        out.push_back(std::move(sample));
    }
    out.push_back(fusedSample(rng, reference, "fused residual + clip, 3x3",
                              {intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {1, 3, 6, 10}), randomTensor(rng, {4, 3, 3, 3}),
                               randomTensor(rng, {4})}));
    out.push_back(fusedSample(rng, reference, "fused residual + clip, pointwise, no bias", {},
                              {randomTensor(rng, {2, 5, 3, 7}), randomTensor(rng, {6, 5, 1, 1})}));
    out.push_back(fusedSample(rng, reference,
                              "fused residual + clip, depthwise stride 1 in place, batch 2",
                              {intAttribute("group", 2), intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {2, 2, 17, 11}), randomTensor(rng, {2, 1, 3, 3}),
                               randomTensor(rng, {2})}));
    out.push_back(fusedSample(rng, reference, "fused residual + clip, pointwise batch 2, N = 49",
                              {},
                              {randomTensor(rng, {2, 8, 7, 7}), randomTensor(rng, {9, 8, 1, 1}),
                               randomTensor(rng, {9})}));
    out.push_back(fusedSample(rng, reference, "fused residual + clip, pointwise, N = 289", {},
                              {randomTensor(rng, {1, 6, 17, 17}), randomTensor(rng, {7, 6, 1, 1}),
                               randomTensor(rng, {7})}));
    out.push_back(
        fusedSample(rng, reference, "fused residual + clip, 3x3 stride 2 batch 2, N = 18",
                    {intsAttribute("strides", {2, 2}), intsAttribute("pads", {1, 1, 1, 1})},
                    {randomTensor(rng, {2, 3, 5, 11}), randomTensor(rng, {4, 3, 3, 3}),
                     randomTensor(rng, {4})}));
    out.push_back(fusedSample(rng, reference, "fused residual + clip, depthwise stride 2",
                              {intAttribute("group", 3), intsAttribute("pads", {1, 1, 1, 1}),
                               intsAttribute("strides", {2, 2})},
                              {randomTensor(rng, {1, 3, 9, 41}), randomTensor(rng, {3, 1, 3, 3}),
                               randomTensor(rng, {3})}));
    out.push_back(fusedSample(rng, reference,
                              "fused residual + clip, depthwise wide 5x5 stride 1, left pad 4",
                              {intAttribute("group", 2), intsAttribute("pads", {0, 4, 4, 0})},
                              {randomTensor(rng, {1, 2, 9, 20}), randomTensor(rng, {2, 1, 5, 5}),
                               randomTensor(rng, {2})}));
    out.push_back(fusedSample(rng, reference, "fused residual + clip, depthwise blocked, batch 2",
                              {intAttribute("group", 10), intsAttribute("pads", {1, 1, 1, 1})},
                              {randomTensor(rng, {2, 10, 6, 7}), randomTensor(rng, {10, 1, 3, 3}),
                               randomTensor(rng, {10})}));
    return out;
}

} // namespace qs::runtime
