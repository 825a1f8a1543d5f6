// Building the pruned graph (reference/mct-hessian-pruning.md §2.7, without MCT's Torch quirk of
// dropping the intermediates' parameters): per section whose mask has a 0, the entry's kernel and
// bias are sliced on the output-channel axis, every intermediate's per-channel constant
// (BatchNormalization scale/bias/mean/var, PRelu slope, Mul/Add constants) on its channel axis,
// and the exit's kernel on the input-channel axis; the channel dim of the values between entry
// and exit becomes the kept count (the only shape that changes, so that is the re-inference), and
// verify() must pass.
#pragma once

#include "core/pruning/pruning_section.h"

#include <cstdint>
#include <vector>

namespace qs::pruning {

/// Keeps the indices of `axis` where `keep` is true.
graph::TensorPtr sliceAlong(const graph::TensorData& data, int64_t axis,
                            const std::vector<int64_t>& keep);

/// The pruned copy of `graph`; `masks[s]` is section s's 0/1 mask (1 = kept) over its entry's
/// output channels.
Result<graph::Graph> buildPrunedGraph(const graph::Graph& graph, const SectionDetection& detection,
                                      const std::vector<std::vector<uint8_t>>& masks);

} // namespace qs::pruning
