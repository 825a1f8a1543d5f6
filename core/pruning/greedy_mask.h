// The greedy "grow back" mask calculator (reference/mct-hessian-pruning.md §2.4-2.5): every entry
// starts with its group 0 only (at least one SIMD group always survives); while the memory is
// below the target, the still-pruned group with the largest group score across entries (each
// entry's groups come back in index order) is kept; the last one is given back if it crossed
// the target. The memory is kept incrementally per section (MemoryCalculator::setKept), so a step
// costs the size of one section instead of a recount of the graph.
#pragma once

#include "core/pruning/channel_importance.h"
#include "core/pruning/memory_calculator.h"

#include <cstdint>
#include <vector>

namespace qs::pruning {

/// A user's constraint on one entry: prune freely, never prune (lock), or keep exactly
/// `kept` channels (the most important ones).
struct EntryConstraint {
    enum class Kind { Free = 0, Lock = 1, Keep = 2 };
    Kind kind = Kind::Free;
    int64_t kept = 0;

    bool operator==(const EntryConstraint&) const = default;
};

struct GreedyMasks {
    std::vector<int64_t> kept;     ///< channels kept per section (the first `kept` of its order)
    int64_t parameters = 0;        ///< the memory reached, in parameters (padded if asked)
    int64_t minimumParameters = 0; ///< with every free entry at group 0
    int64_t steps = 0;             ///< groups added
};

/// Masks for `targetBytes` (FP32 bytes). `constraints` is empty or one per section. A target below
/// the minimum (group 0 of every free entry plus the constraints) is an error naming the
/// minimum in bytes.
Result<GreedyMasks> greedyMasks(MemoryCalculator& memory,
                                const std::vector<EntryImportance>& importance,
                                const std::vector<EntryConstraint>& constraints,
                                int64_t targetBytes);

/// The 0/1 mask (1 = kept) of an entry that keeps its `kept` most important channels.
std::vector<uint8_t> channelMask(const EntryImportance& importance, int64_t kept);

} // namespace qs::pruning
