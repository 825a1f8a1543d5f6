// Grouped layout: lays out a GroupTree lazily. Only expanded groups are laid out — each one as
// its own small dot call over its children (nodes, and child groups as single boxes), so no call
// grows with the model — and a collapsed group is one box with an input port per tensor that
// enters it and an output port per tensor that leaves it. Edges that cross group boundaries are
// routed here: each expanded group gets a proxy point on its first rank per tensor entering and
// on its last rank per tensor leaving, and a crossing edge is stitched together from the dot
// pieces of every level it passes, so it follows the drawing at each level.
//
// Every dot call has a time budget and runs in a child process that a cancel kills (a cgraph
// call cannot be interrupted); a call over budget falls back to layeredLayout(), and
// refineFallbacks() later gives such groups dot's drawing when the user is idle. Results are
// cached per group by the content of its dot graph, so expanding one group re-lays only that
// group and its ancestors.
#pragma once

#include "core/layout/group_tree.h"
#include "core/layout/layout.h"
#include "core/support/progress.h"
#include "core/support/result.h"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace qs::layout {

struct GroupedLayoutOptions {
    double nodeSeparation = 18;    ///< horizontal gap between boxes, points
    double rankSeparation = 30;    ///< vertical gap between ranks, points
    double groupPadding = 10;      ///< inside the frame of an expanded group
    double headerHeight = 20;      ///< title strip at the top of an expanded group's frame
    double dotBudgetSeconds = 0.5; ///< per dot call; then the fast layered fallback
    /// dot graphs with more nodes than this (or twice as many edges) get the tuned speed
    /// attributes.
    size_t tunedAbove = 60;
    /// dot graphs at most this big run in this process (no fork; they take milliseconds).
    size_t inProcessUpTo = 12;
    /// dot graphs with more edges per node than this (a DenseNet block: every layer feeds every
    /// later one) go straight to the layered layout: dot's long-edge dummies make them slow.
    double denseEdgesPerNode = 6;
};

/// A visible box: a layout node, or a collapsed group.
struct Unit {
    bool isGroup = false;
    uint32_t index = 0;

    bool operator==(const Unit&) const = default;
};

/// An output of a layout node: (node, output index).
using OutputRef = std::pair<uint32_t, uint32_t>;

struct PlacedGroup {
    Rect box;              ///< the collapsed box, or the frame of an expanded group
    bool visible = false;  ///< drawn: its parent is expanded (the root never is drawn)
    bool expanded = false; ///< laid out, its children drawn inside its frame
    /// Collapsed groups only: one port per tensor entering / leaving, with the output it comes
    /// from, and its anchor on the top / bottom edge.
    std::vector<OutputRef> inputSources;
    std::vector<OutputRef> outputSources;
    std::vector<Point> inputAnchors;
    std::vector<Point> outputAnchors;
};

/// A drawn connection between two visible boxes; several layout edges may share it (a tensor
/// entering a collapsed group at several ops).
struct DrawnEdge {
    Unit from;
    uint32_t fromPort = 0; ///< output index of a node, output port of a collapsed group
    Unit to;
    uint32_t toPort = 0; ///< input port of a node or of a collapsed group
    std::vector<Point> bezier;
    uint32_t edge = 0; ///< the first layout edge it draws
};

struct GroupedLayout {
    std::vector<PlacedNode> nodes; ///< parallel to the input's nodes; meaningful when visible
    std::vector<bool> nodeVisible;
    std::vector<PlacedGroup> groups; ///< parallel to the tree's groups
    std::vector<DrawnEdge> edges;
    Rect bounds;
    size_t dotCalls = 0;  ///< dot calls made (cache hits not counted)
    size_t fallbacks = 0; ///< calls that ran out of budget and used the layered layout
};

/// Per-group dot results kept between layouts of one graph; thread-safe.
class GroupLayoutCache {
public:
    GroupLayoutCache();
    ~GroupLayoutCache();
    GroupLayoutCache(const GroupLayoutCache&) = delete;
    GroupLayoutCache& operator=(const GroupLayoutCache&) = delete;

    struct Impl;

    Impl& impl() { return *m_impl; }

    /// Groups drawn by the layered fallback because dot ran out of budget, not yet refined.
    size_t pendingRefinements() const;

private:
    std::unique_ptr<Impl> m_impl;
};

/// Lays out the groups that `expanded` opens (indexed by group; the root counts as expanded),
/// with `collapsedSizes` (per group) for the boxes of collapsed ones. Reports progress per dot
/// call; a cancel stops within one poll interval and returns Errc::Cancelled.
Result<GroupedLayout> computeGroupedLayout(const LayoutInput& input, const GroupTree& tree,
                                           const std::vector<bool>& expanded,
                                           std::span<const Size> collapsedSizes,
                                           const GroupedLayoutOptions& options, Progress& progress,
                                           GroupLayoutCache* cache = nullptr);

/// Background refinement (run when the user is idle): re-runs dot with `budgetSeconds` on every
/// group the cache holds a layered fallback for and caches dot's drawing instead, so the next
/// computeGroupedLayout() shows it (the groups around it are laid out anew, as their children's
/// sizes changed). A group dot cannot draw within this budget either keeps the layered drawing
/// and is not tried again. Returns how many groups got dot's drawing; a cancel stops within one
/// poll interval (Errc::Cancelled), leaving the untried groups pending.
Result<size_t> refineFallbacks(GroupLayoutCache& cache, double budgetSeconds, Progress& progress);

/// Every group expanded.
std::vector<bool> expandAll(const GroupTree& tree);

/// The default view: groups expanded breadth-first while at most `maxVisible` boxes are drawn.
std::vector<bool> autoExpand(const GroupTree& tree, size_t maxVisible = 60);

/// Expands every group around `node` so that it is drawn; true when something changed.
bool expandToNode(const GroupTree& tree, std::vector<bool>& expanded, uint32_t node);

/// The box `node` is drawn in under `expanded`: itself, or its outermost collapsed group.
Unit visibleUnit(const GroupTree& tree, const std::vector<bool>& expanded, uint32_t node);

} // namespace qs::layout
