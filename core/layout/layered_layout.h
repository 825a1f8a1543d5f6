// A fast layered layout of our own, for when dot runs out of its time budget: longest-path ranks,
// a few barycenter sweeps to order each rank, boxes pulled towards their inputs, and edges as
// plain S-curves. Linear-ish in the graph size and never slow; the drawing is rougher than dot's
// (long edges may cross boxes), so it is the fallback, not the default.
#pragma once

#include "core/layout/graphviz_layout.h"

namespace qs::layout::detail {

/// Places `graph` in layers, top to bottom, in the same result form as runDot().
DotResult layeredLayout(const DotGraph& graph);

} // namespace qs::layout::detail
