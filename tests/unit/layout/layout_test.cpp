// Layout tests: every node placed without overlaps, every port anchored on its box, every edge
// drawn from its tail's output anchor to its head's input anchor — on the demo model and on a
// 3,000-node skip chain cut into sections — plus cancel, bad input and DOT text.

#include "core/layout/graph_layout.h"
#include "core/layout/layout.h"
#include "core/layout/synthetic_graph.h"
#include "core/onnx/model_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace qs::layout {
namespace {

constexpr double kTolerance = 1e-6;

GraphLayoutModel measuredModel(const graph::Graph& graph) {
    GraphLayoutModel model = buildLayoutModel(graph);
    setSizes(model, [](const LayoutItem& item) {
        return item.kind == ItemKind::Op ? Size{150, 54} : Size{110, 30};
    });
    return model;
}

bool near(Point a, Point b) {
    return std::abs(a.x - b.x) < kTolerance && std::abs(a.y - b.y) < kTolerance;
}

/// Sweep over boxes sorted by top edge: no two interiors overlap.
void expectNoOverlaps(const Layout& layout) {
    std::vector<Rect> boxes;
    for (const PlacedNode& node : layout.nodes) {
        boxes.push_back(node.box);
    }
    std::sort(boxes.begin(), boxes.end(), [](const Rect& a, const Rect& b) { return a.y < b.y; });
    size_t overlaps = 0;
    for (size_t i = 0; i < boxes.size(); ++i) {
        for (size_t j = i + 1; j < boxes.size() && boxes[j].y < boxes[i].bottom(); ++j) {
            overlaps += boxes[i].overlaps(boxes[j]) ? 1 : 0;
        }
    }
    EXPECT_EQ(overlaps, 0U);
}

void expectAnchorsAndEdges(const LayoutInput& input, const Layout& layout) {
    ASSERT_EQ(layout.nodes.size(), input.nodes.size());
    ASSERT_EQ(layout.edges.size(), input.edges.size());
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        const PlacedNode& node = layout.nodes[i];
        ASSERT_EQ(node.inputAnchors.size(), input.nodes[i].inputPorts);
        ASSERT_EQ(node.outputAnchors.size(), input.nodes[i].outputPorts);
        EXPECT_NEAR(node.box.width, input.nodes[i].size.width, kTolerance);
        for (const Point& p : node.inputAnchors) {
            EXPECT_NEAR(p.y, node.box.y, kTolerance);
            EXPECT_TRUE(p.x > node.box.x && p.x < node.box.right());
        }
        for (const Point& p : node.outputAnchors) {
            EXPECT_NEAR(p.y, node.box.bottom(), kTolerance);
        }
    }
    for (size_t e = 0; e < input.edges.size(); ++e) {
        const LayoutEdge& edge = input.edges[e];
        const std::vector<Point>& path = layout.edges[e].bezier;
        ASSERT_GE(path.size(), 4U) << "edge " << e;
        EXPECT_EQ((path.size() - 1) % 3, 0U) << "edge " << e;
        EXPECT_TRUE(near(path.front(), layout.nodes[edge.from].outputAnchors[edge.fromPort]))
            << "edge " << e;
        EXPECT_TRUE(near(path.back(), layout.nodes[edge.to].inputAnchors[edge.toPort]))
            << "edge " << e;
        for (const Point& p : path) {
            EXPECT_TRUE(std::isfinite(p.x) && std::isfinite(p.y));
        }
    }
}

class CancelAfter final : public Progress {
public:
    explicit CancelAfter(int reports)
        : m_left(reports) {}

    void report(double, std::string_view) override { --m_left; }

    bool isCancelled() const override { return m_left <= 0; }

private:
    int m_left;
};

TEST(LayoutTest, DemoModelHasAnchorsEdgesAndNoOverlaps) {
    auto graph = onnx::importModel(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");
    ASSERT_TRUE(graph.ok()) << graph.error().toString();
    const GraphLayoutModel model = measuredModel(*graph);
    EXPECT_EQ(model.items.size(), graph->numNodes() - model.foldedCount +
                                      graph->runtimeInputs().size() + graph->outputs().size());
    NullProgress progress;
    auto layout = computeLayout(model.input, {}, progress);
    ASSERT_TRUE(layout.ok()) << layout.error().toString();
    EXPECT_EQ(layout->sectionCount, 1U);
    expectNoOverlaps(*layout);
    expectAnchorsAndEdges(model.input, *layout);
}

TEST(LayoutTest, SkipChainInSectionsHasAnchorsEdgesAndNoOverlaps) {
    const graph::Graph graph = makeSkipChainGraph(3000);
    const GraphLayoutModel model = measuredModel(graph);
    ASSERT_EQ(model.items.size(), 3002U);
    LayoutOptions options;
    options.maxSectionNodes = 400;
    NullProgress progress;
    auto layout = computeLayout(model.input, options, progress);
    ASSERT_TRUE(layout.ok()) << layout.error().toString();
    EXPECT_GE(layout->sectionCount, 8U);
    expectNoOverlaps(*layout);
    expectAnchorsAndEdges(model.input, *layout);
    // The tall chain wraps into columns; sections never overlap each other.
    std::vector<Rect> sections(layout->sectionCount);
    std::vector<bool> seen(layout->sectionCount, false);
    for (const PlacedNode& node : layout->nodes) {
        Rect& r = sections[node.section];
        if (!seen[node.section]) {
            r = node.box;
            seen[node.section] = true;
            continue;
        }
        const double right = std::max(r.right(), node.box.right());
        const double bottom = std::max(r.bottom(), node.box.bottom());
        r.x = std::min(r.x, node.box.x);
        r.y = std::min(r.y, node.box.y);
        r.width = right - r.x;
        r.height = bottom - r.y;
    }
    for (size_t i = 0; i < sections.size(); ++i) {
        for (size_t j = i + 1; j < sections.size(); ++j) {
            EXPECT_FALSE(sections[i].overlaps(sections[j])) << i << " and " << j;
        }
    }
    EXPECT_GT(layout->bounds.width, layout->bounds.height / 20);
}

TEST(LayoutTest, WithoutWrappingSectionsStackTopToBottom) {
    const GraphLayoutModel model = measuredModel(makeSkipChainGraph(600));
    LayoutOptions options;
    options.maxSectionNodes = 200;
    options.wrapRatio = 0;
    NullProgress progress;
    auto layout = computeLayout(model.input, options, progress);
    ASSERT_TRUE(layout.ok());
    EXPECT_GE(layout->sectionCount, 3U);
    expectNoOverlaps(*layout);
    expectAnchorsAndEdges(model.input, *layout);
    for (const LayoutEdge& edge : model.input.edges) {
        const PlacedNode& tail = layout->nodes[edge.from];
        const PlacedNode& head = layout->nodes[edge.to];
        if (tail.section < head.section) {
            EXPECT_GT(head.box.y, tail.box.bottom());
        }
    }
}

TEST(LayoutTest, SectionsAreCutInTopologicalOrder) {
    const GraphLayoutModel model = measuredModel(makeSkipChainGraph(40));
    const std::vector<uint32_t> order = sectionOrder(model.input);
    std::vector<size_t> position(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        position[order[i]] = i;
    }
    for (const LayoutEdge& edge : model.input.edges) {
        EXPECT_LT(position[edge.from], position[edge.to]);
    }
}

TEST(LayoutTest, BlockScopesComeFromNodeNames) {
    EXPECT_EQ(blockScope("/layer2/1/conv1/Conv"), "/layer2/1");
    EXPECT_EQ(blockScope("/fc/Gemm"), "/fc");
    EXPECT_EQ(blockScope("Identity_46"), "");
    EXPECT_EQ(blockScope("/Add"), "");
}

TEST(LayoutTest, SectionsAreCutBetweenBlocks) {
    // Blocks of four ops share a scope ("/stage0/block3"); with room to choose, no cut splits one.
    const graph::Graph graph = makeSkipChainGraph(400);
    const GraphLayoutModel model = measuredModel(graph);
    LayoutOptions options;
    options.maxSectionNodes = 50;
    NullProgress progress;
    auto layout = computeLayout(model.input, options, progress);
    ASSERT_TRUE(layout.ok());
    EXPECT_GE(layout->sectionCount, 8U);
    for (size_t i = 0; i < model.items.size(); ++i) {
        for (size_t j = i + 1; j < model.items.size(); ++j) {
            if (model.input.nodes[i].scope != 0 &&
                model.input.nodes[i].scope == model.input.nodes[j].scope) {
                EXPECT_EQ(layout->nodes[i].section, layout->nodes[j].section)
                    << itemLabel(graph, model.items[i]) << " vs "
                    << itemLabel(graph, model.items[j]);
            }
        }
    }
}

TEST(LayoutTest, CancelStopsBetweenSections) {
    const GraphLayoutModel model = measuredModel(makeSkipChainGraph(400));
    LayoutOptions options;
    options.maxSectionNodes = 50;
    CancelAfter progress(2);
    auto layout = computeLayout(model.input, options, progress);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().code(), Errc::Cancelled);
}

TEST(LayoutTest, RejectsEdgesToMissingPorts) {
    LayoutInput input;
    input.nodes = {{{10, 10}, 0, 1}, {{10, 10}, 1, 0}};
    input.edges = {{0, 0, 1, 3}};
    NullProgress progress;
    auto layout = computeLayout(input, {}, progress);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().code(), Errc::InvalidArgument);
}

TEST(LayoutTest, EmptyInputGivesEmptyLayout) {
    NullProgress progress;
    auto layout = computeLayout({}, {}, progress);
    ASSERT_TRUE(layout.ok());
    EXPECT_TRUE(layout->nodes.empty());
}

TEST(LayoutTest, DotTextListsNodesAndEdgesWithEscapedLabels) {
    LayoutInput input;
    input.nodes = {{{72, 36}, 0, 1}, {{144, 36}, 1, 0}};
    input.edges = {{0, 0, 1, 0}};
    const std::vector<std::string> labels{"Conv \"a\"", "Relu b"};
    const std::string dot = toDot(input, labels);
    EXPECT_NE(dot.find("n0 [width=1.0000, height=0.5000, label=\"Conv \\\"a\\\"\"]"),
              std::string::npos)
        << dot;
    EXPECT_NE(dot.find("n1 [width=2.0000"), std::string::npos);
    EXPECT_NE(dot.find("n0 -> n1;"), std::string::npos);
}

} // namespace
} // namespace qs::layout
