// Quantizer badges on the offscreen platform: the demo model shows one badge per quantizer of its
// finalized setup; choosing another config through the undo stack recolours the badge and undo
// restores it; switching the HW config re-runs propagation and undoes; `render` with quantizers
// writes one badge label per quantizer into the SVG.

#include "core/layout/layout.h"
#include "ui/bitwidth_chart.h"
#include "ui/graph_document.h"
#include "ui/graph_export.h"
#include "ui/graph_scene.h"
#include "ui/quantizer_commands.h"
#include "ui/quantizer_panel.h"

#include <QFile>
#include <QGraphicsPathItem>
#include <QRegularExpression>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <algorithm>

namespace qs::ui {
namespace {

const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

class QuantizerBadgesTest : public ::testing::Test {
protected:
    QuantizerBadgesTest() {
        NullProgress progress;
        auto loaded = loadModel(kDemoModel, progress);
        EXPECT_TRUE(loaded.ok());
        m_document = std::make_unique<GraphDocument>(kDemoModel, std::move(loaded).value());
        m_model = m_scene.prepareLayout(m_document->graph());
        auto placed = layout::computeLayout(m_model.input, {}, progress);
        EXPECT_TRUE(placed.ok());
        m_scene.populate(m_document->graph(), m_model, *placed);
        redraw();
        QObject::connect(m_document.get(), &GraphDocument::quantizationChanged,
                         [this] { redraw(); });
    }

    void redraw() { m_scene.showQuantizers(m_document->quantizerMarks()); }

    size_t activeBadges() const {
        size_t count = 0;
        for (const QuantizerBadgeItem* badge : m_scene.badgeItems()) {
            count += badge->content().merged ? 0 : 1;
        }
        return count;
    }

    /// Switches to NPU and returns a kept point with a 4-bit candidate, or -1.
    int switchToNpuAndFindFourBitPoint(quantization::QuantizerConfig& fourBits) {
        quantization::QuantizationSettings npu;
        npu.hw = "npu";
        m_document->undoStack().push(new ChangeQuantizationSettingsCommand(*m_document, npu));
        const auto& state = *m_document->quantization();
        for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
            for (const auto& config : point.possibleConfigs) {
                if (config.numBits == 4 && state.setup.quantizationPoints.contains(id)) {
                    fourBits = config;
                    return id;
                }
            }
        }
        return -1;
    }

    GraphScene m_scene;
    std::unique_ptr<GraphDocument> m_document;
    layout::GraphLayoutModel m_model;
};

TEST_F(QuantizerBadgesTest, OneBadgePerQuantizerOfTheSetup) {
    ASSERT_NE(m_document->quantization(), nullptr) << m_document->quantizationError().toStdString();
    const auto& setup = m_document->quantization()->setup;
    EXPECT_FALSE(setup.quantizationPoints.empty());
    EXPECT_EQ(activeBadges(), setup.quantizationPoints.size());
    EXPECT_EQ(m_scene.badgeItems().size(),
              setup.quantizationPoints.size() + setup.mergedInto.size());
    size_t weights = 0;
    for (const QuantizerBadgeItem* badge : m_scene.badgeItems()) {
        weights += badge->content().weight ? 1 : 0;
        EXPECT_TRUE(badge->toolTip().contains(QStringLiteral("B:")))
            << badge->toolTip().toStdString();
        EXPECT_EQ(badge->fillColor(), m_scene.theme().bitwidthColor(8));
    }
    EXPECT_GT(weights, 0U);
}

TEST_F(QuantizerBadgesTest, ChoiceRecoloursAndUndoRestores) {
    QUndoStack& stack = m_document->undoStack();
    quantization::QuantizerConfig fourBits;
    const int pointId = switchToNpuAndFindFourBitPoint(fourBits);
    ASSERT_EQ(m_document->quantization()->settings.hw, "npu");
    ASSERT_GE(pointId, 0);
    ASSERT_NE(m_scene.badge(pointId), nullptr);
    const QColor before = m_scene.badge(pointId)->fillColor();
    EXPECT_EQ(before, m_scene.theme().bitwidthColor(8));
    stack.push(new ChooseQuantizerConfigCommand(*m_document, pointId, fourBits));
    ASSERT_NE(m_scene.badge(pointId), nullptr);
    EXPECT_EQ(m_scene.badge(pointId)->fillColor(), m_scene.theme().bitwidthColor(4));
    stack.undo();
    EXPECT_EQ(m_scene.badge(pointId)->fillColor(), before);
    stack.undo();
    EXPECT_EQ(m_document->quantization()->settings.hw, "cpu");
    EXPECT_EQ(activeBadges(), m_document->quantization()->setup.quantizationPoints.size());
    stack.redo();
    EXPECT_EQ(m_document->quantization()->settings.hw, "npu");
}

TEST_F(QuantizerBadgesTest, TableEditChangesTheChoiceThroughTheUndoStack) {
    QuantizerTableModel table;
    table.setDocument(m_document.get());
    EXPECT_EQ(static_cast<size_t>(table.rowCount()), m_scene.badgeItems().size());
    quantization::QuantizerConfig fourBits;
    const int pointId = switchToNpuAndFindFourBitPoint(fourBits);
    ASSERT_GE(pointId, 0);
    const int row = table.rowOf(pointId);
    ASSERT_GE(row, 0);
    const QModelIndex cell = table.index(row, QuantizerTableModel::Config);
    EXPECT_TRUE(table.flags(cell) & Qt::ItemIsEditable);
    const QStringList candidates =
        table.data(cell, QuantizerTableModel::CandidatesRole).toStringList();
    const int fourIndex =
        static_cast<int>(candidates.indexOf(QString::fromStdString(fourBits.toString())));
    ASSERT_GE(fourIndex, 0);
    ASSERT_TRUE(table.setData(cell, fourIndex, Qt::EditRole));
    EXPECT_EQ(m_scene.badge(pointId)->fillColor(), m_scene.theme().bitwidthColor(4));
    EXPECT_TRUE(
        table.data(table.index(table.rowOf(pointId), QuantizerTableModel::Config), Qt::DisplayRole)
            .toString()
            .startsWith(QStringLiteral("B:4")));
    m_document->undoStack().undo();
    EXPECT_EQ(m_scene.badge(pointId)->fillColor(), m_scene.theme().bitwidthColor(8));
}

TEST_F(QuantizerBadgesTest, OneBitwidthForASelectionIsOneUndoStep) {
    QuantizerPanel panel;
    panel.setDocument(m_document.get());
    quantization::QuantizerConfig unused;
    ASSERT_GE(switchToNpuAndFindFourBitPoint(unused), 0);
    panel.setFilterText(QStringLiteral("Conv"));
    EXPECT_LT(panel.visibleRows(), static_cast<int>(m_scene.badgeItems().size()));
    panel.view().selectAll();
    const std::vector<int> ids = panel.selectedQuantizers();
    ASSERT_FALSE(ids.empty());
    const int changed = panel.setBitwidthForSelection(4);
    EXPECT_GT(changed, 1);
    int red = 0;
    for (int id : ids) {
        red += m_scene.badge(id) != nullptr &&
               m_scene.badge(id)->fillColor() == m_scene.theme().bitwidthColor(4);
    }
    EXPECT_EQ(red, changed);
    m_document->undoStack().undo();
    for (int id : ids) {
        ASSERT_NE(m_scene.badge(id), nullptr);
        EXPECT_EQ(m_scene.badge(id)->fillColor(), m_scene.theme().bitwidthColor(8));
    }
}

TEST_F(QuantizerBadgesTest, ChartCountsEveryQuantizerAndFollowsChoices) {
    BitwidthChartPanel panel;
    panel.setDocument(m_document.get());
    const auto points = [this] {
        return static_cast<int>(m_document->quantization()->setup.quantizationPoints.size());
    };
    EXPECT_EQ(panel.breakdown().totalQuantizers(), points());
    EXPECT_TRUE(panel.canvas().barCenter(8, false).has_value());
    EXPECT_FALSE(panel.canvas().barCenter(4, false).has_value());
    quantization::QuantizerConfig fourBits;
    const int pointId = switchToNpuAndFindFourBitPoint(fourBits);
    ASSERT_GE(pointId, 0);
    m_document->undoStack().push(new ChooseQuantizerConfigCommand(*m_document, pointId, fourBits));
    EXPECT_EQ(panel.breakdown().totalQuantizers(), points());
    // Two bit widths now: each gets its bar, in its own colour, and the 4-bit one is clickable.
    EXPECT_EQ(panel.breakdown().byBits.size(), 2U);
    const bool weight =
        m_document->quantization()->setup.quantizationPoints.at(pointId).insertionPoint.isWeight;
    const std::optional<QPointF> bar = panel.canvas().barCenter(4, weight);
    ASSERT_TRUE(bar.has_value());
    QList<int> clicked;
    QObject::connect(&panel, &BitwidthChartPanel::quantizersClicked,
                     [&clicked](const QList<int>& ids) { clicked = ids; });
    QTest::mouseClick(&panel.canvas(), Qt::LeftButton, {}, bar->toPoint());
    EXPECT_TRUE(clicked.contains(pointId));
    for (const int id : clicked) {
        EXPECT_EQ(m_document->quantization()->setup.quantizationPoints.at(id).qconfig.numBits, 4);
    }
}

TEST(RenderQuantizersTest, SvgHasOneBadgeLabelPerQuantizer) {
    NullProgress progress;
    auto loaded = loadModel(kDemoModel, progress);
    ASSERT_TRUE(loaded.ok());
    ASSERT_TRUE(loaded->quantization.has_value());
    const auto& setup = loaded->quantization->setup;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("badges.svg"));
    ASSERT_TRUE(renderGraphFile(loaded->graph, path, GraphTheme::light(), progress,
                                quantization::quantizerMarks(setup, nullptr))
                    .ok());
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray svg = file.readAll();
    // One <text> element per badge label in the badge font (the enclosing <g> repeats the font).
    const QRegularExpression badgeText(
        QStringLiteral("<text [^>]*font-family=\"QuantscopeBadge\""));
    size_t badges = 0;
    for (auto it = badgeText.globalMatch(QString::fromUtf8(svg)); it.hasNext(); it.next()) {
        ++badges;
    }
    EXPECT_EQ(badges, setup.quantizationPoints.size());
}

/// Every edit and its undo, redrawn in place, leaves the same badges, tooltips, links and table
/// rows as drawing the new marks from scratch; the edited badge stays the same item and the table
/// is not reset.
TEST_F(QuantizerBadgesTest, EditsRedrawInPlaceLikeAFullRedraw) {
    quantization::QuantizerConfig fourBits;
    ASSERT_GE(switchToNpuAndFindFourBitPoint(fourBits), 0);
    QuantizerTableModel table;
    table.setDocument(m_document.get());
    int resets = 0;
    QObject::connect(&table, &QAbstractItemModel::modelReset, [&] { ++resets; });
    auto linkCount = [](const GraphScene& scene) {
        const QList<QGraphicsItem*> items = scene.items();
        return std::count_if(items.begin(), items.end(), [](const QGraphicsItem* item) {
            return item->type() == QGraphicsPathItem::Type; // links; edges have their own type
        });
    };
    auto expectSameAsFullRedraw = [&] {
        GraphScene fresh;
        NullProgress progress;
        fresh.populate(m_document->graph(), m_model,
                       layout::computeLayout(m_model.input, {}, progress).value());
        fresh.showQuantizers(m_document->quantizerMarks());
        ASSERT_EQ(fresh.badgeItems().size(), m_scene.badgeItems().size());
        for (const QuantizerBadgeItem* expected : fresh.badgeItems()) {
            const QuantizerBadgeItem* shown = m_scene.badge(expected->quantizerId());
            ASSERT_NE(shown, nullptr);
            EXPECT_EQ(shown->content(), expected->content());
            EXPECT_EQ(shown->toolTip(), expected->toolTip());
            EXPECT_EQ(shown->zValue(), expected->zValue());
        }
        EXPECT_EQ(linkCount(m_scene), linkCount(fresh));
        QuantizerTableModel freshTable;
        freshTable.setDocument(m_document.get());
        ASSERT_EQ(table.rowCount(), freshTable.rowCount());
        for (int row = 0; row < table.rowCount(); ++row) {
            for (int column = 0; column < QuantizerTableModel::ColumnCount; ++column) {
                EXPECT_EQ(table.data(table.index(row, column), Qt::DisplayRole),
                          freshTable.data(freshTable.index(row, column), Qt::DisplayRole));
            }
        }
    };
    const auto& proposal = m_document->quantization()->proposal.setup;
    int edits = 0;
    for (const auto& [id, point] : proposal.quantizationPoints) {
        if (point.possibleConfigs.size() < 2) {
            continue;
        }
        const QuantizerBadgeItem* before = m_scene.badge(id);
        m_document->undoStack().push(
            new ChooseQuantizerConfigCommand(*m_document, id, point.possibleConfigs.back()));
        EXPECT_EQ(m_scene.badge(id), before) << "quantizer " << id;
        expectSameAsFullRedraw();
        m_document->undoStack().undo();
        expectSameAsFullRedraw();
        ++edits;
    }
    EXPECT_GT(edits, 0);
    EXPECT_EQ(resets, 0);
}

} // namespace
} // namespace qs::ui
