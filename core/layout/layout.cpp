#include "core/layout/layout.h"

#include "core/layout/graphviz_layout.h"

#include <queue>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <utility>

namespace qs::layout {

namespace {
using detail::DotEdge;
using detail::DotGraph;
using detail::DotNode;
using detail::DotResult;
using detail::RankPin;

constexpr Size kProxySize{2, 2};
/// A cut may land this far before the section cap when fewer edges cross there.
constexpr double kCutWindow = 0.4;
constexpr int64_t kEdgeCutCost = 4;
constexpr int64_t kScopeSplitCost = 6;

/// An output of a node: (node, output index). Cross-section edges share one proxy per output.
using OutputKey = std::pair<uint32_t, uint32_t>;

/// Section index of every node, cutting `order` into runs of at most `cap` nodes at the
/// positions where the fewest edges cross.
std::vector<uint32_t> assignSections(const LayoutInput& input, const std::vector<uint32_t>& order,
                                     size_t cap, size_t& sectionCount) {
    const size_t count = order.size();
    std::vector<uint32_t> position(count);
    for (size_t i = 0; i < count; ++i) {
        position[order[i]] = static_cast<uint32_t>(i);
    }
    // live[c]: edges from a position before c to one at or after c.
    std::vector<int64_t> live(count + 1, 0);
    for (const LayoutEdge& edge : input.edges) {
        const uint32_t a = std::min(position[edge.from], position[edge.to]);
        const uint32_t b = std::max(position[edge.from], position[edge.to]);
        if (a != b) {
            ++live[a + 1];
            --live[b + 1];
        }
    }
    for (size_t c = 1; c <= count; ++c) {
        live[c] += live[c - 1];
    }
    std::vector<uint32_t> sectionOfPosition(count, 0);
    size_t start = 0;
    uint32_t section = 0;
    cap = std::max<size_t>(cap, 1);
    while (start < count) {
        size_t cut = count;
        if (count - start > cap) {
            const size_t lowest =
                start + std::max<size_t>(
                            1, static_cast<size_t>(static_cast<double>(cap) * (1.0 - kCutWindow)));
            // Cost of cutting before position c: the edges cut, plus a penalty for splitting a
            // name scope (a block such as "/layer2/1") across two sections.
            const auto cost = [&](size_t c) {
                const uint32_t before = input.nodes[order[c - 1]].scope;
                const uint32_t after = input.nodes[order[c]].scope;
                const bool splitsScope = before != 0 && before == after;
                return live[c] * kEdgeCutCost + (splitsScope ? kScopeSplitCost : 0);
            };
            cut = start + cap;
            for (size_t c = start + cap; c >= lowest; --c) {
                if (cost(c) < cost(cut)) {
                    cut = c;
                }
            }
        }
        std::fill(sectionOfPosition.begin() + static_cast<std::ptrdiff_t>(start),
                  sectionOfPosition.begin() + static_cast<std::ptrdiff_t>(cut), section);
        start = cut;
        ++section;
    }
    sectionCount = section;
    std::vector<uint32_t> sectionOfNode(count);
    for (size_t node = 0; node < count; ++node) {
        sectionOfNode[node] = sectionOfPosition[position[node]];
    }
    return sectionOfNode;
}

/// One dot call's worth of the graph: its nodes, proxies for cut edges, and where each input
/// edge's pieces live.
struct Section {
    DotGraph dot;
    std::vector<uint32_t> members;            ///< layout node of each dot node (proxies: none)
    std::map<OutputKey, uint32_t> inProxies;  ///< dot node entering from an earlier section
    std::map<OutputKey, uint32_t> outProxies; ///< dot node leaving towards another section
    std::map<OutputKey, uint32_t> outEdges;   ///< dot edge from the output to its out proxy
    DotResult result;
    Point offset;
};

/// How an input edge is drawn: one dot edge, or a tail piece, a link and a head piece.
struct EdgeRoute {
    uint32_t headDotEdge = 0; ///< dot edge in the head's section (whole edge or head piece)
    bool crossing = false;
};

/// Where a link between sections runs: in the gap right of `gap`'s column, lane `lane`.
struct Lane {
    uint32_t gap = 0;
    uint32_t lane = 0;
};

struct Sections {
    std::vector<Section> list;
    std::vector<uint32_t> columnOf;  ///< per section
    std::vector<double> columnRight; ///< per column: right edge of its widest section
    std::map<std::pair<OutputKey, uint32_t>, Lane> lanes; ///< (output, head section) -> lane
    std::vector<uint32_t> sectionOf;
    std::vector<uint32_t> dotIndexOf; ///< dot node index of each layout node in its section
    std::vector<EdgeRoute> routes;
};

uint32_t addDotNode(Section& section, Size size, RankPin pin, uint32_t member) {
    section.dot.nodes.push_back(DotNode{size, pin});
    section.members.push_back(member);
    return static_cast<uint32_t>(section.dot.nodes.size() - 1);
}

uint32_t addDotEdge(Section& section, uint32_t tail, uint32_t head) {
    section.dot.edges.push_back(DotEdge{tail, head});
    return static_cast<uint32_t>(section.dot.edges.size() - 1);
}

Sections buildSections(const LayoutInput& input, const LayoutOptions& options) {
    Sections s;
    size_t count = 0;
    s.sectionOf = assignSections(input, sectionOrder(input), options.maxSectionNodes, count);
    s.list.resize(count);
    s.dotIndexOf.resize(input.nodes.size());
    for (Section& section : s.list) {
        section.dot.nodeSeparation = options.nodeSeparation;
        section.dot.rankSeparation = options.rankSeparation;
    }
    for (uint32_t node = 0; node < input.nodes.size(); ++node) {
        s.dotIndexOf[node] =
            addDotNode(s.list[s.sectionOf[node]], input.nodes[node].size, RankPin::Free, node);
    }
    s.routes.resize(input.edges.size());
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const LayoutEdge& edge = input.edges[e];
        Section& tailSection = s.list[s.sectionOf[edge.from]];
        Section& headSection = s.list[s.sectionOf[edge.to]];
        if (&tailSection == &headSection) {
            s.routes[e].headDotEdge =
                addDotEdge(headSection, s.dotIndexOf[edge.from], s.dotIndexOf[edge.to]);
            continue;
        }
        const OutputKey key{edge.from, edge.fromPort};
        if (!tailSection.outProxies.contains(key)) {
            const uint32_t proxy = addDotNode(tailSection, kProxySize, RankPin::Last, UINT32_MAX);
            tailSection.outProxies[key] = proxy;
            tailSection.outEdges[key] = addDotEdge(tailSection, s.dotIndexOf[edge.from], proxy);
        }
        auto [it, added] = headSection.inProxies.try_emplace(key, 0);
        if (added) {
            it->second = addDotNode(headSection, kProxySize, RankPin::First, UINT32_MAX);
        }
        s.routes[e] = {addDotEdge(headSection, it->second, s.dotIndexOf[edge.to]), true};
    }
    return s;
}

/// Runs dot per section, cancellable between sections.
Result<void> runSections(Sections& s, Progress& progress) {
    for (size_t i = 0; i < s.list.size(); ++i) {
        QS_TRY(checkCancelled(progress));
        char what[64];
        std::snprintf(what, sizeof what, "Laying out section %zu of %zu", i + 1, s.list.size());
        progress.report(static_cast<double>(i) / static_cast<double>(s.list.size()), what);
        QS_ASSIGN_OR_RETURN(s.list[i].result, detail::runDot(s.list[i].dot));
    }
    progress.report(1.0, "Layout done");
    return success();
}

/// Deals the sections into columns of about equal height. A stack much taller than wide (a long
/// chain) is wrapped into roughly square columns, like text; otherwise one column.
void assignColumns(Sections& s, const LayoutOptions& options) {
    double stacked = 0;
    double widest = 0;
    for (const Section& section : s.list) {
        stacked += section.result.size.height + options.sectionGap;
        widest = std::max(widest, section.result.size.width);
    }
    size_t columns = 1;
    if (options.wrapRatio > 0 && s.list.size() > 1 && stacked > options.wrapRatio * widest) {
        const double columnWidth = widest + 2 * options.sectionGap;
        columns = static_cast<size_t>(std::ceil(std::sqrt(stacked / columnWidth)));
        columns = std::clamp<size_t>(columns, 1, s.list.size());
    }
    const double target = stacked / static_cast<double>(columns);
    s.columnOf.assign(s.list.size(), 0);
    double height = 0;
    uint32_t column = 0;
    for (size_t i = 0; i < s.list.size(); ++i) {
        const double next = s.list[i].result.size.height + options.sectionGap;
        if (height > 0 && height + next / 2 > target && column + 1 < columns) {
            ++column;
            height = 0;
        }
        s.columnOf[i] = column;
        height += next;
    }
}

/// A link from section `a` to section `b` needs a lane unless `b` directly follows `a` in the
/// same column. It runs in the gap left of `b`'s column, or right of `a`'s when `b` is not in
/// a later column.
void assignLanes(const LayoutInput& input, Sections& s, std::vector<uint32_t>& lanesPerGap) {
    lanesPerGap.assign(s.columnOf.empty() ? 1 : s.columnOf.back() + 1, 0);
    for (const LayoutEdge& edge : input.edges) {
        const uint32_t a = s.sectionOf[edge.from];
        const uint32_t b = s.sectionOf[edge.to];
        if (a == b || (b == a + 1 && s.columnOf[a] == s.columnOf[b])) {
            continue;
        }
        const uint32_t gap = s.columnOf[b] > s.columnOf[a] ? s.columnOf[b] - 1 : s.columnOf[a];
        auto [lane, added] = s.lanes.try_emplace({OutputKey{edge.from, edge.fromPort}, b});
        if (added) {
            lane->second = {gap, lanesPerGap[gap]++};
        }
    }
}

/// Places the sections: columns left to right, sections top to bottom, each centred in its
/// column; the gap right of a column is wide enough for its lanes.
void arrangeSections(const LayoutInput& input, Sections& s, const LayoutOptions& options) {
    assignColumns(s, options);
    std::vector<uint32_t> lanesPerGap;
    assignLanes(input, s, lanesPerGap);
    const size_t columns = lanesPerGap.size();
    std::vector<double> widths(columns, 0);
    for (size_t i = 0; i < s.list.size(); ++i) {
        widths[s.columnOf[i]] = std::max(widths[s.columnOf[i]], s.list[i].result.size.width);
    }
    std::vector<double> lefts(columns, 0);
    s.columnRight.assign(columns, 0);
    for (size_t c = 0; c < columns; ++c) {
        s.columnRight[c] = lefts[c] + widths[c];
        if (c + 1 < columns) {
            lefts[c + 1] = s.columnRight[c] + 2 * options.sectionGap +
                           options.laneSpacing * static_cast<double>(lanesPerGap[c]);
        }
    }
    std::vector<double> tops(columns, 0);
    for (size_t i = 0; i < s.list.size(); ++i) {
        const uint32_t c = s.columnOf[i];
        const Size size = s.list[i].result.size;
        s.list[i].offset = {lefts[c] + (widths[c] - size.width) / 2, tops[c]};
        tops[c] += size.height + options.sectionGap;
    }
}

Point shifted(Point p, Point by) {
    return {p.x + by.x, p.y + by.y};
}

/// A straight segment as a cubic Bézier piece, appended after `path.back()`.
void appendLine(std::vector<Point>& path, Point to) {
    const Point from = path.back();
    path.push_back({from.x + (to.x - from.x) / 3, from.y + (to.y - from.y) / 3});
    path.push_back({from.x + 2 * (to.x - from.x) / 3, from.y + 2 * (to.y - from.y) / 3});
    path.push_back(to);
}

/// dot's path for `edge` of `section` in layout coordinates, its ends moved onto `from` and
/// `to` (the port anchors; dot only knows node centres). Tangents are kept.
std::vector<Point> snappedPath(const Section& section, uint32_t edge, Point from, Point to) {
    std::vector<Point> path;
    for (const Point& p : section.result.paths[edge]) {
        path.push_back(shifted(p, section.offset));
    }
    if (path.size() < 4 || (path.size() - 1) % 3 != 0) {
        const double bend = std::max(8.0, (to.y - from.y) / 2);
        return {from, {from.x, from.y + bend}, {to.x, to.y - bend}, to};
    }
    const Point head{from.x - path[0].x, from.y - path[0].y};
    path[0] = shifted(path[0], head);
    path[1] = shifted(path[1], head);
    const size_t last = path.size() - 1;
    const Point tail{to.x - path[last].x, to.y - path[last].y};
    path[last] = shifted(path[last], tail);
    path[last - 1] = shifted(path[last - 1], tail);
    return path;
}

void placeNodes(const LayoutInput& input, const Sections& s, Layout& layout) {
    layout.nodes.resize(input.nodes.size());
    for (uint32_t node = 0; node < input.nodes.size(); ++node) {
        const Section& section = s.list[s.sectionOf[node]];
        const Point center = shifted(section.result.centers[s.dotIndexOf[node]], section.offset);
        const Size size = input.nodes[node].size;
        PlacedNode& placed = layout.nodes[node];
        placed.box = {center.x - size.width / 2, center.y - size.height / 2, size.width,
                      size.height};
        placed.section = s.sectionOf[node];
        const auto spread = [&placed](uint32_t count, double y, std::vector<Point>& anchors) {
            for (uint32_t port = 0; port < count; ++port) {
                const double fraction = (port + 0.5) / count;
                anchors.push_back({placed.box.x + fraction * placed.box.width, y});
            }
        };
        spread(input.nodes[node].inputPorts, placed.box.y, placed.inputAnchors);
        spread(input.nodes[node].outputPorts, placed.box.bottom(), placed.outputAnchors);
    }
}

Rect sectionBox(const Section& section) {
    return {section.offset.x, section.offset.y, section.result.size.width,
            section.result.size.height};
}

/// Appends the link between the out proxy at `from` (bottom of section `a`) and the in proxy
/// at `to` (top of section `b`): an S-curve across the gap to the next section, otherwise a
/// path down (or up) a lane right of all sections.
void appendLink(std::vector<Point>& path, const Sections& s, uint32_t a, uint32_t b, Point to,
                double laneX, const LayoutOptions& options) {
    const Point from = path.back();
    if (b == a + 1 && s.columnOf[a] == s.columnOf[b]) {
        const double bend = (to.y - from.y) / 2;
        path.push_back({from.x, from.y + bend});
        path.push_back({to.x, to.y - bend});
        path.push_back(to);
        return;
    }
    const double below = sectionBox(s.list[a]).bottom() + options.sectionGap / 2;
    const double above = sectionBox(s.list[b]).y - options.sectionGap / 2;
    appendLine(path, {from.x, below});
    appendLine(path, {laneX, below});
    appendLine(path, {laneX, above});
    appendLine(path, {to.x, above});
    appendLine(path, to);
}

void routeEdges(const LayoutInput& input, const Sections& s, const LayoutOptions& options,
                Layout& layout) {
    layout.edges.resize(input.edges.size());
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const LayoutEdge& edge = input.edges[e];
        const Point from = layout.nodes[edge.from].outputAnchors.at(edge.fromPort);
        const Point to = layout.nodes[edge.to].inputAnchors.at(edge.toPort);
        const uint32_t b = s.sectionOf[edge.to];
        const Section& headSection = s.list[b];
        if (!s.routes[e].crossing) {
            layout.edges[e].bezier = snappedPath(headSection, s.routes[e].headDotEdge, from, to);
            continue;
        }
        const uint32_t a = s.sectionOf[edge.from];
        const Section& tailSection = s.list[a];
        const OutputKey key{edge.from, edge.fromPort};
        const uint32_t outProxy = tailSection.outProxies.at(key);
        const uint32_t inProxy = headSection.inProxies.at(key);
        const Point out = shifted(tailSection.result.centers[outProxy], tailSection.offset);
        const Point in = shifted(headSection.result.centers[inProxy], headSection.offset);
        double laneX = 0;
        if (const auto lane = s.lanes.find({key, b}); lane != s.lanes.end()) {
            laneX = s.columnRight[lane->second.gap] + options.sectionGap +
                    options.laneSpacing * static_cast<double>(lane->second.lane);
        }
        std::vector<Point> path = snappedPath(tailSection, tailSection.outEdges.at(key), from, out);
        appendLink(path, s, a, b, in, laneX, options);
        std::vector<Point> head = snappedPath(headSection, s.routes[e].headDotEdge, in, to);
        path.insert(path.end(), head.begin() + 1, head.end());
        layout.edges[e].bezier = std::move(path);
    }
}

void computeBounds(Layout& layout) {
    if (layout.nodes.empty()) {
        return;
    }
    double left = layout.nodes.front().box.x;
    double top = layout.nodes.front().box.y;
    double right = layout.nodes.front().box.right();
    double bottom = layout.nodes.front().box.bottom();
    const auto include = [&](Point p) {
        left = std::min(left, p.x);
        top = std::min(top, p.y);
        right = std::max(right, p.x);
        bottom = std::max(bottom, p.y);
    };
    for (const PlacedNode& node : layout.nodes) {
        include({node.box.x, node.box.y});
        include({node.box.right(), node.box.bottom()});
    }
    for (const PlacedEdge& edge : layout.edges) {
        for (const Point& p : edge.bezier) {
            include(p);
        }
    }
    layout.bounds = {left, top, right - left, bottom - top};
}
} // namespace

std::vector<uint32_t> sectionOrder(const LayoutInput& input) {
    const size_t count = input.nodes.size();
    std::vector<uint32_t> pending(count, 0);
    std::vector<std::vector<uint32_t>> heads(count);
    for (const LayoutEdge& edge : input.edges) {
        if (edge.from != edge.to) {
            ++pending[edge.to];
            heads[edge.from].push_back(edge.to);
        }
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (uint32_t node = 0; node < count; ++node) {
        if (pending[node] == 0) {
            ready.push(node);
        }
    }
    std::vector<uint32_t> order;
    order.reserve(count);
    std::vector<bool> placed(count, false);
    while (!ready.empty()) {
        const uint32_t node = ready.top();
        ready.pop();
        order.push_back(node);
        placed[node] = true;
        for (uint32_t head : heads[node]) {
            if (--pending[head] == 0) {
                ready.push(head);
            }
        }
    }
    for (uint32_t node = 0; node < count; ++node) {
        if (!placed[node]) {
            order.push_back(node); // on or behind a cycle
        }
    }
    return order;
}

Result<Layout> computeLayout(const LayoutInput& input, const LayoutOptions& options,
                             Progress& progress) {
    for (const LayoutEdge& edge : input.edges) {
        if (edge.from >= input.nodes.size() || edge.to >= input.nodes.size() ||
            edge.fromPort >= input.nodes[edge.from].outputPorts ||
            edge.toPort >= input.nodes[edge.to].inputPorts) {
            return Error(Errc::InvalidArgument, "layout edge refers to a missing node or port");
        }
    }
    Layout layout;
    if (input.nodes.empty()) {
        return layout;
    }
    Sections sections = buildSections(input, options);
    QS_TRY(runSections(sections, progress));
    arrangeSections(input, sections, options);
    layout.sectionCount = sections.list.size();
    placeNodes(input, sections, layout);
    routeEdges(input, sections, options, layout);
    computeBounds(layout);
    return layout;
}

std::string toDot(const LayoutInput& input, std::span<const std::string> labels) {
    std::string dot = "digraph quantscope {\n  rankdir=TB; nodesep=0.25; ranksep=0.42;\n"
                      "  node [shape=box, fixedsize=true, fontsize=10];\n"
                      "  edge [arrowhead=none, tailport=s, headport=n];\n";
    char buffer[96];
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        std::snprintf(buffer, sizeof buffer, "  n%zu [width=%.4f, height=%.4f", i,
                      input.nodes[i].size.width / 72.0, input.nodes[i].size.height / 72.0);
        dot += buffer;
        if (i < labels.size()) {
            dot += ", label=\"";
            for (char c : labels[i]) {
                if (c == '"' || c == '\\') {
                    dot += '\\';
                }
                dot += c;
            }
            dot += '"';
        }
        dot += "];\n";
    }
    for (const LayoutEdge& edge : input.edges) {
        std::snprintf(buffer, sizeof buffer, "  n%u -> n%u;\n", edge.from, edge.to);
        dot += buffer;
    }
    dot += "}\n";
    return dot;
}

} // namespace qs::layout
