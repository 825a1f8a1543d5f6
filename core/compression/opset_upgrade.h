// Raising a model's default-domain opset so new nodes can be added: per-axis DequantizeLinear
// needs opset 13, int4 and blocked DequantizeLinear (`block_size`) opset 21. Opset 7-10 models are
// first raised to 13 by ONNX's own version converter and the result is checked against the
// original on our executor (random inputs). From 11 on, ops whose schema changed on the way are
// migrated (axes and split attributes that became inputs, Split's
// num_outputs, GridSample's mode names); ops whose meaning changed in ways we do not rewrite
// (Softmax family before 13 on a non-last axis, GroupNormalization before 21) are refused by name.
#pragma once

#include "core/graph/graph.h"
#include "core/support/result.h"

#include <string>

namespace qs::compression {

/// Lowest source opset we migrate from ourselves; below it ONNX's version converter runs first.
inline constexpr int64_t kMinUpgradableOpset = 11;

/// Largest relative output difference (max |a - b| / max |a| per output) accepted between a model
/// and its converted form on random inputs.
inline constexpr double kUpgradeTolerance = 1e-5;

/// What a raise did, for the user ("opset 9 raised to 13 by ONNX's version converter").
struct OpsetUpgrade {
    int64_t fromOpset = 0;
    int64_t toOpset = 0;
    bool onnxConverter = false;       ///< ONNX's version converter ran (source opset below 11)
    double maxRelativeDifference = 0; ///< converted vs original on random inputs

    bool upgraded() const { return toOpset > fromOpset; }

    std::string describe() const;
};

/// Raises the default-domain opset import to at least `target` (a no-op when already there),
/// migrating the nodes whose schema changed. Unsupported, naming the node (or the op ONNX's
/// converter has no adapter for), when a node cannot be migrated, and when the converted model
/// does not compute what the original does; the graph is left unchanged in that case.
Result<void> raiseDefaultOpset(graph::Graph& graph, int64_t target, OpsetUpgrade* report = nullptr);

/// Default-domain opset of per-axis QuantizeLinear/DequantizeLinear (and Clip's min/max inputs).
inline constexpr int64_t kPerAxisQdqOpset = 13;
/// Default-domain opset of int4/uint4 QuantizeLinear/DequantizeLinear and `block_size`.
inline constexpr int64_t kInt4QdqOpset = 21;

/// raiseDefaultOpset, then the IR version up to what that opset needs (7 for 13, 10 for 21).
Result<void> raiseOpsetAndIrVersion(graph::Graph& graph, int64_t target,
                                    OpsetUpgrade* report = nullptr);

/// max over outputs of max |a - b| / max |a| for `seeded` random inputs (dynamic dims: 1 for the
/// first axis, 16 for the others); an error when either model does not run.
Result<double> compareOnRandomInputs(const graph::Graph& reference, const graph::Graph& candidate,
                                     uint64_t seed = 7);

/// `base` if no value has that name, else `base_1`, `base_2`, ...
std::string uniqueValueName(const graph::Graph& graph, const std::string& base);

} // namespace qs::compression
