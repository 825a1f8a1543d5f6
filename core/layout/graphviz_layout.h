// The one door to Graphviz: lays out a small graph of fixed-size boxes with `dot` and returns
// centres and edge splines as plain numbers. Internal to core/layout; computeLayout() cuts big
// graphs into sections and calls this once per section. Calls are serialized by a global mutex
// because cgraph is not thread-safe.
#pragma once

#include "core/layout/layout.h"

#include <cstdint>
#include <vector>

namespace qs::layout::detail {

/// Where dot may put a node: anywhere, on the first rank or on the last rank.
enum class RankPin : uint8_t { Free, First, Last };

struct DotNode {
    Size size;
    RankPin pin = RankPin::Free;
};

struct DotEdge {
    uint32_t tail = 0;
    uint32_t head = 0;
};

struct DotGraph {
    std::vector<DotNode> nodes;
    std::vector<DotEdge> edges;
    double nodeSeparation = 18;
    double rankSeparation = 30;
};

/// dot's answer, y down, origin at the top-left of the drawing's bounding box.
struct DotResult {
    Size size;
    std::vector<Point> centers;            ///< parallel to DotGraph::nodes
    std::vector<std::vector<Point>> paths; ///< per edge, 3k+1 Bézier points from tail to head
};

/// Runs dot on `graph`. Fails with Errc::Internal when Graphviz does.
Result<DotResult> runDot(const DotGraph& graph);

} // namespace qs::layout::detail
