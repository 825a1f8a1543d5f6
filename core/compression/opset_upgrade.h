// Raising a model's default-domain opset so new nodes can be added: per-axis DequantizeLinear
// needs opset 13, int4 and blocked DequantizeLinear (`block_size`) opset 21. Ops whose schema
// changed on the way are migrated (axes and split attributes that became inputs, Split's
// num_outputs, GridSample's mode names); ops whose meaning changed in ways we do not rewrite
// (Softmax family before 13 on a non-last axis, GroupNormalization before 21) are refused by name.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <string>

namespace qs::compression {

/// Lowest source opset we migrate from.
inline constexpr int64_t kMinUpgradableOpset = 11;

/// Raises the default-domain opset import to at least `target` (a no-op when already there),
/// migrating the nodes whose schema changed. Unsupported, naming the node, when a node cannot be
/// migrated; the graph is left unchanged in that case.
Result<void> raiseDefaultOpset(graph::Graph& graph, int64_t target);

/// Default-domain opset of per-axis QuantizeLinear/DequantizeLinear (and Clip's min/max inputs).
inline constexpr int64_t kPerAxisQdqOpset = 13;
/// Default-domain opset of int4/uint4 QuantizeLinear/DequantizeLinear and `block_size`.
inline constexpr int64_t kInt4QdqOpset = 21;

/// raiseDefaultOpset, then the IR version up to what that opset needs (7 for 13, 10 for 21).
Result<void> raiseOpsetAndIrVersion(graph::Graph& graph, int64_t target);

/// `base` if no value has that name, else `base_1`, `base_2`, ...
std::string uniqueValueName(const graph::Graph& graph, const std::string& base);

} // namespace qs::compression
