// Channel importance of an entry node and its SIMD groups (reference/mct-hessian-pruning.md
// §2.2-2.3). LFH (MCT's only metric): S_c = H_c * ||W_c||^2 / n_c with H_c the label-free
// Hessian score of output channel c's kernel weights (weights mode, per output channel, mean
// over the samples), ||W_c||^2 the squared norm of the channel's kernel slice and n_c its size
// (bias excluded); the group score S_g = (Σ_g H_c) * ||W_g||^2 / Σ_g n_c. Baselines for
// comparison: `l2` (S_c = ||W_c||^2, S_g their mean) and seeded `random` (S_c uniform in
// [0, 1), S_g their mean). Groups: channels sorted by descending S_c, consecutive chunks of the
// SIMD size, the last one smaller when C % SIMD != 0; group 0 is the most important.
#pragma once

#include "core/pruning/pruning_section.h"

#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

namespace qs::pruning {

enum class ImportanceMetric { Lfh = 0, L2 = 1, Random = 2 };

std::string_view importanceName(ImportanceMetric metric);
Result<ImportanceMetric> parseImportance(std::string_view text);

struct EntryImportance {
    std::vector<double> channelScores; ///< S_c, one per output channel of the entry
    std::vector<int64_t> order;        ///< channels by descending S_c (ties: lower index first)
    int64_t simd = 1;
    std::vector<double> groupScores; ///< S_g, group g = order[g*simd, min((g+1)*simd, C))

    int64_t channels() const { return static_cast<int64_t>(order.size()); }

    int64_t groups() const { return static_cast<int64_t>(groupScores.size()); }

    /// Channels in groups 0..g-1.
    int64_t channelsInGroups(int64_t g) const;
    /// The group score of each channel (MCT's unrolled importance scores).
    std::vector<double> unrolledScores() const;
};

/// ||W_c||^2 per index of `axis` of a float tensor.
std::vector<double> squaredNormsAlong(const graph::TensorData& weight, int64_t axis);

/// Scores and groups of `section`'s entry. `hessian`: H_c per output channel (LFH only);
/// `rng`: the seeded generator of `random`.
Result<EntryImportance> entryImportance(const graph::Graph& graph, const PruningSection& section,
                                        ImportanceMetric metric, const std::vector<double>& hessian,
                                        int64_t simd, std::mt19937_64& rng);

} // namespace qs::pruning
