// Small read-only queries over the model graph shared by the pattern matchers: live producers and
// consumers (only nodes of the inference graph count), constant inputs, op classes.
#pragma once

#include "core/graph/graph.h"

#include <optional>
#include <string_view>
#include <vector>

namespace qs::quantization::detail {

/// Live nodes consuming any output of `node`, each once, in consumer order.
std::vector<graph::NodeId> liveConsumers(const graph::Graph& model, const std::vector<bool>& live,
                                         graph::NodeId node);

/// The live producer of input `port`, if any.
std::optional<graph::NodeId> liveProducer(const graph::Graph& model, const std::vector<bool>& live,
                                          graph::NodeId node, size_t port);

/// Number of inputs fed by live nodes or runtime graph inputs.
size_t numLiveInputs(const graph::Graph& model, const std::vector<bool>& live, graph::NodeId node);

/// True when an output of `node` is a graph output.
bool feedsGraphOutput(const graph::Graph& model, graph::NodeId node);

/// NNCF's node ids: ONNX nodes numbered in file order, Constant nodes included (recovered from the
/// order of the values the importer created), then the graph inputs, then the outputs.
struct NncfNodeIds {
    std::vector<size_t> byNode; ///< by NodeId index
    size_t modelNodeCount = 0;  ///< id of the first graph input
};

NncfNodeIds nncfNodeIds(const graph::Graph& model);

/// A Cast whose input and output types are the same (NNCF removes these before building its graph).
bool isNoOpCast(const graph::Graph& model, graph::NodeId node);

bool isLinearOp(const graph::Graph& model, graph::NodeId node);

bool isArithmeticOp(std::string_view opType);

bool isAtomicActivation(std::string_view opType);

} // namespace qs::quantization::detail
