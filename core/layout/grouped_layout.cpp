#include "core/layout/grouped_layout.h"

#include "core/layout/graphviz_layout.h"
#include "core/layout/layered_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <tuple>
#include <unordered_map>

namespace qs::layout {

using detail::DotEdge;
using detail::DotGraph;
using detail::DotNode;
using detail::DotResult;
using detail::RankPin;

struct GroupLayoutCache::Impl {
    std::mutex mutex;
    std::unordered_map<uint64_t, DotResult> results; ///< by dot-graph content hash
    /// Dot graphs whose call ran out of budget (their results are the layered fallback), for
    /// refineFallbacks().
    std::unordered_map<uint64_t, DotGraph> pending;
};

GroupLayoutCache::GroupLayoutCache()
    : m_impl(std::make_unique<Impl>()) {}

GroupLayoutCache::~GroupLayoutCache() = default;

size_t GroupLayoutCache::pendingRefinements() const {
    const std::lock_guard lock(m_impl->mutex);
    return m_impl->pending.size();
}

namespace {
constexpr Size kProxySize{2, 2};

/// One expanded group as dot sees it: its children, proxies for tensors entering and leaving,
/// and one dot edge per connected pair.
struct LocalGraph {
    std::vector<GroupTree::Child> children;
    std::map<std::pair<bool, uint32_t>, uint32_t> dotOfChild;
    std::map<OutputRef, uint32_t> inProxies;
    std::map<OutputRef, uint32_t> outProxies;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> edgeOf; ///< (tail, head) -> dot edge
    DotGraph dot;
    DotResult result;
    Point origin; ///< where the content's top-left lies in the drawing
};

uint64_t hashDot(const DotGraph& dot) {
    uint64_t h = 1469598103934665603ULL;
    const auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    const auto mixDouble = [&mix](double d) { mix(static_cast<uint64_t>(std::llround(d * 64))); };
    mix(dot.nodes.size());
    for (const DotNode& node : dot.nodes) {
        mixDouble(node.size.width);
        mixDouble(node.size.height);
        mix(static_cast<uint64_t>(node.pin));
    }
    mix(dot.edges.size());
    for (const DotEdge& edge : dot.edges) {
        mix((static_cast<uint64_t>(edge.tail) << 32) | edge.head);
    }
    mixDouble(dot.nodeSeparation);
    mixDouble(dot.rankSeparation);
    mix(dot.tuned ? 1 : 0);
    return h;
}

uint32_t lowestCommonGroup(const GroupTree& tree, uint32_t a, uint32_t b) {
    while (tree.groups[a].depth > tree.groups[b].depth) {
        a = tree.groups[a].parent;
    }
    while (tree.groups[b].depth > tree.groups[a].depth) {
        b = tree.groups[b].parent;
    }
    while (a != b) {
        a = tree.groups[a].parent;
        b = tree.groups[b].parent;
    }
    return a;
}

Point shifted(Point p, Point by) {
    return {p.x + by.x, p.y + by.y};
}

void appendLine(std::vector<Point>& path, Point to) {
    const Point from = path.back();
    path.push_back({from.x + (to.x - from.x) / 3, from.y + (to.y - from.y) / 3});
    path.push_back({from.x + 2 * (to.x - from.x) / 3, from.y + 2 * (to.y - from.y) / 3});
    path.push_back(to);
}

/// Laid-out state shared by the steps below.
struct Run {
    const LayoutInput& input;
    const GroupTree& tree;
    const std::vector<bool>& expanded;
    std::span<const Size> collapsedSizes;
    const GroupedLayoutOptions& options;
    std::vector<bool> open;        ///< expanded with every ancestor expanded: laid out
    std::vector<uint32_t> localOf; ///< group -> index in locals, or UINT32_MAX
    std::vector<LocalGraph> locals;
    std::vector<uint32_t> openOrder; ///< deepest first
};

uint32_t dotOfChild(LocalGraph& local, GroupTree::Child child) {
    return local.dotOfChild.at({child.isNode, child.index});
}

uint32_t addEdge(LocalGraph& local, uint32_t tail, uint32_t head) {
    auto [it, added] = local.edgeOf.try_emplace({tail, head}, 0);
    if (added) {
        it->second = static_cast<uint32_t>(local.dot.edges.size());
        local.dot.edges.push_back({tail, head});
    }
    return it->second;
}

uint32_t proxy(LocalGraph& local, std::map<OutputRef, uint32_t>& proxies, OutputRef key,
               RankPin pin) {
    auto [it, added] = proxies.try_emplace(key, 0);
    if (added) {
        it->second = static_cast<uint32_t>(local.dot.nodes.size());
        local.dot.nodes.push_back({kProxySize, pin});
    }
    return it->second;
}

/// Marks the open groups (expanded, with every ancestor expanded) and numbers them in pre-order.
void markOpenGroups(Run& run) {
    const GroupTree& tree = run.tree;
    run.open.assign(tree.groups.size(), false);
    run.localOf.assign(tree.groups.size(), UINT32_MAX);
    for (uint32_t g = 0; g < tree.groups.size(); ++g) {
        const uint32_t parent = tree.groups[g].parent;
        const bool expanded = g == 0 || (g < run.expanded.size() && run.expanded[g]);
        // Pre-order numbering: a parent comes before its children.
        run.open[g] = expanded && (parent == kNoGroup || run.open[parent]);
        if (run.open[g]) {
            run.localOf[g] = static_cast<uint32_t>(run.openOrder.size());
            run.openOrder.push_back(g);
        }
    }
}

/// The first node of a group at any depth: its drawing-order key (node lists are sorted).
uint32_t firstNodeOf(const GroupTree& tree, uint32_t group) {
    uint32_t first = UINT32_MAX;
    std::vector<uint32_t> stack{group};
    while (!stack.empty()) {
        const uint32_t at = stack.back();
        stack.pop_back();
        if (!tree.groups[at].nodes.empty()) {
            first = std::min(first, tree.groups[at].nodes.front());
        }
        stack.insert(stack.end(), tree.groups[at].groups.begin(), tree.groups[at].groups.end());
    }
    return first;
}

/// One dot node per child of open group `g` (nodes and child groups), in drawing order.
void addChildren(const Run& run, uint32_t g, LocalGraph& local) {
    const GroupTree& tree = run.tree;
    local.dot.nodeSeparation = run.options.nodeSeparation;
    local.dot.rankSeparation = run.options.rankSeparation;
    std::vector<std::pair<uint32_t, GroupTree::Child>> keyed;
    for (uint32_t node : tree.groups[g].nodes) {
        keyed.push_back({node, {true, node}});
    }
    for (uint32_t child : tree.groups[g].groups) {
        keyed.push_back({firstNodeOf(tree, child), {false, child}});
    }
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& entry : keyed) {
        const GroupTree::Child child = entry.second;
        local.dotOfChild[{child.isNode, child.index}] =
            static_cast<uint32_t>(local.dot.nodes.size());
        local.children.push_back(child);
        local.dot.nodes.push_back({}); // sized once the children are laid out
    }
}

/// The dot pieces of one layout edge: from its tail up to the lowest common group through
/// leaving proxies, across that group, and down to its head through entering proxies.
void addLayoutEdge(Run& run, const LayoutEdge& edge) {
    const GroupTree& tree = run.tree;
    const uint32_t gu = tree.groupOfNode[edge.from];
    const uint32_t gv = tree.groupOfNode[edge.to];
    const uint32_t top = lowestCommonGroup(tree, gu, gv);
    if (!run.open[top] || edge.from == edge.to) {
        return; // drawn inside a collapsed group, or not at all
    }
    const OutputRef key{edge.from, edge.fromPort};
    for (uint32_t g = gu; g != top; g = tree.groups[g].parent) {
        if (run.open[g]) {
            LocalGraph& local = run.locals[run.localOf[g]];
            const uint32_t out = proxy(local, local.outProxies, key, RankPin::Last);
            addEdge(local, dotOfChild(local, tree.childToward(g, edge.from)), out);
        }
    }
    for (uint32_t g = gv; g != top; g = tree.groups[g].parent) {
        if (run.open[g]) {
            LocalGraph& local = run.locals[run.localOf[g]];
            const uint32_t in = proxy(local, local.inProxies, key, RankPin::First);
            addEdge(local, in, dotOfChild(local, tree.childToward(g, edge.to)));
        }
    }
    LocalGraph& local = run.locals[run.localOf[top]];
    addEdge(local, dotOfChild(local, tree.childToward(top, edge.from)),
            dotOfChild(local, tree.childToward(top, edge.to)));
}

void buildLocals(Run& run) {
    markOpenGroups(run);
    run.locals.resize(run.openOrder.size());
    for (uint32_t g : run.openOrder) {
        addChildren(run, g, run.locals[run.localOf[g]]);
    }
    for (const LayoutEdge& edge : run.input.edges) {
        addLayoutEdge(run, edge);
    }
}

Size frameSize(const DotResult& result, const GroupedLayoutOptions& options) {
    return {result.size.width + 2 * options.groupPadding,
            result.size.height + options.headerHeight + 2 * options.groupPadding};
}

/// The size of a child box as its parent's dot call sees it: a node's, an open group's frame, or
/// a collapsed group's box.
Size childSize(const Run& run, GroupTree::Child child) {
    if (child.isNode) {
        return run.input.nodes[child.index].size;
    }
    if (run.open[child.index]) {
        return frameSize(run.locals[run.localOf[child.index]].result, run.options);
    }
    if (child.index < run.collapsedSizes.size()) {
        return run.collapsedSizes[child.index];
    }
    return {120, 40};
}

/// The cached drawing of a dot graph, if any.
bool fromCache(GroupLayoutCache* cache, uint64_t key, DotResult& result) {
    if (cache == nullptr) {
        return false;
    }
    const std::lock_guard lock(cache->impl().mutex);
    const auto hit = cache->impl().results.find(key);
    if (hit == cache->impl().results.end()) {
        return false;
    }
    result = hit->second;
    return true;
}

/// Draws one group's dot graph: a DenseNet-like dense graph goes to the layered layout up front,
/// a small one runs dot in this process, any other runs dot within the budget and falls back to
/// the layered layout (counted, and remembered in the cache for refineFallbacks()).
Result<void> drawLocal(const Run& run, LocalGraph& local, uint64_t key, GroupLayoutCache* cache,
                       GroupedLayout& out, Progress& progress) {
    ++out.dotCalls;
    const bool dense = static_cast<double>(local.dot.edges.size()) >
                       run.options.denseEdgesPerNode * static_cast<double>(local.dot.nodes.size());
    if (dense && local.dot.nodes.size() > run.options.inProcessUpTo) {
        local.result = detail::layeredLayout(local.dot); // not a fallback: chosen up front
        --out.dotCalls;
        return success();
    }
    if (local.dot.nodes.size() <= run.options.inProcessUpTo) {
        if (auto result = detail::runDot(local.dot); result.ok()) {
            local.result = std::move(result).value();
            return success();
        }
    } else {
        detail::BudgetedDot budgeted =
            detail::runDotBudgeted(local.dot, run.options.dotBudgetSeconds, progress);
        if (budgeted.outcome == detail::DotOutcome::Cancelled) {
            return Error(Errc::Cancelled, "layout cancelled");
        }
        if (budgeted.outcome == detail::DotOutcome::Done) {
            local.result = std::move(budgeted.result);
            return success();
        }
    }
    ++out.fallbacks;
    local.result = detail::layeredLayout(local.dot);
    if (cache != nullptr) {
        const std::lock_guard lock(cache->impl().mutex);
        cache->impl().pending.try_emplace(key, local.dot);
    }
    return success();
}

/// Lays out every open group, deepest first, so each knows its children's frame sizes.
Result<void> layOutLocals(Run& run, GroupLayoutCache* cache, GroupedLayout& out,
                          Progress& progress) {
    std::vector<uint32_t> order = run.openOrder;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return run.tree.groups[a].depth > run.tree.groups[b].depth;
    });
    for (size_t i = 0; i < order.size(); ++i) {
        if (progress.isCancelled()) {
            return Error(Errc::Cancelled, "layout cancelled");
        }
        LocalGraph& local = run.locals[run.localOf[order[i]]];
        for (size_t c = 0; c < local.children.size(); ++c) {
            local.dot.nodes[c].size = childSize(run, local.children[c]);
        }
        local.dot.tuned = local.dot.nodes.size() > run.options.tunedAbove ||
                          local.dot.edges.size() > 2 * run.options.tunedAbove;
        const uint64_t key = hashDot(local.dot);
        if (fromCache(cache, key, local.result)) {
            continue;
        }
        char what[96];
        std::snprintf(what, sizeof what, "Laying out group %zu of %zu (%zu boxes)", i + 1,
                      order.size(), local.children.size());
        progress.report(static_cast<double>(i) / static_cast<double>(order.size()), what);
        QS_TRY(drawLocal(run, local, key, cache, out, progress));
        if (cache != nullptr) {
            const std::lock_guard lock(cache->impl().mutex);
            cache->impl().results[key] = local.result;
        }
    }
    progress.report(1.0, "Layout done");
    return success();
}

void spread(uint32_t count, const Rect& box, double y, std::vector<Point>& anchors) {
    anchors.clear();
    for (uint32_t port = 0; port < count; ++port) {
        const double fraction = (port + 0.5) / count;
        anchors.push_back({box.x + fraction * box.width, y});
    }
}

/// Absolute boxes: parents before children (pre-order).
void placeBoxes(Run& run, GroupedLayout& out) {
    const GroupTree& tree = run.tree;
    const GroupedLayoutOptions& options = run.options;
    out.nodes.assign(run.input.nodes.size(), {});
    out.nodeVisible.assign(run.input.nodes.size(), false);
    out.groups.assign(tree.groups.size(), {});
    for (uint32_t g : run.openOrder) {
        LocalGraph& local = run.locals[run.localOf[g]];
        if (g == 0) {
            local.origin = {0, 0};
        } else {
            const Rect& frame = out.groups[g].box;
            local.origin = {frame.x + options.groupPadding,
                            frame.y + options.headerHeight + options.groupPadding};
        }
        for (size_t c = 0; c < local.children.size(); ++c) {
            const GroupTree::Child child = local.children[c];
            const Size size = local.dot.nodes[c].size;
            const Point center = shifted(local.result.centers[c], local.origin);
            const Rect box{center.x - size.width / 2, center.y - size.height / 2, size.width,
                           size.height};
            if (child.isNode) {
                PlacedNode& node = out.nodes[child.index];
                node.box = box;
                spread(run.input.nodes[child.index].inputPorts, box, box.y, node.inputAnchors);
                spread(run.input.nodes[child.index].outputPorts, box, box.bottom(),
                       node.outputAnchors);
                out.nodeVisible[child.index] = true;
            } else {
                PlacedGroup& group = out.groups[child.index];
                group.box = box;
                group.visible = true;
                group.expanded = run.open[child.index];
            }
        }
    }
}

/// The port of a collapsed group for `key`, created on first use.
uint32_t groupPort(std::vector<OutputRef>& sources, OutputRef key) {
    const auto found = std::find(sources.begin(), sources.end(), key);
    if (found != sources.end()) {
        return static_cast<uint32_t>(found - sources.begin());
    }
    sources.push_back(key);
    return static_cast<uint32_t>(sources.size() - 1);
}

/// The dot piece of edge (tail, head) in `local`, in drawing coordinates.
std::vector<Point> piece(const LocalGraph& local, uint32_t tail, uint32_t head) {
    std::vector<Point> path;
    const auto found = local.edgeOf.find({tail, head});
    if (found == local.edgeOf.end()) {
        return path;
    }
    for (const Point& p : local.result.paths[found->second]) {
        path.push_back(shifted(p, local.origin));
    }
    if (path.size() < 4 || (path.size() - 1) % 3 != 0) {
        const Point from = shifted(local.result.centers[tail], local.origin);
        const Point to = shifted(local.result.centers[head], local.origin);
        path = {from, from, to, to};
    }
    return path;
}

/// Joins `next` onto `path` with a straight segment between them.
void join(std::vector<Point>& path, const std::vector<Point>& next) {
    if (next.empty()) {
        return;
    }
    if (path.empty()) {
        path = next;
        return;
    }
    appendLine(path, next.front());
    path.insert(path.end(), next.begin() + 1, next.end());
}

/// Moves the ends of `path` onto `from` and `to`, keeping the end tangents.
void snapEnds(std::vector<Point>& path, Point from, Point to) {
    if (path.size() < 4) {
        const double bend = std::max(8.0, (to.y - from.y) / 2);
        path = {from, {from.x, from.y + bend}, {to.x, to.y - bend}, to};
        return;
    }
    const Point head{from.x - path[0].x, from.y - path[0].y};
    path[0] = shifted(path[0], head);
    path[1] = shifted(path[1], head);
    const size_t last = path.size() - 1;
    const Point tail{to.x - path[last].x, to.y - path[last].y};
    path[last] = shifted(path[last], tail);
    path[last - 1] = shifted(path[last - 1], tail);
}

/// The bezier of layout edge `edge` stitched from the dot pieces of every level it passes: up
/// from its tail through the leaving proxies, across the lowest common group, and down to its
/// head through the entering proxies, outermost group first.
std::vector<Point> stitchedPath(const Run& run, const LayoutEdge& edge) {
    const GroupTree& tree = run.tree;
    const OutputRef key{edge.from, edge.fromPort};
    const auto dotOf = [&tree](const LocalGraph& local, uint32_t g, uint32_t node) {
        const GroupTree::Child child = tree.childToward(g, node);
        return local.dotOfChild.at({child.isNode, child.index});
    };
    const uint32_t gu = tree.groupOfNode[edge.from];
    const uint32_t gv = tree.groupOfNode[edge.to];
    const uint32_t top = lowestCommonGroup(tree, gu, gv);
    std::vector<Point> path;
    for (uint32_t g = gu; g != top; g = tree.groups[g].parent) {
        if (run.open[g]) {
            const LocalGraph& local = run.locals[run.localOf[g]];
            join(path, piece(local, dotOf(local, g, edge.from), local.outProxies.at(key)));
        }
    }
    const LocalGraph& across = run.locals[run.localOf[top]];
    join(path, piece(across, dotOf(across, top, edge.from), dotOf(across, top, edge.to)));
    std::vector<uint32_t> descending;
    for (uint32_t g = gv; g != top; g = tree.groups[g].parent) {
        descending.push_back(g);
    }
    std::reverse(descending.begin(), descending.end()); // outermost group first
    for (const uint32_t g : descending) {
        if (run.open[g]) {
            const LocalGraph& local = run.locals[run.localOf[g]];
            join(path, piece(local, local.inProxies.at(key), dotOf(local, g, edge.to)));
        }
    }
    return path;
}

void routeEdges(Run& run, GroupedLayout& out) {
    const GroupTree& tree = run.tree;
    std::vector<Unit> unitOf(run.input.nodes.size());
    for (uint32_t node = 0; node < run.input.nodes.size(); ++node) {
        unitOf[node] = visibleUnit(tree, run.expanded, node);
    }
    std::map<std::tuple<bool, uint32_t, uint32_t, bool, uint32_t, uint32_t>, size_t> drawn;
    for (uint32_t e = 0; e < run.input.edges.size(); ++e) {
        const LayoutEdge& edge = run.input.edges[e];
        const Unit from = unitOf[edge.from];
        const Unit to = unitOf[edge.to];
        if (from == to) {
            continue;
        }
        const OutputRef key{edge.from, edge.fromPort};
        const uint32_t fromPort =
            from.isGroup ? groupPort(out.groups[from.index].outputSources, key) : edge.fromPort;
        const uint32_t toPort =
            to.isGroup ? groupPort(out.groups[to.index].inputSources, key) : edge.toPort;
        const auto [it, added] = drawn.try_emplace(
            {from.isGroup, from.index, fromPort, to.isGroup, to.index, toPort}, out.edges.size());
        if (!added) {
            continue;
        }
        out.edges.push_back({from, fromPort, to, toPort, stitchedPath(run, edge), e});
    }
    // Port anchors of collapsed groups, then every path's ends on its anchors.
    for (PlacedGroup& group : out.groups) {
        if (group.visible && !group.expanded) {
            spread(static_cast<uint32_t>(group.inputSources.size()), group.box, group.box.y,
                   group.inputAnchors);
            spread(static_cast<uint32_t>(group.outputSources.size()), group.box, group.box.bottom(),
                   group.outputAnchors);
        }
    }
    for (DrawnEdge& edge : out.edges) {
        const Point from = edge.from.isGroup
                               ? out.groups[edge.from.index].outputAnchors.at(edge.fromPort)
                               : out.nodes[edge.from.index].outputAnchors.at(edge.fromPort);
        const Point to = edge.to.isGroup ? out.groups[edge.to.index].inputAnchors.at(edge.toPort)
                                         : out.nodes[edge.to.index].inputAnchors.at(edge.toPort);
        snapEnds(edge.bezier, from, to);
    }
}

void computeBounds(GroupedLayout& out) {
    bool any = false;
    double left = 0;
    double top = 0;
    double right = 0;
    double bottom = 0;
    const auto include = [&](Point p) {
        if (!any) {
            left = right = p.x;
            top = bottom = p.y;
            any = true;
        }
        left = std::min(left, p.x);
        top = std::min(top, p.y);
        right = std::max(right, p.x);
        bottom = std::max(bottom, p.y);
    };
    const auto includeRect = [&](const Rect& r) {
        include({r.x, r.y});
        include({r.right(), r.bottom()});
    };
    for (size_t i = 0; i < out.nodes.size(); ++i) {
        if (out.nodeVisible[i]) {
            includeRect(out.nodes[i].box);
        }
    }
    for (const PlacedGroup& group : out.groups) {
        if (group.visible) {
            includeRect(group.box);
        }
    }
    for (const DrawnEdge& edge : out.edges) {
        for (const Point& p : edge.bezier) {
            include(p);
        }
    }
    out.bounds = {left, top, right - left, bottom - top};
}
} // namespace

Result<GroupedLayout> computeGroupedLayout(const LayoutInput& input, const GroupTree& tree,
                                           const std::vector<bool>& expanded,
                                           std::span<const Size> collapsedSizes,
                                           const GroupedLayoutOptions& options, Progress& progress,
                                           GroupLayoutCache* cache) {
    for (const LayoutEdge& edge : input.edges) {
        if (edge.from >= input.nodes.size() || edge.to >= input.nodes.size() ||
            edge.fromPort >= input.nodes[edge.from].outputPorts ||
            edge.toPort >= input.nodes[edge.to].inputPorts) {
            return Error(Errc::InvalidArgument, "layout edge refers to a missing node or port");
        }
    }
    if (tree.groupOfNode.size() != input.nodes.size() || tree.groups.empty()) {
        return Error(Errc::InvalidArgument, "the group tree was built for another graph");
    }
    GroupedLayout out;
    Run run{input, tree, expanded, collapsedSizes, options, {}, {}, {}, {}};
    buildLocals(run);
    QS_TRY(layOutLocals(run, cache, out, progress));
    placeBoxes(run, out);
    routeEdges(run, out);
    computeBounds(out);
    return out;
}

std::vector<bool> expandAll(const GroupTree& tree) {
    return std::vector<bool>(tree.groups.size(), true);
}

std::vector<bool> autoExpand(const GroupTree& tree, size_t maxVisible) {
    std::vector<bool> expanded(tree.groups.size(), false);
    expanded[0] = true;
    size_t visible = tree.groups[0].groups.size() + tree.groups[0].nodes.size();
    std::vector<uint32_t> queue(tree.groups[0].groups.begin(), tree.groups[0].groups.end());
    for (size_t i = 0; i < queue.size(); ++i) {
        const LayoutGroup& group = tree.groups[queue[i]];
        const size_t children = group.groups.size() + group.nodes.size();
        if (visible - 1 + children > maxVisible) {
            continue; // too big for the overview; its siblings may still fit
        }
        expanded[queue[i]] = true;
        visible += children - 1;
        queue.insert(queue.end(), group.groups.begin(), group.groups.end());
    }
    return expanded;
}

bool expandToNode(const GroupTree& tree, std::vector<bool>& expanded, uint32_t node) {
    bool changed = false;
    expanded.resize(tree.groups.size(), false);
    for (uint32_t g = tree.groupOfNode.at(node); g != kNoGroup; g = tree.groups[g].parent) {
        if (!expanded[g]) {
            expanded[g] = true;
            changed = true;
        }
    }
    return changed;
}

Unit visibleUnit(const GroupTree& tree, const std::vector<bool>& expanded, uint32_t node) {
    Unit unit{false, node};
    for (uint32_t g = tree.groupOfNode[node]; g != 0 && g != kNoGroup; g = tree.groups[g].parent) {
        if (g >= expanded.size() || !expanded[g]) {
            unit = {true, g}; // keeps the outermost collapsed one
        }
    }
    return unit;
}

Result<size_t> refineFallbacks(GroupLayoutCache& cache, double budgetSeconds, Progress& progress) {
    std::vector<std::pair<uint64_t, DotGraph>> pending;
    {
        const std::lock_guard lock(cache.impl().mutex);
        pending.assign(cache.impl().pending.begin(), cache.impl().pending.end());
    }
    size_t refined = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
        const auto& [key, dot] = pending[i];
        progress.report(static_cast<double>(i) / static_cast<double>(pending.size()),
                        "Refining the layout");
        detail::BudgetedDot budgeted = detail::runDotBudgeted(dot, budgetSeconds, progress);
        if (budgeted.outcome == detail::DotOutcome::Cancelled) {
            return Error(Errc::Cancelled, "layout refinement cancelled");
        }
        const std::lock_guard lock(cache.impl().mutex);
        // Tried once: a graph dot cannot draw within this budget keeps the layered drawing.
        cache.impl().pending.erase(key);
        if (budgeted.outcome == detail::DotOutcome::Done) {
            cache.impl().results[key] = std::move(budgeted.result);
            ++refined;
        }
    }
    progress.report(1.0, "Layout refined");
    return refined;
}

} // namespace qs::layout
