// Layout: turns a DAG of boxes with numbered ports into positions — node boxes, one anchor per
// input port and per output, and every edge as cubic Bézier control points — through Graphviz
// `dot`. Big graphs are cut into topological sections of at most `maxSectionNodes` nodes, each
// laid out by dot on its own and stacked top to bottom (a very tall stack, such as a long chain,
// wraps into columns); edges that cross sections are routed here through proxy points at the
// section borders, and through a lane in the gap between columns when they do not simply go on
// to the next section below. Node sizes come from the caller (font metrics in the GUI), so this
// stays Qt-free.
//
// Coordinates are scene points with y growing downwards. Input ports sit on the top edge of a
// box, outputs on the bottom edge. Those anchors are also where quantizer badges attach: the
// pre-hook insertion point of input port p of node n is `nodes[n].inputAnchors[p]`, the post-hook
// point of output k is `nodes[n].outputAnchors[k]`.
#pragma once

#include "core/support/progress.h"
#include "core/support/result.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace qs::layout {

struct Point {
    double x = 0;
    double y = 0;

    bool operator==(const Point&) const = default;
};

struct Size {
    double width = 0;
    double height = 0;
};

/// An axis-aligned box: top-left corner and size.
struct Rect {
    double x = 0;
    double y = 0;
    double width = 0;
    double height = 0;

    double right() const { return x + width; }

    double bottom() const { return y + height; }

    Point center() const { return {x + width / 2, y + height / 2}; }

    /// True when the interiors overlap (touching edges do not count).
    bool overlaps(const Rect& other) const {
        return x < other.right() && other.x < right() && y < other.bottom() && other.y < bottom();
    }
};

/// A box to place: its size and how many input ports and outputs it has.
struct LayoutNode {
    Size size;
    uint32_t inputPorts = 0;
    uint32_t outputPorts = 0;
    /// Name scope the box belongs to (0: none); sections are preferably not cut inside one.
    uint32_t scope = 0;
};

/// A connection from output `fromPort` of node `from` to input port `toPort` of node `to`.
struct LayoutEdge {
    uint32_t from = 0;
    uint32_t fromPort = 0;
    uint32_t to = 0;
    uint32_t toPort = 0;
};

/// What to lay out. Node and edge indices are the ones used in the result.
struct LayoutInput {
    std::vector<LayoutNode> nodes;
    std::vector<LayoutEdge> edges;
};

struct LayoutOptions {
    /// At most this many nodes go to one dot call; bigger graphs are cut into sections.
    size_t maxSectionNodes = 400;
    double nodeSeparation = 18; ///< horizontal gap between boxes, points
    double rankSeparation = 30; ///< vertical gap between ranks, points
    double sectionGap = 60;     ///< vertical gap between stacked sections, points
    double laneSpacing = 8;     ///< distance between the lanes of section-skipping edges
    /// Sections stacked this many times taller than the widest one are wrapped into columns,
    /// left to right, like text; 0 keeps one column.
    double wrapRatio = 8;
};

/// A placed node: its box and one anchor per input port and per output.
struct PlacedNode {
    Rect box;
    std::vector<Point> inputAnchors;  ///< on the top edge, in port order
    std::vector<Point> outputAnchors; ///< on the bottom edge, in output order
    uint32_t section = 0;
};

/// A routed edge: 3k+1 control points of a piecewise cubic Bézier curve that starts at the
/// output anchor of its tail and ends at the input anchor of its head.
struct PlacedEdge {
    std::vector<Point> bezier;
};

/// The result; `nodes` and `edges` are parallel to the input's.
struct Layout {
    std::vector<PlacedNode> nodes;
    std::vector<PlacedEdge> edges;
    Rect bounds;
    size_t sectionCount = 0;
};

/// Lays out `input` with dot, section by section. Reports progress per section and checks for a
/// cancel between sections (one dot call cannot be interrupted; sections keep each call short);
/// a cancel returns Errc::Cancelled. Thread-safe: Graphviz calls are serialized internally.
Result<Layout> computeLayout(const LayoutInput& input, const LayoutOptions& options,
                             Progress& progress);

/// The order in which nodes are cut into sections: topological, stable by index; nodes on a
/// cycle follow in index order.
std::vector<uint32_t> sectionOrder(const LayoutInput& input);

/// `input` as one DOT graph for plain `dot` (the same boxes, fixed sizes, ports as compass
/// points); `labels`, when not empty, gives one label per node.
std::string toDot(const LayoutInput& input, std::span<const std::string> labels = {});

} // namespace qs::layout
