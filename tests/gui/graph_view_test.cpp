// Graph scene and view on the offscreen platform: one item per box, port and edge of the demo
// model; port items sit on the layout's anchors (where badges will go); selection highlights
// inputs and outputs; search finds and centres nodes; the main window shows the graph with the
// info panel in a dock; the theme persists; exported SVG/PNG/PDF/DOT are valid and deterministic.

#include "core/layout/layout.h"
#include "core/layout/synthetic_graph.h"
#include "core/onnx/model_io.h"
#include "ui/actions.h"
#include "ui/bitwidth_chart.h"
#include "ui/graph_document.h"
#include "ui/graph_export.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_search_bar.h"
#include "ui/graph_view.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/minimap.h"
#include "ui/model_info_panel.h"
#include "ui/quantizer_panel.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAction>
#include <QChart>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QSvgRenderer>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 30000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

graph::Graph demoGraph() {
    auto graph = onnx::importModel(kDemoModel.toStdString());
    EXPECT_TRUE(graph.ok());
    return std::move(graph).value();
}

/// Ports a scene should draw: every non-empty op input and every op output, plus one per graph
/// input and output box.
size_t expectedPorts(const graph::Graph& graph) {
    size_t ports = graph.runtimeInputs().size() + graph.outputs().size();
    for (graph::NodeId id : graph.nodeIds()) {
        for (graph::ValueId input : graph.node(id).inputs) {
            ports += input.valid() ? 1 : 0;
        }
        ports += graph.node(id).outputs.size();
    }
    return ports;
}

class GraphSceneTest : public ::testing::Test {
protected:
    GraphSceneTest()
        : m_graph(demoGraph())
        , m_model(m_scene.prepareLayout(m_graph)) {
        NullProgress progress;
        auto placed = layout::computeLayout(m_model.input, {}, progress);
        EXPECT_TRUE(placed.ok());
        m_scene.populate(m_graph, m_model, *placed);
    }

    GraphScene m_scene;
    graph::Graph m_graph;
    layout::GraphLayoutModel m_model;
};

TEST_F(GraphSceneTest, OneItemPerBoxPortAndEdge) {
    const size_t boxes =
        m_graph.numNodes() + m_graph.runtimeInputs().size() + m_graph.outputs().size();
    EXPECT_EQ(m_graph.numNodes(), 42U);
    EXPECT_EQ(m_scene.nodeItems().size(), boxes);
    EXPECT_EQ(m_scene.portCount(), expectedPorts(m_graph));
    EXPECT_EQ(m_scene.edgeItems().size(), m_model.input.edges.size());
    size_t ports = 0;
    for (QGraphicsItem* item : m_scene.items()) {
        ports += item->type() == PortItem::Type ? 1 : 0;
    }
    EXPECT_EQ(ports, expectedPorts(m_graph));
    EXPECT_EQ(static_cast<size_t>(m_scene.items().size()),
              boxes + expectedPorts(m_graph) + m_model.input.edges.size());
}

TEST_F(GraphSceneTest, PortItemsSitOnTheirAnchors) {
    for (NodeItem* node : m_scene.nodeItems()) {
        for (QGraphicsItem* child : node->childItems()) {
            const auto* port = static_cast<PortItem*>(child);
            const QPointF anchor =
                m_scene.portAnchor(node->layoutIndex(), port->side(), port->port());
            EXPECT_NEAR(port->scenePos().x(), anchor.x(), 1e-6);
            EXPECT_NEAR(port->scenePos().y(), anchor.y(), 1e-6);
        }
    }
    const std::optional<graph::NodeId> conv = m_graph.findNode("/stem/Conv");
    ASSERT_TRUE(conv.has_value());
    const std::optional<uint32_t> box = m_scene.boxIndex(*conv);
    ASSERT_TRUE(box.has_value());
    EXPECT_EQ(m_scene.nodeItems()[*box]->node(), *conv);
    // The weight port of the Conv (input 1) is marked as such.
    bool weightSeen = false;
    for (QGraphicsItem* child : m_scene.nodeItems()[*box]->childItems()) {
        const auto* port = static_cast<PortItem*>(child);
        weightSeen |= port->side() == PortSide::Input && port->port() == 1 && port->isWeight();
    }
    EXPECT_TRUE(weightSeen);
}

TEST_F(GraphSceneTest, EdgesCarryShapeTooltipsAndEndOnPorts) {
    for (EdgeItem* edge : m_scene.edgeItems()) {
        EXPECT_TRUE(edge->toolTip().contains(QStringLiteral("·"))) << edge->toolTip().toStdString();
        EXPECT_TRUE(edge->tail()
                        ->sceneBox()
                        .adjusted(-1, -1, 1, 1)
                        .contains(edge->path().pointAtPercent(0)));
        EXPECT_TRUE(edge->head()
                        ->sceneBox()
                        .adjusted(-1, -1, 1, 1)
                        .contains(edge->path().pointAtPercent(1)));
    }
}

TEST_F(GraphSceneTest, SelectionHighlightsInputsAndOutputs) {
    const std::optional<graph::NodeId> relu = m_graph.findNode("/block1/dw/Clip");
    ASSERT_TRUE(relu.has_value());
    NodeItem* node = m_scene.nodeItems()[*m_scene.boxIndex(*relu)];
    node->setSelected(true);
    ASSERT_FALSE(node->inEdges().empty());
    ASSERT_FALSE(node->outEdges().empty());
    EXPECT_EQ(node->inEdges().front()->highlight(), Highlight::Input);
    EXPECT_EQ(node->inEdges().front()->tail()->highlight(), Highlight::Input);
    EXPECT_EQ(node->outEdges().front()->highlight(), Highlight::Output);
    EXPECT_EQ(node->outEdges().front()->head()->highlight(), Highlight::Output);
    m_scene.clearSelection();
    EXPECT_EQ(node->inEdges().front()->highlight(), Highlight::None);
}

TEST_F(GraphSceneTest, FindMatchesNamesOpTypesAndRegexes) {
    EXPECT_EQ(m_scene.find(QStringLiteral("gemm"), false).size(), 1U);
    EXPECT_EQ(m_scene.find(QStringLiteral("Conv"), false).size(), 13U);
    EXPECT_EQ(m_scene.find(QStringLiteral("^/block[12]/.*/Conv$"), true).size(), 5U);
    EXPECT_EQ(m_scene.find(QStringLiteral("^/block[12]/"), true).size(),
              m_scene.find(QStringLiteral("/block1/"), false).size() +
                  m_scene.find(QStringLiteral("/block2/"), false).size());
    EXPECT_TRUE(m_scene.find(QStringLiteral("(unclosed"), true).empty());
    EXPECT_TRUE(m_scene.find(QString(), false).empty());
}

TEST_F(GraphSceneTest, SearchBarCentresAndSelectsMatches) {
    GraphView view(&m_scene);
    GraphSearchBar bar(view);
    view.resize(800, 600);
    view.show();
    view.sceneChanged();
    view.fitGraph();
    bar.setQuery(QStringLiteral("/block2/"));
    ASSERT_GE(bar.matches().size(), 3U);
    EXPECT_EQ(bar.current(), 0);
    EXPECT_EQ(bar.status(), QStringLiteral("1 of %1").arg(bar.matches().size()));
    bar.findNext();
    NodeItem* second = bar.matches()[1];
    EXPECT_TRUE(second->isSelected());
    EXPECT_TRUE(second->isSearchMatch());
    // Centred vertically; horizontally the narrow graph may fit the view, so it need only show.
    const QPointF centre = view.mapToScene(view.viewport()->rect().center());
    EXPECT_NEAR(centre.y(), second->sceneBox().center().y(), 3.0);
    const QRectF visible = view.mapToScene(view.viewport()->rect()).boundingRect();
    EXPECT_TRUE(visible.contains(second->sceneBox()));
    EXPECT_GE(view.zoom(), 0.79);
    bar.findPrevious();
    bar.findPrevious();
    EXPECT_EQ(bar.current(), static_cast<int>(bar.matches().size()) - 1);
    bar.setQuery(QStringLiteral("(bad"), true);
    EXPECT_TRUE(bar.matches().empty());
    EXPECT_EQ(bar.status(), QStringLiteral("Invalid pattern"));
    bar.deactivate();
    EXPECT_FALSE(second->isSearchMatch());
}

TEST_F(GraphSceneTest, ZoomFitAndMinimap) {
    GraphView view(&m_scene);
    view.resize(900, 700);
    view.show();
    view.sceneChanged();
    view.fitGraph();
    EXPECT_TRUE(view.minimap()->isVisible());
    const double fitted = view.zoom();
    QTest::keyClick(view.viewport(), Qt::Key_Plus);
    view.zoomBy(1.25);
    EXPECT_NEAR(view.zoom(), fitted * 1.25 * 1.25, 1e-6);
    QTest::keyClick(&view, Qt::Key_Minus);
    EXPECT_NEAR(view.zoom(), fitted * 1.25, 1e-6);
    QTest::keyClick(&view, Qt::Key_Space);
    EXPECT_NEAR(view.zoom(), fitted, 1e-6);
    m_scene.nodeItems().front()->setSelected(true);
    QTest::keyClick(&view, Qt::Key_Escape);
    EXPECT_TRUE(m_scene.selectedItems().isEmpty());
    EXPECT_FALSE(view.minimap()->viewportRect().isEmpty());
}

TEST_F(GraphSceneTest, ExportsAreValidAndDeterministic) {
    QTemporaryDir dir;
    const auto bytesOf = [](const QString& path) {
        QFile file(path);
        EXPECT_TRUE(file.open(QIODevice::ReadOnly)) << path.toStdString();
        return file.readAll();
    };
    for (const QString& suffix :
         {QStringLiteral("svg"), QStringLiteral("png"), QStringLiteral("pdf")}) {
        const QString first = dir.filePath(QStringLiteral("a.") + suffix);
        const QString second = dir.filePath(QStringLiteral("b.") + suffix);
        const ImageFormat format = *imageFormatForPath(first);
        ASSERT_TRUE(writeSceneImage(m_scene, first, format).ok());
        ASSERT_TRUE(writeSceneImage(m_scene, second, format).ok());
        EXPECT_EQ(bytesOf(first), bytesOf(second)) << suffix.toStdString();
    }
    EXPECT_TRUE(QSvgRenderer(dir.filePath(QStringLiteral("a.svg"))).isValid());
    const QImage png(dir.filePath(QStringLiteral("a.png")));
    ASSERT_FALSE(png.isNull());
    EXPECT_GT(png.width(), 100);
    EXPECT_TRUE(bytesOf(dir.filePath(QStringLiteral("a.pdf"))).startsWith("%PDF"));
    const QString dot = dir.filePath(QStringLiteral("g.dot"));
    ASSERT_TRUE(writeDot(m_graph, m_model, dot).ok());
    EXPECT_TRUE(bytesOf(dot).contains("label=\"Gemm /fc/Gemm\""));
    EXPECT_FALSE(imageFormatForPath(QStringLiteral("graph.jpeg")).has_value());
}

TEST(RenderGraphFileTest, SvgHasOneGroupOfTextPerNode) {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("demo.svg"));
    NullProgress progress;
    const graph::Graph graph = demoGraph();
    ASSERT_TRUE(renderGraphFile(graph, path, GraphTheme::light(), progress).ok());
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    EXPECT_TRUE(svg.contains("/fc/Gemm"));
    EXPECT_TRUE(svg.contains("GlobalAveragePool"));
    const auto rejected = renderGraphFile(graph, dir.filePath(QStringLiteral("x.bmp")),
                                          GraphTheme::light(), progress);
    ASSERT_FALSE(rejected.ok());
    EXPECT_EQ(rejected.error().code(), Errc::InvalidArgument);
}

TEST(GraphPageTest, LayoutRunsAsAJobThatCanBeCancelled) {
    JobRunner jobs;
    GraphPage page(jobs);
    LoadedModel big{layout::makeSkipChainGraph(3000), {}};
    GraphDocument document(QStringLiteral("chain.onnx"), std::move(big));
    bool finished = false;
    bool ok = true;
    QString why;
    QObject::connect(&page, &GraphPage::layoutFinished, [&](bool success, const QString& message) {
        finished = true;
        ok = success;
        why = message;
    });
    page.showGraph(document);
    EXPECT_TRUE(page.isLayingOut());
    EXPECT_TRUE(jobs.isBusy());
    jobs.cancelAll();
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished; }, kTimeoutMs));
    EXPECT_FALSE(ok);
    EXPECT_TRUE(why.contains(QStringLiteral("cancel"))) << why.toStdString();
    EXPECT_TRUE(page.scene()->nodeItems().empty());

    finished = false;
    page.showGraph(document);
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished; }, kTimeoutMs));
    EXPECT_TRUE(ok);
    // 3,000 ops in 47 collapsed stages (see graph_groups_test.cpp), inputs and outputs.
    EXPECT_EQ(page.scene()->nodeItems().size(), 49U);
    EXPECT_EQ(page.scene()->edgeItems().size(), 48U);
}

TEST(GraphPageTest, ANewerGraphWinsOverALayoutStillRunning) {
    JobRunner jobs;
    GraphPage page(jobs);
    GraphDocument big(QStringLiteral("chain.onnx"), {layout::makeSkipChainGraph(2000), {}});
    GraphDocument demo(kDemoModel, {demoGraph(), {}});
    int finished = 0;
    QObject::connect(&page, &GraphPage::layoutFinished, [&](bool, const QString&) { ++finished; });
    page.showGraph(big);
    page.showGraph(demo);
    ASSERT_TRUE(QTest::qWaitFor([&] { return !jobs.isBusy(); }, kTimeoutMs));
    EXPECT_EQ(finished, 1);
    EXPECT_EQ(page.scene()->nodeItems().size(), 44U);
}

class MainWindowGraphTest : public ::testing::Test {
protected:
    MainWindowGraphTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings) {}

    QTemporaryDir m_dir;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(MainWindowGraphTest, OpeningAModelShowsTheGraphAndTheInfoDock) {
    m_window.resize(1200, 800);
    m_window.show();
    EXPECT_FALSE(m_window.actions().find()->isEnabled());
    m_window.openModel(kDemoModel);
    ASSERT_TRUE(QTest::qWaitFor(
        [this] {
            return !m_window.session().isOpening() && m_window.session().document() &&
                   !m_window.graphPage().isLayingOut();
        },
        kTimeoutMs));
    EXPECT_FALSE(m_window.isShowingWelcome());
    EXPECT_TRUE(m_window.graphPage().isVisible());
    EXPECT_TRUE(m_window.infoDock().isVisible());
    EXPECT_EQ(m_window.graphPage().scene()->nodeItems().size(), 44U);
    EXPECT_TRUE(m_window.actions().find()->isEnabled());
    m_window.actions().find()->trigger();
    EXPECT_TRUE(m_window.graphPage().searchBar()->isVisible());
    const QString svg = m_dir.filePath(QStringLiteral("shown.svg"));
    EXPECT_TRUE(m_window.exportGraph(svg));
    EXPECT_TRUE(QSvgRenderer(svg).isValid());
}

TEST_F(MainWindowGraphTest, QuantizeMenuSwitchesHwConfigUndoably) {
    m_window.show();
    EXPECT_FALSE(m_window.actions().hwConfigActions().front()->isEnabled());
    m_window.openModel(kDemoModel);
    ASSERT_TRUE(QTest::qWaitFor(
        [this] {
            return !m_window.session().isOpening() && m_window.session().document() &&
                   !m_window.graphPage().isLayingOut();
        },
        kTimeoutMs));
    GraphDocument& document = *m_window.session().document();
    ASSERT_NE(document.quantization(), nullptr);
    EXPECT_TRUE(m_window.quantizerDock().isVisible());
    const auto& scene = *m_window.graphPage().scene();
    EXPECT_EQ(scene.badgeItems().size(), document.quantizerMarks().size());
    QAction* npu = m_window.actions().hwConfigActions().at(2);
    EXPECT_TRUE(m_window.actions().hwConfigActions().at(0)->isChecked());
    npu->trigger();
    EXPECT_EQ(document.quantization()->settings.hw, "npu");
    EXPECT_TRUE(npu->isChecked());
    EXPECT_EQ(scene.badgeItems().size(), document.quantizerMarks().size());
    QAction* requant = m_window.actions().ruleActions().at(1);
    requant->trigger();
    EXPECT_EQ(document.quantization()->settings.rule,
              quantization::QuantizerPropagationRule::MergeWithPotentialRequantization);
    m_window.actions().undo()->trigger();
    m_window.actions().undo()->trigger();
    EXPECT_EQ(document.quantization()->settings.hw, "cpu");
    EXPECT_TRUE(m_window.actions().hwConfigActions().at(0)->isChecked());
    // Picking a row of the Quantizers table selects the op it sits on.
    QTableView& table = m_window.quantizerPanel().view();
    table.setCurrentIndex(table.model()->index(2, QuantizerTableModel::Point));
    const QString node = QString::fromStdString(
        m_window.quantizerPanel()
            .model()
            .markAt(m_window.quantizerPanel().model().rowOf(
                table.model()->index(2, QuantizerTableModel::Id).data().toInt()))
            .point.targetNodeName);
    // The row's badge is selected in the graph, on the op the row names.
    const std::vector<int> selected = m_window.graphPage().scene()->selectedQuantizers();
    ASSERT_EQ(selected.size(), 1U);
    const QuantizerBadgeItem* badge = m_window.graphPage().scene()->badge(selected.front());
    ASSERT_NE(badge, nullptr);
    const auto box = m_window.graphPage().scene()->boxIndex(
        *m_window.session().document()->graph().findNode(node.toStdString()));
    ASSERT_TRUE(box.has_value());
    EXPECT_TRUE(m_window.graphPage()
                    .scene()
                    ->nodeItems()[*box]
                    ->sceneBox()
                    .adjusted(-20, -20, 20, 20)
                    .contains(badge->pos()));
    // Clicking the 8-bit activations bar selects those quantizers (the table shows every row).
    BitwidthChartCanvas& chart = m_window.chartPanel().canvas();
    const std::optional<QPointF> bar = chart.barCenter(8, false);
    ASSERT_TRUE(bar.has_value());
    QTest::mouseClick(&chart, Qt::LeftButton, {}, bar->toPoint());
    EXPECT_EQ(m_window.quantizerPanel().filterText(), QString());
    EXPECT_EQ(m_window.quantizerPanel().visibleRows(),
              static_cast<int>(document.quantizerMarks().size()));
    EXPECT_FALSE(scene.selectedQuantizers().empty());
    // The colour-blind-safe palette recolours the badges and persists.
    const QColor green = scene.badgeItems().front()->fillColor();
    m_window.actions().colorBlindPalette()->trigger();
    EXPECT_TRUE(m_settings.colorBlindPalette());
    EXPECT_NE(scene.badgeItems().front()->fillColor(), green);
    m_window.actions().colorBlindPalette()->trigger();
    EXPECT_EQ(scene.badgeItems().front()->fillColor(), green);
}

TEST_F(MainWindowGraphTest, CommandLineSettingsAndBitwidthsApplyToTheOpenedModel) {
    quantization::QuantizationSettings npu;
    npu.hw = "npu";
    npu.rule = quantization::QuantizerPropagationRule::MergeWithPotentialRequantization;
    m_window.session().setInitialQuantizationSettings(npu);
    m_window.setInitialBitwidths({QStringLiteral("/block1/dw/Clip=4")});
    m_window.openModel(kDemoModel);
    ASSERT_TRUE(QTest::qWaitFor(
        [this] {
            return !m_window.session().isOpening() && m_window.session().document() &&
                   !m_window.graphPage().isLayingOut();
        },
        kTimeoutMs));
    GraphDocument& document = *m_window.session().document();
    EXPECT_EQ(document.quantization()->settings, npu);
    EXPECT_EQ(document.undoStack().count(), 1);
    const auto& scene = *m_window.graphPage().scene();
    int red = 0;
    for (const QuantizerBadgeItem* badge : scene.badgeItems()) {
        red += badge->fillColor() == scene.theme().bitwidthColor(4) ? 1 : 0;
    }
    EXPECT_GE(red, 1);
    document.undoStack().undo();
    for (const QuantizerBadgeItem* badge : scene.badgeItems()) {
        EXPECT_NE(badge->fillColor(), scene.theme().bitwidthColor(4));
    }
}

TEST_F(MainWindowGraphTest, ThemeChoiceIsAppliedAndPersisted) {
    m_window.setTheme(ThemeChoice::Dark);
    EXPECT_TRUE(m_window.graphPage().scene()->theme().isDark);
    EXPECT_TRUE(m_window.actions().themeAction(ThemeChoice::Dark)->isChecked());
    EXPECT_EQ(Settings(m_dir.filePath(QStringLiteral("settings.ini"))).theme(), ThemeChoice::Dark);
    m_window.actions().themeAction(ThemeChoice::Light)->trigger();
    EXPECT_FALSE(m_window.graphPage().scene()->theme().isDark);
    EXPECT_EQ(m_settings.theme(), ThemeChoice::Light);
}

} // namespace
} // namespace qs::ui
