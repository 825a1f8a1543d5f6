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

#include <nlohmann/json.hpp>

#include <string>

namespace qs::report {

nlohmann::json toJson(const pruning::PruningAnalysis& analysis,
                      const pruning::PruningOutcome& outcome);

/// The per-section table (entry, exit, channels kept/total, memory before/after) and the totals.
std::string pruningText(const pruning::PruningAnalysis& analysis,
                        const pruning::PruningOutcome& outcome);

} // namespace qs::report
