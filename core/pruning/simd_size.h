// SIMD size of a node from the HW config (reference/mct-hessian-pruning.md §2.2): MCT's
// `simd_size` is an attribute of each op quantization config; a node's SIMD is the minimum over
// its candidate configs. Our HW configs may set "simd_size" in a config body; absent, the
// default follows the weight bits as in MCT's IMX500 TPC: 32 for 8-bit configs, 64 for 4-bit,
// 128 for 2-bit.
#pragma once

#include "core/graph/graph.h"
#include "core/quantization/hw_config.h"

#include <cstdint>
#include <vector>

namespace qs::pruning {

/// MCT's default for ops without candidates (an 8-bit config).
inline constexpr int64_t kDefaultSimdSize = 32;

/// The config's simd_size, else the default of its bit width.
int64_t simdSizeOf(const quantization::QuantizerConfig& config);

/// The minimum over the weight configs of the node's HW op, kDefaultSimdSize without any.
int64_t nodeSimdSize(const quantization::HWConfig& hw, const graph::Graph& graph,
                     graph::NodeId node);

/// One SIMD size per node slot: `override` (> 0) for every node, else nodeSimdSize.
std::vector<int64_t> simdSizesByNode(const quantization::HWConfig& hw, const graph::Graph& graph,
                                     int64_t override);

} // namespace qs::pruning
