// A tensor seen as [outer, size, inner] around one axis: how channel slicing and per-channel
// norms walk a weight whatever its rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qs::pruning {

struct AxisSplit {
    int64_t outer = 1; ///< product of the dims before the axis
    int64_t size = 0;  ///< the axis itself
    int64_t inner = 1; ///< product of the dims after the axis
};

inline AxisSplit splitAt(const std::vector<int64_t>& dims, int64_t axis) {
    AxisSplit split;
    for (int64_t i = 0; i < static_cast<int64_t>(dims.size()); ++i) {
        if (i < axis) {
            split.outer *= dims[static_cast<size_t>(i)];
        } else if (i > axis) {
            split.inner *= dims[static_cast<size_t>(i)];
        }
    }
    split.size = dims[static_cast<size_t>(axis)];
    return split;
}

} // namespace qs::pruning
