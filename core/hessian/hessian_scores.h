// HessianScores: the outcome of a Hessian request (what fetch returns, what SCORES.json holds,
// core/report/hessian_report.h) and the exact join of shards computed over disjoint sample
// ranges (`quantscope-cli hessian --sample-range A:B`, then `--merge`).
#pragma once

#include "core/hessian/hessian_scores_request.h"
#include "core/runtime/tensor.h"

#include <string>
#include <vector>

namespace qs::hessian {

struct HessianTargetScores {
    std::string node;
    std::string tensor;   ///< the output value (activation) or weight initializer scored
    runtime::Shape shape; ///< per-sample shape of that tensor
    /// One list per sample (in sampleIndices order): 1 value per tensor, 1 per channel, or one
    /// per element in row-major order.
    std::vector<std::vector<double>> perSample;

    int64_t numel() const { return runtime::shapeNumElements(shape); }

    /// The mean over samples, value by value.
    std::vector<double> mean() const;
};

struct HessianScores {
    HessianMode mode = HessianMode::Activation;
    HessianScoresGranularity granularity = HessianScoresGranularity::PerTensor;
    int iterations = 0;
    int64_t batch = 0;
    bool earlyStop = false;
    double tolerance = 0.0;
    uint64_t seed = 0;
    std::vector<std::string> outputs; ///< the Y values differentiated
    std::vector<std::string> notes;   ///< what the tool said once (Softmax outputs, skipped nodes)
    std::vector<int64_t> sampleIndices;
    std::vector<HessianTargetScores> targets;
};

/// Joins shards of one computation: same mode, granularity, iterations, early stop, seed,
/// outputs and targets (node, tensor, shape); disjoint sample indices. The result lists samples
/// in increasing index order. Errors name the first mismatch or the shared sample.
Result<HessianScores> mergeHessianShards(const std::vector<HessianScores>& shards);

} // namespace qs::hessian
