// Winograd's minimal filtering for 3x3 stride-1 convolutions (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", CVPR 2016): each T x T output tile comes from a (T + 2)^2
// input tile as Y = A^T [(G g G^T) . (B^T d B)] A, so a 3x3 convolution costs one GEMM of
// (filters x channels) x (channels x tiles) per tile position instead of one GEMM with 9 x
// channels of depth. F(2x2, 3x3) (16 positions) multiplies 2.25 times less than the direct sum,
// F(4x4, 3x3) (36 positions) 4 times less; its transformed weights take 4 times the weights'
// memory (F(2x2, 3x3): 16/9) and its transforms scale by up to 8, so it serves the layers with
// few weights, which in CNNs are the ones with large planes. The results stay within a few float
// ulps (F(2x2, 3x3)) or a few tens of them (F(4x4, 3x3)) of the direct sum.
#pragma once

#include "core/runtime/conv_kernels.h"
#include "core/runtime/im2col.h"

#include <cstdint>

namespace qs::runtime {

/// The output tile of a Winograd variant.
enum class WinogradTile {
    automatic, ///< winogradTileFor the weights
    f2x2,      ///< F(2x2, 3x3)
    f4x4,      ///< F(4x4, 3x3)
};

/// Weights (filters x channels) up to which winogradTileFor picks F(4x4, 3x3): ResNet's 64- and
/// 128-channel stages, every SqueezeNet expand layer; their transformed weights stay under 2.4 MB.
inline constexpr int64_t kWinogradLargeTileMostWeights = int64_t{128} * 128;

/// The variant the kernels run for `filters` x `channels` 3x3 weights when asked for
/// WinogradTile::automatic: F(4x4, 3x3) up to kWinogradLargeTileMostWeights, else F(2x2, 3x3).
/// dx's convolution (channels x filters) gets the same variant as the forward.
WinogradTile winogradTileFor(int64_t filters, int64_t channels);

/// True when `p` runs through Winograd: 3x3 kernel, stride 1, dilation 1, one group, and enough
/// filters and channels that the smaller GEMMs (one per tile position) still fill the micro-kernel.
bool winogradApplies(const Conv2d& p);

/// Floats packWinogradWeights writes for `filters` x `channels` 3x3 filters.
int64_t winogradWeightsSize(int64_t filters, int64_t channels,
                            WinogradTile tile = WinogradTile::automatic);

/// Transforms weights [filters, channels, 3, 3] to U = G g G^T and packs each position's
/// [filters x channels] matrix into GEMM panels (packWeights), position after position.
void packWinogradWeights(const float* w, int64_t filters, int64_t channels, float* packed,
                         WinogradTile tile = WinogradTile::automatic);

/// The convolution `p` (winogradApplies) of every image with weights packed by
/// packWinogradWeights for the same `tile`, epilogue included (its residual must not be `y`
/// itself). Tiles run in blocks of `blockTiles` (0: sized for the caches; tests pass small
/// blocks).
void winogradConv2d(const Conv2d& p, const float* x, const float* packedWeights,
                    const ConvEpilogue& epilogue, float* y, int64_t blockTiles = 0,
                    WinogradTile tile = WinogradTile::automatic);

/// True when dx of `p` (winogradApplies) runs through winogradInputGrad: every pad at most 2, and,
/// unless its weights come packed (`weightsPacked`: a backward sweep reuses them), output planes
/// of at least 28 x 28, where the per-call weight transform costs little next to the GEMM it
/// shrinks.
bool winogradInputGradApplies(const Conv2d& p, bool weightsPacked = false);

/// The variant of dx's weights that a backward sweep of `images` x `height` x `width` inputs runs
/// with weights packed once for many sweeps (the executor's cache): F(4x4, 3x3) once its tiles
/// over all images fill a GEMM panel (32 and more) and it multiplies at least 1.5 times less
/// than F(2x2, 3x3) over the plane, else winogradTileFor's. 14 x 14 planes (1.36 times less, 16
/// rows computed for 14) ran slower in F(4x4): resnet18's 256-channel stage at batch 8, 14.8 ms
/// per sweep against 12.0 in F(2x2); resnet50's, 57.6 against 52.2. A Hessian run sweeps
/// the same weights tens of times, so F(4x4, 3x3)'s 4x memory is paid once while each sweep
/// multiplies 1.8 times less than F(2x2, 3x3) on ResNet's 7 x 7 and 28 x 28 stages (which the
/// forward keeps on F(2x2, 3x3) for its resident memory): resnet18 at batch 8, a sweep 3-9 %
/// faster, and the first sweep about 60 ms slower (113 MB of weights instead of 50). At batch 1
/// a 7 x 7 plane has 4 such tiles, and GEMMs of 4 columns ran slower than F(2x2, 3x3).
WinogradTile sweptInputGradTile(int64_t images, int64_t height, int64_t width, int64_t filters,
                                int64_t channels);

/// Floats packWinogradInputGradWeights writes for weights [filters, channels, 3, 3].
int64_t winogradInputGradWeightsSize(int64_t filters, int64_t channels,
                                     WinogradTile tile = WinogradTile::automatic);

/// The weights of dx's convolution (below), transformed and packed as packWinogradWeights does,
/// once for any number of backward sweeps.
void packWinogradInputGradWeights(const float* w, int64_t filters, int64_t channels, float* packed,
                                  WinogradTile tile = WinogradTile::automatic);

/// dx of the convolution `p` for output gradient dy: itself a 3x3 stride-1 convolution of dy, with
/// the filters flipped and transposed (filter c, channel m: w[m, c] turned by 180 degrees) and pads
/// 2 - p; its weights come from `packed` (packWinogradInputGradWeights) or, when null, are
/// transformed on this call.
void winogradInputGrad(const Conv2d& p, const float* w, const float* dy, float* dx,
                       const float* packed = nullptr, WinogradTile tile = WinogradTile::automatic);

/// True when dw of `p` runs through winogradWeightGrad: winogradApplies and output planes of at
/// least 49 tiles (13 x 13); on smaller planes the 16 GEMMs are too shallow (one image's tiles
/// are their depth) to beat the im2col GEMM.
bool winogradWeightGradApplies(const Conv2d& p);

/// Writes dw of the convolution `p` (winogradWeightGradApplies) for input x and output gradient
/// dy, summed over the images or, with `perSample`, per image (dw [N, M, C, 3, 3]); dw need not
/// be initialised. Winograd F(2x2, 3x3) in the weight-gradient form (winograd_weight_grad.cpp).
void winogradWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw,
                        bool perSample);

/// Per image n and filter m, the sum of squares of image n's dw[m] (squares [N, M], in double),
/// as gemmConvWeightGradRowSquares does (conv_backward.h), for winogradWeightGradApplies.
void winogradWeightGradRowSquares(const Conv2d& p, const float* x, const float* dy,
                                  double* squares);

} // namespace qs::runtime
