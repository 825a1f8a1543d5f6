// Backward kernels of a 2-D convolution (Conv2d geometry), shared by the Conv VJP.
#pragma once

#include "core/runtime/conv_geometry.h"
#include "core/runtime/conv_kernels.h"
#include "core/runtime/tensor.h"
#include "core/runtime/winograd.h"

namespace qs::runtime {

/// Adds dx (when dx is set) and dw (when dw is set; per image, [N, C, taps], with `perSample`)
/// of a depthwise convolution, plane by plane.
void depthwiseConvBackward(const Conv2d& p, const float* x, const float* w, const float* dy,
                           float* dx, float* dw, bool perSample);

/// The gradient at the convolution's own sum: dy where the fused clamp passed the value through,
/// 0 where the output sits on a bound (the Clip rule); dy itself without a fused activation.
Tensor gradientBeforeClamp(const ConvEpilogue& e, const Tensor& output, const Tensor& outputGrad);

/// Writes dw of a GEMM-based convolution (sum over images), or per image (dw [N, M, ...]) with
/// `perSample`; dw need not be initialised.
void gemmConvWeightGrad(const Conv2d& p, const float* x, const float* dy, float* dw,
                        bool perSample);

/// out[r] = the sum of squares of row r of dw [rows x depth], in double, rows on the threads.
void rowSumsOfSquares(const float* dw, int64_t rows, int64_t depth, double* out);

/// Per image n and filter m, the sum of squares of image n's dw[m] (squares [N, M], in double):
/// what a per-tensor or per-output-channel weights-mode Hessian reads of the per-sample weight
/// gradients, each image's dw computed into a per-thread scratch instead of a [N, M, ...]
/// tensor that would be written out and read back.
void gemmConvWeightGradRowSquares(const Conv2d& p, const float* x, const float* dy,
                                  double* squares);

/// Floats packGemmInputGradWeights writes for Conv weights [filters, depth] in `group` groups.
int64_t gemmInputGradWeightsSize(int64_t filters, int64_t depth, int64_t group);

/// Packs each group's W^T [depth x filters / group] as packWeights does (the A matrix of dx's
/// GEMM); groups follow each other.
void packGemmInputGradWeights(const float* w, int64_t filters, int64_t depth, int64_t group,
                              float* packed);

/// The Conv VJP inputs (past the node's own) where the executor passes dx's packed weights.
inline constexpr size_t kWinogradInputGradWeightsInput = 4;
inline constexpr size_t kGemmInputGradWeightsInput = 5;

/// dx's weights, packed ahead of time (by the executor, once for every sweep), or null.
struct PackedInputGradWeights {
    const float* winograd = nullptr; ///< packWinogradInputGradWeights for `winogradTile`
    WinogradTile winogradTile = WinogradTile::automatic;
    const float* gemm = nullptr; ///< packGemmInputGradWeights
};

/// dx of the convolution: the direct depthwise kernel where it applies, else the scatter (both
/// depthwise), Winograd (3x3 stride 1) or the packed GEMM, with `packed` weights where given
/// (else packed here, per call).
Tensor convInputGrad(const Conv2d& p, const Shape& shape, const float* w, const float* dy,
                     const PackedInputGradWeights& packed = {});

/// db[m] = sum over images and pixels of dy[n, m, :].
Tensor convBiasGrad(const Conv2d& p, const Shape& biasShape, const float* dy);

} // namespace qs::runtime
