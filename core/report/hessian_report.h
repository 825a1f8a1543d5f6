// SCORES.json of `quantscope-cli hessian` (and the Hessian section of reports): the outcome of a
// Hessian request as JSON, and back (for --merge and the consumers' --traces-in/--scores-in).
//   {"mode", "granularity", "iterations", "samples", "batch", "seed", "early_stop", "tolerance",
//    "outputs": [...], "notes": [...], "sample_indices": [...],
//    "targets": [{"node", "tensor", "shape", "numel", "per_sample": [[...], ...], "mean": [...]}]}
// Per-element scores may live in .npy files instead ([N, ...shape], float32): the target then
// has "npy": "<file name relative to the JSON>" and no per_sample / mean lists.
#pragma once

#include "core/hessian/hessian_scores.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>

namespace qs::report {

/// `npyFiles` maps node names to the .npy file written for them (per-element scores).
nlohmann::json toJson(const hessian::HessianScores& scores,
                      const std::map<std::string, std::string>& npyFiles = {});

/// Reads SCORES.json back; .npy references are resolved against `baseDir`. Errors name the
/// field that is missing or malformed.
Result<hessian::HessianScores> hessianScoresFromJson(const nlohmann::json& json,
                                                     const std::filesystem::path& baseDir = {});

/// Per-sample scores of one target as a float32 tensor [N, ...shape] (the .npy layout).
runtime::Tensor perSampleTensor(const hessian::HessianTargetScores& target);

} // namespace qs::report
