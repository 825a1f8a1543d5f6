// The graph pruning works on: exporters share constants between nodes (PyTorch's constant folding
// turns the identical zero biases of a randomly initialised ResNet into one initializer read
// through Identity nodes), and a shared constant cannot be sliced for one node only. So Identity
// nodes of constants become initializers of their own, and every constant a Conv/ConvTranspose/
// Gemm/MatMul or a per-channel op shares with another node is untied into a copy for that node
// (same data, no bytes copied). Nothing else changes; outputs are the same.
#pragma once

#include "core/graph/graph.h"

namespace qs::pruning {

/// `graph` prepared as above; `untied` counts the constants given their own copy.
Result<graph::Graph> preparePruningGraph(const graph::Graph& graph, int* untied = nullptr);

} // namespace qs::pruning
