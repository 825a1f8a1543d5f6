// A fast layered layout of our own, for when dot runs out of its time budget (or would, on a
// dense DAG such as a DenseNet block): longest-path ranks, a few barycenter sweeps to order each
// rank, boxes pulled towards their inputs; edges to the next rank are S-curves, longer ones run
// down a lane right of the boxes they pass. Near-linear and never slow; rougher than dot, so it
// is the fallback, not the default.
#pragma once

#include "core/layout/graphviz_layout.h"

namespace qs::layout::detail {

/// Places `graph` in layers, top to bottom, in the same result form as runDot().
DotResult layeredLayout(const DotGraph& graph);

} // namespace qs::layout::detail
