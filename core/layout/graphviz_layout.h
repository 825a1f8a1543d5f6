// The one door to Graphviz: lays out a small graph of fixed-size boxes with `dot` and returns
// centres and edge splines as plain numbers. Internal to core/layout. Calls are serialized by a
// global mutex because cgraph is not thread-safe. A dot call cannot be interrupted, so
// runDotBudgeted() runs it in a forked child that is killed on cancel or when its time budget
// runs out; the caller then falls back to layeredLayout().
#pragma once

#include "core/layout/layout.h"
#include "core/support/progress.h"

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
    /// Bounded network simplex and crossing minimisation (nslimit, mclimit, searchsize): a
    /// slightly worse drawing in a fraction of the time; for the bigger calls.
    bool tuned = false;
};

/// dot's answer, y down, origin at the top-left of the drawing's bounding box.
struct DotResult {
    Size size;
    std::vector<Point> centers;            ///< parallel to DotGraph::nodes
    std::vector<std::vector<Point>> paths; ///< per edge, 3k+1 Bézier points from tail to head
};

/// Runs dot on `graph` in this process. Fails with Errc::Internal when Graphviz does.
Result<DotResult> runDot(const DotGraph& graph);

/// Why runDotBudgeted() gave no drawing: Graphviz failed, the budget ran out, or a cancel.
enum class DotOutcome : uint8_t { Done, Failed, TimedOut, Cancelled };

struct BudgetedDot {
    DotOutcome outcome = DotOutcome::Failed;
    DotResult result; ///< when Done
};

/// Runs dot on `graph` in a child process, polling `progress` for a cancel every few ms and
/// killing the child when cancelled or after `budgetSeconds`. Never blocks longer than the
/// budget plus a poll interval.
BudgetedDot runDotBudgeted(const DotGraph& graph, double budgetSeconds, Progress& progress);

} // namespace qs::layout::detail
