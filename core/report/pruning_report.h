// PRUNING.json of `quantscope-cli prune` and its console table (the GUI writes the same):
//   {"target_bytes", "dense_bytes", "pruned_bytes", "minimum_bytes", "pruned_graph_bytes",
//    "simd", "simd_padding", "importance", "samples",
//    "sections": [{"entry", "intermediates": [...], "exit", "channels", "kept", "locked",
//                  "fixed_kept", "bytes_before", "bytes_after", "mask": [1, 0, ...],
//                  "scores": [...one per channel, the unrolled group scores...]}],
//    "not_prunable": [{"node", "reason"}], "notes": [...]}
// pruned_bytes is the memory calculator's count (SIMD-padded when asked), the one compared with
// the target; pruned_graph_bytes counts the pruned model's float initializers as they are.
#pragma once

#include "core/pruning/pruning_workflow.h"
#include "core/report/accuracy.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace qs::report {

/// Top-1 (and top-5) of the dense and the pruned model when the outcome was scored on a labelled
/// dataset (pruning::scorePruning); nothing otherwise.
Result<std::optional<AccuracyComparison>> pruningAccuracy(const pruning::PruningOutcome& outcome);

/// The fields above and, with labels, "accuracy" {"float", "pruned"}.
nlohmann::json toJson(const pruning::PruningAnalysis& analysis,
                      const pruning::PruningOutcome& outcome);

/// The per-section table (entry, exit, channels kept/total, memory before/after), the totals and,
/// with labels, both models' accuracy.
std::string pruningText(const pruning::PruningAnalysis& analysis,
                        const pruning::PruningOutcome& outcome);

} // namespace qs::report
