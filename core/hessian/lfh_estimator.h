// The label-free Hessian (LFH) estimator of EPTQ / MCT (reference/mct-hessian-pruning.md §1.4),
// Hutchinson's trick on the output Jacobian: per iteration a Rademacher v over Y and ONE reverse
// sweep of the executor seeded with v gives g = J^T v at every target at once (MCT differentiates
// once per target and iteration); g^2 reduced by granularity (hessian_scores_request.h) is
// averaged over the iterations, since E ||J^T v||^2 = ||J||_F^2. The forward pass of a batch runs
// once and its trace serves every iteration. Weights mode asks the executor for per-sample weight
// gradients, so one batch of B samples gives B samples' scores.
//
// Draws are made per sample: sample i's signs come from its own generator, seeded by (seed, i),
// in iteration order, Y value after Y value. A sample's scores are therefore the same whatever
// batch (or shard, `--sample-range`) it is computed in.
#pragma once

#include "core/hessian/hessian_scores_request.h"
#include "core/runtime/executor.h"
#include "core/support/progress.h"

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace qs::hessian {

/// The Y of the estimator: values resolved on the graph, with what the resolution said.
struct HessianOutputs {
    std::vector<graph::ValueId> values; ///< what is differentiated
    std::vector<std::string> names;     ///< their names, in order
    std::vector<std::string> notes;     ///< e.g. a Softmax output differentiated at its input
};

/// Resolves the Y values: `names` (empty: every graph output); a value produced by Softmax is
/// replaced by the Softmax's input (a note says so); values behind ArgMax, TopK or
/// NonMaxSuppression, non-float values and unknown names are errors naming the value and node.
Result<HessianOutputs> resolveOutputs(const graph::Graph& graph,
                                      const std::vector<std::string>& names);

/// One target of a sweep, resolved on the graph.
struct EstimatorTarget {
    std::string node;
    graph::ValueId tensor; ///< the node's output 0 (activation) or its weight initializer
    std::string tensorName;
    bool weights = false;
    int64_t channelAxis = 0; ///< in the per-sample tensor (activations: without the batch axis)
};

/// EstimatorTarget::channelAxis of MatMul activations: the per-sample tensor's last axis.
inline constexpr int64_t kLastAxis = -1;

/// Resolves `node` for `mode`. Errors: unknown node, a node whose output is a Y value (activation
/// mode), a node without a float weight initializer on its weight port (weights mode).
Result<EstimatorTarget> resolveTarget(const graph::Graph& graph, const std::string& node,
                                      HessianMode mode, const HessianOutputs& outputs);

/// Every Conv, ConvTranspose, Gemm and MatMul node in graph order (weights mode: those with a
/// weight initializer); in activation mode nodes whose output is a Y value are left out, with a
/// note.
std::vector<std::string> defaultTargetNodes(const graph::Graph& graph, HessianMode mode,
                                            const HessianOutputs& outputs,
                                            std::vector<std::string>& notes);

struct EstimatorSettings {
    HessianScoresGranularity granularity = HessianScoresGranularity::PerTensor;
    int iterations = kDefaultHessianIterations;
    bool earlyStop = false;
    double tolerance = kDefaultHessianTolerance;
    uint64_t seed = 0;
};

/// Scores of one batch: scores[target][sample in batch] = the reduced running mean.
struct BatchScores {
    std::vector<std::vector<std::vector<double>>> scores;
    std::vector<runtime::Shape> shapes; ///< per target: the scored tensor's per-sample shape
    int iterationsRun = 0;
};

/// Number of score values per sample for `granularity` on a per-sample tensor of `shape`.
int64_t scoreSize(HessianScoresGranularity granularity, const runtime::Shape& shape,
                  int64_t channelAxis);

/// Runs the forward pass of `inputs` (sampleIndices.size() samples on axis 0) once and
/// settings.iterations reverse sweeps (fewer with early stop). `onSweep` is called after each
/// sweep (progress); a cancelled `progress` stops between sweeps with Errc::Cancelled.
Result<BatchScores> estimateBatch(const runtime::Executor& executor,
                                  std::span<const runtime::Tensor> inputs,
                                  std::span<const int64_t> sampleIndices,
                                  std::span<const EstimatorTarget> targets,
                                  const HessianOutputs& outputs, const EstimatorSettings& settings,
                                  Progress& progress, const std::function<void(int)>& onSweep);

/// The same on the trace of a forward pass the caller ran (of sampleIndices.size() samples).
Result<BatchScores> estimateBatch(const runtime::Executor& executor,
                                  const runtime::ForwardTrace& trace,
                                  std::span<const int64_t> sampleIndices,
                                  std::span<const EstimatorTarget> targets,
                                  const HessianOutputs& outputs, const EstimatorSettings& settings,
                                  Progress& progress, const std::function<void(int)>& onSweep);

} // namespace qs::hessian
