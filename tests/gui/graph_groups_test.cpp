// Grouped graph on the offscreen platform: name scopes become collapsed group boxes with their
// op counts and quantizer summary, an unnamed graph gets artificial sections, expanding a group
// keeps it where it was on screen and collapsing it restores the drawing, search and "show
// quantizer" open the groups on the way, constant-only ops are folded into the ops they feed,
// Fit shows the whole graph, and the event loop keeps running (no gap over 200 ms) while a big
// layout runs and a second model opens.

#include "core/graph/graph_builder.h"
#include "core/layout/synthetic_graph.h"
#include "core/onnx/model_io.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_search_bar.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"

#include <QElapsedTimer>
#include <QGraphicsSceneMouseEvent>
#include <QTest>
#include <QTimer>
#include <gtest/gtest.h>

#include <algorithm>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 60000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

/// Shows `document` on `page` and waits for the layout; true when it succeeded.
bool showAndWait(GraphPage& page, GraphDocument& document) {
    bool finished = false;
    bool ok = false;
    const auto connection =
        QObject::connect(&page, &GraphPage::layoutFinished, [&](bool success, const QString&) {
            finished = true;
            ok = success;
        });
    page.showGraph(document);
    const bool done = QTest::qWaitFor([&] { return finished; }, kTimeoutMs);
    QObject::disconnect(connection);
    return done && ok;
}

/// Runs `action` (which starts a relayout) and waits for it.
bool relayoutAndWait(GraphPage& page, const std::function<void()>& action) {
    bool finished = false;
    bool ok = false;
    const auto connection =
        QObject::connect(&page, &GraphPage::layoutFinished, [&](bool success, const QString&) {
            finished = true;
            ok = success;
        });
    action();
    const bool done = QTest::qWaitFor([&] { return finished; }, kTimeoutMs);
    QObject::disconnect(connection);
    return done && ok;
}

uint32_t firstCollapsed(const GraphScene& scene) {
    for (uint32_t g = 1; g < scene.groupTree().groups.size(); ++g) {
        if (scene.groupBox(g) != nullptr) {
            return g;
        }
    }
    return 0;
}

TEST(GraphGroupsTest, ScopesAreCollapsedGroupsThatExpandInPlace) {
    JobRunner jobs;
    GraphPage page(jobs);
    page.resize(1200, 800);
    page.show();
    GraphDocument document(QStringLiteral("chain.onnx"), {layout::makeSkipChainGraph(3000), {}});
    ASSERT_TRUE(showAndWait(page, document));
    GraphScene& scene = *page.scene();
    // 47 stages of 16 blocks, collapsed; single-op scopes (conv1, relu, ...) dissolved.
    EXPECT_LT(scene.nodeItems().size(), 100U);
    // A stage in the middle: the view can scroll to keep it in place (not so at the very top).
    const uint32_t stage = scene.groupTree().groups[0].groups[20];
    NodeItem* box = scene.groupBox(stage);
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->content().name.contains(QStringLiteral("64 op(s)")))
        << box->content().name.toStdString();
    EXPECT_EQ(scene.groupTree().groups[stage].groups.size(), 16U);
    EXPECT_TRUE(scene.groupTree().groups[scene.groupTree().groups[stage].groups[0]].nodes.size() ==
                4U); // a block holds its four ops directly
    // Zoomed in on the box, so the view has room to scroll either way.
    page.view()->zoomBy(8);
    page.view()->centerOn(box);
    const QPointF before = page.view()->mapFromScene(box->scenePos());
    const QPointF boxScene = box->scenePos(); // the item goes with the next layout
    const size_t edgesBefore = scene.edgeItems().size();
    ASSERT_TRUE(relayoutAndWait(page, [&] { page.toggleGroup(stage); }));
    GroupFrameItem* frame = scene.groupFrame(stage);
    ASSERT_NE(frame, nullptr);
    EXPECT_EQ(scene.groupBox(stage), nullptr);
    QTest::qWait(50); // the scroll bars settle
    const QPointF after = page.view()->mapFromScene(frame->scenePos());
    // Within a scroll bar's width: one may appear as the scene grows and shift the viewport.
    EXPECT_NEAR(after.x(), before.x(), 16.0);
    EXPECT_NEAR(after.y(), before.y(), 16.0);
    // Collapsing again gives back the same drawing.
    ASSERT_TRUE(relayoutAndWait(page, [&] { page.toggleGroup(stage); }));
    EXPECT_EQ(scene.edgeItems().size(), edgesBefore);
    ASSERT_NE(scene.groupBox(stage), nullptr);
    EXPECT_EQ(scene.groupBox(stage)->scenePos(), boxScene);
}

TEST(GraphGroupsTest, FallbackGroupsGetDotsDrawingWhenTheUserIsIdle) {
    JobRunner jobs;
    GraphPage page(jobs);
    page.resize(1200, 800);
    page.show();
    layout::GroupedLayoutOptions hurried;
    hurried.dotBudgetSeconds = 0.0; // every forked dot call falls back to the layered layout
    page.setLayoutOptions(hurried);
    // Long enough that nothing refines while the test looks (a loaded machine can take more than
    // a short delay between two statements); shortened below, once the page is to be left alone.
    page.setIdleRefinementDelay(60000);
    GraphDocument document(QStringLiteral("chain.onnx"), {layout::makeSkipChainGraph(400), {}});
    ASSERT_TRUE(showAndWait(page, document));
    ASSERT_TRUE(relayoutAndWait(page, [&] { page.expandAllGroups(true); }));
    const size_t fallbacks = page.lastFallbacks();
    ASSERT_GT(fallbacks, 0U);
    // The first (auto-expanded) layout's fallbacks wait too.
    const size_t pending = page.pendingRefinements();
    ASSERT_GE(pending, fallbacks);

    // Input in the view keeps the refinement from starting (or stops it).
    QTest::mouseMove(page.view()->viewport(), {100, 100});
    EXPECT_EQ(page.pendingRefinements(), pending);
    page.setIdleRefinementDelay(50);
    QTest::mouseMove(page.view()->viewport(), {110, 110}); // restarts the idle wait at 50 ms

    // Left alone, the page refines every fallback (groups re-laid around a refined one fall back
    // again under this budget and are refined in turn) and redraws the graph each time.
    int redraws = 0;
    QObject::connect(&page, &GraphPage::layoutFinished,
                     [&](bool ok, const QString&) { redraws += ok ? 1 : 0; });
    ASSERT_TRUE(QTest::qWaitFor(
        [&] { return page.pendingRefinements() == 0 && !page.isLayingOut() && !jobs.isBusy(); },
        kTimeoutMs));
    EXPECT_GE(redraws, 1);
    EXPECT_LT(page.lastFallbacks(), fallbacks);
}

TEST(GraphGroupsTest, DoubleClickOnAGroupAsksToToggleIt) {
    JobRunner jobs;
    GraphPage page(jobs);
    GraphDocument document(QStringLiteral("chain.onnx"), {layout::makeSkipChainGraph(400), {}});
    ASSERT_TRUE(showAndWait(page, document));
    const uint32_t group = firstCollapsed(*page.scene());
    ASSERT_NE(group, 0U);
    std::optional<uint32_t> asked;
    QObject::connect(page.scene(), &GraphScene::groupToggleRequested,
                     [&](uint32_t g) { asked = g; });
    QGraphicsSceneMouseEvent event(QEvent::GraphicsSceneMouseDoubleClick);
    event.setScenePos(page.scene()->groupBox(group)->sceneBox().center());
    event.setButton(Qt::LeftButton);
    QCoreApplication::sendEvent(page.scene(), &event);
    ASSERT_TRUE(asked.has_value());
    EXPECT_EQ(*asked, group);
}

TEST(GraphGroupsTest, AnUnnamedGraphGetsArtificialSections) {
    graph::GraphBuilder builder;
    graph::ValueId current = builder.input("x", {1, 8});
    for (int i = 0; i < 450; ++i) {
        current = builder.op(i % 2 == 0 ? "Relu" : "Sigmoid", "", {current});
    }
    builder.output(current);
    JobRunner jobs;
    GraphPage page(jobs);
    GraphDocument document(QStringLiteral("flat.onnx"), {builder.take(), {}});
    ASSERT_TRUE(showAndWait(page, document));
    const layout::GroupTree& tree = page.scene()->groupTree();
    ASSERT_GE(tree.groups.size(), 3U);
    size_t sections = 0;
    for (uint32_t g = 1; g < tree.groups.size(); ++g) {
        sections += tree.groups[g].artificial ? 1 : 0;
        EXPECT_LE(tree.groups[g].nodes.size() + tree.groups[g].groups.size(), 200U);
    }
    EXPECT_GE(sections, 3U);
    const NodeItem* box = page.scene()->groupBox(firstCollapsed(*page.scene()));
    ASSERT_NE(box, nullptr);
    EXPECT_TRUE(box->content().title.contains(QStringLiteral("section")));
}

TEST(GraphGroupsTest, SearchOpensTheGroupsOfHiddenMatches) {
    JobRunner jobs;
    GraphPage page(jobs);
    GraphDocument document(QStringLiteral("chain.onnx"), {layout::makeSkipChainGraph(3000), {}});
    ASSERT_TRUE(showAndWait(page, document));
    GraphSearchBar& bar = *page.searchBar();
    bar.activate();
    bar.setQuery(QStringLiteral("/stage7/block3/add/Add"));
    EXPECT_TRUE(bar.matches().empty());
    ASSERT_EQ(bar.hiddenMatches().size(), 1U);
    EXPECT_TRUE(bar.status().contains(QStringLiteral("collapsed"))) << bar.status().toStdString();
    ASSERT_TRUE(relayoutAndWait(page, [&] { bar.findNext(); }));
    ASSERT_EQ(bar.matches().size(), 1U);
    EXPECT_EQ(bar.matches().front()->content().fullName, QStringLiteral("/stage7/block3/add/Add"));
    EXPECT_TRUE(bar.hiddenMatches().empty());
}

TEST(GraphGroupsTest, ConstantOnlyOpsAreFoldedIntoTheirConsumer) {
    graph::GraphBuilder builder;
    const graph::ValueId x = builder.input("x", {1, 4, 8, 8});
    const std::vector<float> values(64, 0.5F);
    const graph::ValueId raw = builder.weight("conv.weight", {4, 4, 2, 2}, values);
    const graph::ValueId identity = builder.op("Identity", "/conv/Identity", {raw});
    const graph::ValueId cast = builder.op("Cast", "/conv/Cast", {identity}, {{"to", int64_t{1}}});
    const graph::ValueId y = builder.op("Conv", "/conv/Conv", {x, cast});
    builder.output(builder.op("Relu", "/relu/Relu", {y}));
    GraphDocument document(QStringLiteral("folded.onnx"), {builder.take(), {}});
    GraphScene scene;
    const layout::GraphLayoutModel model = scene.prepareLayout(document.graph());
    EXPECT_EQ(model.foldedCount, 2U);
    EXPECT_EQ(model.items.size(), 4U); // input, Conv, Relu, output
    NullProgress progress;
    scene.populate(document.graph(), model,
                   layout::computeLayout(model.input, {}, progress).value());
    const std::optional<graph::NodeId> conv = document.graph().findNode("/conv/Conv");
    ASSERT_TRUE(conv.has_value());
    ASSERT_TRUE(scene.boxIndex(*conv).has_value());
    NodeItem* box = scene.nodeItems()[*scene.boxIndex(*conv)];
    bool weightPort = false;
    for (QGraphicsItem* child : box->childItems()) {
        if (child->type() == PortItem::Type) {
            const auto* port = static_cast<PortItem*>(child);
            weightPort = weightPort ||
                         (port->side() == PortSide::Input && port->port() == 1 && port->isWeight());
        }
    }
    EXPECT_TRUE(weightPort);
    EXPECT_TRUE(box->content().toolTip.contains(QStringLiteral("folded Cast")))
        << box->content().toolTip.toStdString();
    EXPECT_FALSE(scene.boxIndex(*document.graph().findNode("/conv/Identity")).has_value());
    EXPECT_EQ(scene.edgeItems().size(), 3U);
}

TEST(GraphGroupsTest, FitShowsTheWholeGraphAndShiftSpaceTheSelection) {
    JobRunner jobs;
    GraphPage page(jobs);
    page.resize(900, 700);
    page.show();
    GraphDocument document(kDemoModel, {onnx::importModel(kDemoModel.toStdString()).value(), {}});
    ASSERT_TRUE(showAndWait(page, document));
    GraphView& view = *page.view();
    view.zoomBy(3);
    view.fitGraph();
    const QRect shown = view.mapFromScene(view.sceneRect()).boundingRect();
    EXPECT_TRUE(view.viewport()->rect().adjusted(-2, -2, 2, 2).contains(shown))
        << shown.width() << "x" << shown.height();
    NodeItem* node = page.scene()->nodeItems()[5];
    node->setSelected(true);
    QTest::keyClick(&view, Qt::Key_Space, Qt::ShiftModifier);
    EXPECT_GT(view.zoom(), 1.0); // one box fills much of the view
    const QRect box = view.mapFromScene(node->sceneBox()).boundingRect();
    EXPECT_TRUE(view.viewport()->rect().contains(box));
}

/// A chain of `ops` ops in scopes of 4 within stages of 64, every name of its own length: no two
/// groups lay out alike, so nothing comes from the cache.
graph::Graph variedChain(int ops) {
    graph::GraphBuilder builder;
    graph::ValueId current = builder.input("x", {1, 8});
    for (int i = 0; i < ops; ++i) {
        const std::string name = "/stage" + std::to_string(i / 64) + "/block" +
                                 std::to_string(i / 4) + "/op" + std::to_string(i) +
                                 std::string(static_cast<size_t>(i % 41), 'x') + "/Relu";
        current = builder.op("Relu", name, {current});
    }
    builder.output(current);
    return builder.take();
}

/// The largest gap between two ticks of a 10 ms timer while `running` holds.
qint64 longestGap(const std::function<bool()>& running, int timeoutMs) {
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0;
    qint64 longest = 0;
    QTimer timer;
    timer.setInterval(10);
    QObject::connect(&timer, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        longest = std::max(longest, now - last);
        last = now;
    });
    timer.start();
    EXPECT_TRUE(QTest::qWaitFor([&] { return !running(); }, timeoutMs));
    return longest;
}

TEST(GraphGroupsTest, TheEventLoopNeverStallsWhileABigLayoutRunsAndASecondModelOpens) {
    JobRunner jobs;
    GraphPage page(jobs);
    page.resize(1000, 700);
    page.show();
    GraphDocument big(QStringLiteral("varied.onnx"), {variedChain(3000), {}});
    ASSERT_TRUE(showAndWait(page, big));
    GraphDocument demo(kDemoModel, {onnx::importModel(kDemoModel.toStdString()).value(), {}});
    int finished = 0;
    bool lastOk = false;
    QObject::connect(&page, &GraphPage::layoutFinished, [&](bool ok, const QString&) {
        ++finished;
        lastOk = ok;
    });
    page.expandAllGroups(true); // thousands of dot calls in the background
    // The open comes on the event loop's next turn, while those calls run: a fixed delay (100 ms
    // once) outlasted the whole layout on a fast machine, which then applied it.
    QTimer::singleShot(0, &page, [&] {
        EXPECT_TRUE(page.isLayingOut()); // still running: the open below cancels it
        page.showGraph(demo);
    });
    const qint64 gap =
        longestGap([&] { return page.document() != &demo || page.isLayingOut(); }, kTimeoutMs);
    EXPECT_EQ(finished, 1); // the big layout was cancelled, not applied
    EXPECT_TRUE(lastOk);
    EXPECT_EQ(page.document(), &demo);
    EXPECT_LT(gap, 200) << "the GUI thread stalled for " << gap << " ms";
}

} // namespace
} // namespace qs::ui
