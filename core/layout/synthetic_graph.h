// Synthetic graphs for layout tests and benchmarks: a long chain with residual skip edges, the
// shape that makes plain `dot` slow (thousands of ranks, long edges). Node names carry scopes
// ("/stage3/block12/conv1/Conv") like exported PyTorch models.
#pragma once

#include "core/graph/graph.h"

#include <cstddef>

namespace qs::layout {

/// A chain of `opCount` ops in blocks of four — Conv, Relu, Conv, Add — where each Add also takes
/// the block's input (a skip edge). One graph input, one graph output, 1x16x32x32 float values
/// and a small shared 1x1 weight.
graph::Graph makeSkipChainGraph(size_t opCount);

} // namespace qs::layout
