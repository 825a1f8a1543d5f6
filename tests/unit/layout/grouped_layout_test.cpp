// Grouped layout tests: scope groups with single-child scopes dissolved, artificial sections for
// an unnamed graph, collapsed groups as boxes with ports, expanded groups framing their children,
// edges ending on the anchors of the boxes drawn, the layout repeatable after expand/collapse,
// a real cancel, the time budget and its layered fallback.

#include "core/layout/graph_layout.h"
#include "core/layout/graphviz_layout.h"
#include "core/layout/group_tree.h"
#include "core/layout/grouped_layout.h"
#include "core/layout/layered_layout.h"
#include "core/layout/synthetic_graph.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <string>

namespace qs::layout {
namespace {

constexpr double kTolerance = 1e-6;

/// A chain of ops named `names`, each feeding the next; op i also feeds op i+2 when `skips`.
struct Chain {
    LayoutInput input;
    std::vector<std::vector<std::string>> scopes;
};

Chain makeChain(const std::vector<std::string>& names, bool skips) {
    Chain chain;
    for (const std::string& name : names) {
        chain.input.nodes.push_back({{120, 40}, 2, 1, 0});
        chain.scopes.push_back(scopePath(name));
    }
    for (uint32_t i = 0; i + 1 < names.size(); ++i) {
        chain.input.edges.push_back({i, 0, i + 1, 0});
        if (skips && i + 2 < names.size()) {
            chain.input.edges.push_back({i, 0, i + 2, 1});
        }
    }
    return chain;
}

uint32_t groupNamed(const GroupTree& tree, const std::string& path) {
    for (uint32_t g = 0; g < tree.groups.size(); ++g) {
        if (tree.groups[g].path == path && !tree.groups[g].artificial) {
            return g;
        }
    }
    return kNoGroup;
}

bool near(Point a, Point b) {
    return std::abs(a.x - b.x) < kTolerance && std::abs(a.y - b.y) < kTolerance;
}

bool inside(const Rect& inner, const Rect& outer) {
    return inner.x >= outer.x - kTolerance && inner.y >= outer.y - kTolerance &&
           inner.right() <= outer.right() + kTolerance &&
           inner.bottom() <= outer.bottom() + kTolerance;
}

/// The drawn boxes (visible nodes and collapsed groups) never overlap; every expanded frame
/// holds its children; every drawn edge ends on the anchors of its boxes.
void expectConsistent(const GroupTree& tree, const GroupedLayout& layout) {
    std::vector<Rect> boxes;
    for (size_t i = 0; i < layout.nodes.size(); ++i) {
        if (layout.nodeVisible[i]) {
            boxes.push_back(layout.nodes[i].box);
            const uint32_t g = tree.groupOfNode[i];
            if (g != 0) {
                EXPECT_TRUE(inside(layout.nodes[i].box, layout.groups[g].box)) << "node " << i;
            }
        }
    }
    for (uint32_t g = 1; g < tree.groups.size(); ++g) {
        const PlacedGroup& group = layout.groups[g];
        if (group.visible && !group.expanded) {
            boxes.push_back(group.box);
        }
        if (group.visible && tree.groups[g].parent != 0) {
            EXPECT_TRUE(inside(group.box, layout.groups[tree.groups[g].parent].box)) << g;
        }
    }
    for (size_t i = 0; i < boxes.size(); ++i) {
        for (size_t j = i + 1; j < boxes.size(); ++j) {
            EXPECT_FALSE(boxes[i].overlaps(boxes[j])) << i << " " << j;
        }
    }
    for (const DrawnEdge& edge : layout.edges) {
        ASSERT_GE(edge.bezier.size(), 4U);
        EXPECT_EQ((edge.bezier.size() - 1) % 3, 0U);
        const Point from = edge.from.isGroup
                               ? layout.groups[edge.from.index].outputAnchors.at(edge.fromPort)
                               : layout.nodes[edge.from.index].outputAnchors.at(edge.fromPort);
        const Point to = edge.to.isGroup ? layout.groups[edge.to.index].inputAnchors.at(edge.toPort)
                                         : layout.nodes[edge.to.index].inputAnchors.at(edge.toPort);
        EXPECT_TRUE(near(edge.bezier.front(), from));
        EXPECT_TRUE(near(edge.bezier.back(), to));
    }
}

std::vector<Size> collapsedSizes(const GroupTree& tree) {
    return std::vector<Size>(tree.groups.size(), Size{140, 50});
}

const std::vector<std::string> kResNetLike = {
    "/conv1/Conv",
    "/layer1/layer1.0/conv1/Conv",
    "/layer1/layer1.0/relu/Relu",
    "/layer1/layer1.0/Add",
    "/layer1/layer1.1/conv1/Conv",
    "/layer1/layer1.1/relu/Relu",
    "/layer1/layer1.1/Add",
    "/layer2/layer2.0/conv1/Conv",
    "/layer2/layer2.0/Add",
    "/fc/Gemm",
};

TEST(GroupTreeTest, ScopePathDropsTheOpComponent) {
    EXPECT_EQ(scopePath("/layer1/layer1.0/conv1/Conv"),
              (std::vector<std::string>{"layer1", "layer1.0", "conv1"}));
    EXPECT_TRUE(scopePath("p2o.Conv.12").empty());
    EXPECT_TRUE(scopePath("").empty());
    EXPECT_TRUE(scopePath("/Conv").empty());
}

TEST(GroupTreeTest, ScopesBecomeGroupsAndSingleChildScopesDissolve) {
    const Chain chain = makeChain(kResNetLike, false);
    const GroupTree tree = buildGroupTree(chain.input, chain.scopes);
    const uint32_t layer1 = groupNamed(tree, "/layer1");
    const uint32_t block = groupNamed(tree, "/layer1/layer1.0");
    ASSERT_NE(layer1, kNoGroup);
    ASSERT_NE(block, kNoGroup);
    EXPECT_EQ(tree.groups[block].parent, layer1);
    EXPECT_EQ(tree.groups[layer1].groups.size(), 2U);
    EXPECT_EQ(tree.groups[layer1].nodeCount, 6U);
    // conv1 and relu hold one op each: dissolved, their ops sit in the block.
    EXPECT_EQ(groupNamed(tree, "/layer1/layer1.0/conv1"), kNoGroup);
    EXPECT_EQ(tree.groups[block].nodes, (std::vector<uint32_t>{1, 2, 3}));
    // layer2 holds a single block: the block is handed up to the root.
    EXPECT_EQ(groupNamed(tree, "/layer2"), kNoGroup);
    const uint32_t block2 = groupNamed(tree, "/layer2/layer2.0");
    ASSERT_NE(block2, kNoGroup);
    EXPECT_EQ(tree.groups[block2].parent, 0U);
    // /conv1 and /fc hold one op: in the root.
    EXPECT_EQ(tree.groupOfNode[0], 0U);
    EXPECT_EQ(tree.groupOfNode[9], 0U);
    EXPECT_EQ(tree.groups[0].nodeCount, kResNetLike.size());
}

TEST(GroupTreeTest, UnnamedGraphGetsArtificialSectionsCutAtSingleTensors) {
    std::vector<std::string> names(500, "");
    Chain chain = makeChain(names, true);
    // Every fifth position is a single-tensor cut (the skip edges of the chain cross elsewhere).
    const GroupTree tree = buildGroupTree(chain.input, chain.scopes, {200});
    ASSERT_GE(tree.groups[0].groups.size(), 3U);
    EXPECT_TRUE(tree.groups[0].nodes.empty());
    size_t total = 0;
    for (uint32_t section : tree.groups[0].groups) {
        EXPECT_TRUE(tree.groups[section].artificial);
        EXPECT_LE(tree.groups[section].nodes.size(), 200U);
        total += tree.groups[section].nodes.size();
    }
    EXPECT_EQ(total, 500U);
}

TEST(GroupedLayoutTest, CollapsedGroupsAreBoxesWithPorts) {
    const Chain chain = makeChain(kResNetLike, true);
    const GroupTree tree = buildGroupTree(chain.input, chain.scopes);
    std::vector<bool> expanded(tree.groups.size(), false);
    NullProgress progress;
    auto layout =
        computeGroupedLayout(chain.input, tree, expanded, collapsedSizes(tree), {}, progress);
    ASSERT_TRUE(layout.ok()) << layout.error().toString();
    const uint32_t layer1 = groupNamed(tree, "/layer1");
    EXPECT_TRUE(layout->groups[layer1].visible);
    EXPECT_FALSE(layout->groups[layer1].expanded);
    EXPECT_FALSE(layout->nodeVisible[1]);
    EXPECT_TRUE(layout->nodeVisible[0]);
    // conv1 feeds layer1 twice (chain and skip edge): one tensor, one input port.
    EXPECT_EQ(layout->groups[layer1].inputSources.size(), 1U);
    EXPECT_GE(layout->groups[layer1].outputSources.size(), 1U);
    expectConsistent(tree, *layout);
}

TEST(GroupedLayoutTest, ExpandedGroupsFrameTheirChildrenAndCollapseBackToTheSameLayout) {
    const Chain chain = makeChain(kResNetLike, true);
    const GroupTree tree = buildGroupTree(chain.input, chain.scopes);
    const std::vector<Size> sizes = collapsedSizes(tree);
    NullProgress progress;
    GroupLayoutCache cache;
    std::vector<bool> collapsed(tree.groups.size(), false);
    auto before = computeGroupedLayout(chain.input, tree, collapsed, sizes, {}, progress, &cache);
    ASSERT_TRUE(before.ok());
    auto all =
        computeGroupedLayout(chain.input, tree, expandAll(tree), sizes, {}, progress, &cache);
    ASSERT_TRUE(all.ok()) << all.error().toString();
    for (size_t i = 0; i < chain.input.nodes.size(); ++i) {
        EXPECT_TRUE(all->nodeVisible[i]);
    }
    // Every layout edge is drawn once when everything is open.
    EXPECT_EQ(all->edges.size(), chain.input.edges.size());
    expectConsistent(tree, *all);
    auto again = computeGroupedLayout(chain.input, tree, collapsed, sizes, {}, progress, &cache);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->dotCalls, 0U); // all from the cache
    for (size_t g = 0; g < tree.groups.size(); ++g) {
        EXPECT_TRUE(near({again->groups[g].box.x, again->groups[g].box.y},
                         {before->groups[g].box.x, before->groups[g].box.y}));
    }
}

TEST(GroupedLayoutTest, SkipChainOpensWithBoundedDotCalls) {
    const graph::Graph graph = makeSkipChainGraph(3000);
    GraphLayoutModel model = buildLayoutModel(graph);
    setSizes(model, [](const LayoutItem&) { return Size{120, 40}; });
    const auto scopes = itemScopes(graph, model);
    const GroupTree tree = buildGroupTree(model.input, scopes);
    for (const LayoutGroup& group : tree.groups) {
        EXPECT_LE(group.groups.size() + group.nodes.size(), 200U);
    }
    NullProgress progress;
    auto layout = computeGroupedLayout(model.input, tree, autoExpand(tree), collapsedSizes(tree),
                                       {}, progress);
    ASSERT_TRUE(layout.ok()) << layout.error().toString();
    expectConsistent(tree, *layout);
}

class CancelNow final : public Progress {
public:
    void report(double, std::string_view) override {}

    bool isCancelled() const override { return true; }
};

TEST(GroupedLayoutTest, CancelStopsTheLayout) {
    const Chain chain = makeChain(kResNetLike, true);
    const GroupTree tree = buildGroupTree(chain.input, chain.scopes);
    CancelNow cancel;
    auto layout =
        computeGroupedLayout(chain.input, tree, expandAll(tree), collapsedSizes(tree), {}, cancel);
    ASSERT_FALSE(layout.ok());
    EXPECT_EQ(layout.error().code(), Errc::Cancelled);
}

/// A dense DAG (every node feeds every later one): slow for dot, instant for the fallback.
detail::DotGraph denseGraph(uint32_t count) {
    detail::DotGraph graph;
    for (uint32_t i = 0; i < count; ++i) {
        graph.nodes.push_back({{60, 30}, detail::RankPin::Free});
        for (uint32_t j = 0; j < i; ++j) {
            graph.edges.push_back({j, i});
        }
    }
    return graph;
}

TEST(GroupedLayoutTest, BudgetedDotIsKilledOnCancelAndOnTimeout) {
    const detail::DotGraph graph = denseGraph(150);
    CancelNow cancel;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(detail::runDotBudgeted(graph, 30, cancel).outcome, detail::DotOutcome::Cancelled);
    NullProgress progress;
    EXPECT_EQ(detail::runDotBudgeted(graph, 0.05, progress).outcome, detail::DotOutcome::TimedOut);
    // Generous: both returned long before dot could have finished this graph.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
    const detail::DotGraph small = denseGraph(5);
    const detail::BudgetedDot done = detail::runDotBudgeted(small, 30, progress);
    ASSERT_EQ(done.outcome, detail::DotOutcome::Done);
    EXPECT_EQ(done.result.centers.size(), 5U);
    EXPECT_EQ(done.result.paths.size(), small.edges.size());
}

TEST(GroupedLayoutTest, IdleRefinementGivesFallbackGroupsDotsDrawing) {
    const graph::Graph graph = makeSkipChainGraph(600);
    GraphLayoutModel model = buildLayoutModel(graph);
    setSizes(model, [](const LayoutItem&) { return Size{120, 40}; });
    const GroupTree tree = buildGroupTree(model.input, itemScopes(graph, model));
    const std::vector<bool> expanded = expandAll(tree);
    GroupedLayoutOptions hurried;
    hurried.dotBudgetSeconds = 0.0; // every forked dot call runs out of time
    NullProgress progress;
    GroupLayoutCache cache;
    auto first = computeGroupedLayout(model.input, tree, expanded, collapsedSizes(tree), hurried,
                                      progress, &cache);
    ASSERT_TRUE(first.ok()) << first.error().toString();
    ASSERT_GT(first->fallbacks, 0U);
    EXPECT_EQ(cache.pendingRefinements(), first->fallbacks);

    // A cancel leaves every group pending.
    CancelNow cancel;
    auto cancelled = refineFallbacks(cache, 60, cancel);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.error().code(), Errc::Cancelled);
    EXPECT_EQ(cache.pendingRefinements(), first->fallbacks);

    auto refined = refineFallbacks(cache, 60, progress);
    ASSERT_TRUE(refined.ok()) << refined.error().toString();
    EXPECT_EQ(*refined, first->fallbacks);
    EXPECT_EQ(cache.pendingRefinements(), 0U);
    // The next layout takes the refined groups from the cache: only groups around them, whose
    // children changed size, are laid out again (and fall back again under this budget).
    auto second = computeGroupedLayout(model.input, tree, expanded, collapsedSizes(tree), hurried,
                                       progress, &cache);
    ASSERT_TRUE(second.ok()) << second.error().toString();
    EXPECT_LT(second->fallbacks, first->fallbacks);
    EXPECT_LT(second->dotCalls, first->dotCalls);
    expectConsistent(tree, *second);
}

TEST(GroupedLayoutTest, LayeredFallbackPlacesRanksWithoutOverlaps) {
    const detail::DotGraph graph = denseGraph(40);
    const detail::DotResult result = detail::layeredLayout(graph);
    ASSERT_EQ(result.centers.size(), 40U);
    for (uint32_t i = 1; i < 40; ++i) {
        EXPECT_GT(result.centers[i].y, result.centers[i - 1].y); // a dense DAG is a chain of ranks
    }
    EXPECT_EQ(result.paths.size(), graph.edges.size());
}

} // namespace
} // namespace qs::layout
