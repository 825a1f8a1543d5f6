// HessianScoresRequest: what a caller (the CLI, HAWQ, pruning, the GUI) asks the Hessian service
// for, in MCT's vocabulary (reference/mct-hessian-pruning.md §1.1): a mode, a granularity, many
// target nodes at once, which samples, the Hessian batch size and the Hutchinson iterations.
//
// Conventions of the scores (label-free Hessian, LFH; the estimator is lfh_estimator.h):
// Y = the chosen values (default: every graph output), flattened per sample and concatenated;
// for a target tensor A (activation mode: the node's output 0; weights mode: its weight
// initializer) g = J^T v with J = dY/dA per sample and v a Rademacher draw over Y, and
//   per_tensor          sum of g^2 over every non-batch axis, an estimate of ||dY/dA||_F^2;
//   per_output_channel  sum of g^2 over every axis but the channel axis, so the channels add up
//                       to the per-tensor score. Channel axis: activations axis 1 (NCHW; [B, C]
//                       for Gemm), except MatMul outputs of rank >= 3 ([B, S, C]): the last axis;
//                       weights: the weight's output-channel axis from its metatype (Conv 0,
//                       ConvTranspose 1, Gemm 0 with transB else 1, MatMul's B the last axis);
//   per_element         g^2 itself (the diagonal of J^T J).
// Each is averaged over the iterations (a running mean). A Y value produced by Softmax is
// differentiated at the Softmax's input (the logits); Y behind ArgMax/TopK/NonMaxSuppression,
// or a target that is itself a Y value, is refused with the node's name.
#pragma once

#include "core/support/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qs::hessian {

enum class HessianMode { Weights = 0, Activation = 1 };

enum class HessianScoresGranularity { PerElement = 0, PerOutputChannel = 1, PerTensor = 2 };

/// MCT's defaults (reference §1.6).
inline constexpr int kDefaultHessianIterations = 100;
inline constexpr int kMinHessianIterations = 10; ///< early stop is checked after these
inline constexpr double kDefaultHessianTolerance = 1e-3;
inline constexpr int64_t kDefaultHessianBatch = 32;

/// "activation" / "weights".
std::string_view modeName(HessianMode mode);
/// "per_tensor" / "per_output_channel" / "per_element" (the JSON spelling).
std::string_view granularityName(HessianScoresGranularity granularity);

/// Parses "activation" / "weights".
Result<HessianMode> parseMode(std::string_view text);
/// Parses "per_tensor"/"per-tensor", "per_output_channel"/"per-channel"/"per_channel",
/// "per_element"/"per-element".
Result<HessianScoresGranularity> parseGranularity(std::string_view text);

struct HessianScoresRequest {
    HessianMode mode = HessianMode::Activation;
    HessianScoresGranularity granularity = HessianScoresGranularity::PerTensor;
    /// ONNX node names; every one gets scores for every requested sample.
    std::vector<std::string> targetNodes;
    /// Samples firstSample .. firstSample + samples - 1 of the dataset.
    int64_t firstSample = 0;
    int64_t samples = 0;
    /// Samples per forward pass and reverse sweep (the Hessian batch, independent of the
    /// dataset's own batching).
    int64_t batch = kDefaultHessianBatch;
    int iterations = kDefaultHessianIterations;
    /// MCT's rule: after kMinHessianIterations, stop a batch once the largest relative change of
    /// any target's mean score falls below `tolerance`. Off by default (MCT's Torch activation
    /// back-end never stops early).
    bool earlyStop = false;
    double tolerance = kDefaultHessianTolerance;
    /// The values that are Y (names); empty: every graph output.
    std::vector<std::string> outputs;

    /// Checks counts and ranges; names the offending field.
    Result<void> validate() const;
};

} // namespace qs::hessian
