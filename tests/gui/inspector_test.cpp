// The Inspector dock and chart selection in the real main window on the demo model (offscreen):
// selecting an op shows its attributes, tensors and weight statistics; selecting a badge shows
// the quantizer, and its config combo changes the choice through the undo stack; clicking a bar
// of the Bit Widths chart selects exactly the quantizers it counts, in the graph and the table;
// a per-branch choice under MERGE_ALL_IN_ONE brings up the bar offering the requantization rule.

#include "core/quantization/finalize_setup.h"
#include "core/report/tensor_statistics.h"
#include "ui/bitwidth_chart.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/inspector_panel.h"
#include "ui/main_window.h"
#include "ui/quantizer_commands.h"
#include "ui/quantizer_panel.h"
#include "ui/rule_hint_bar.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QChart>
#include <QComboBox>
#include <QDockWidget>
#include <QPushButton>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 30000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

class InspectorTest : public ::testing::Test {
protected:
    InspectorTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings) {
        m_window.resize(1280, 820);
        m_window.show();
        m_window.openModel(kDemoModel);
        EXPECT_TRUE(QTest::qWaitFor(
            [this] {
                return !m_window.session().isOpening() && m_window.session().document() &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs));
    }

    GraphScene& scene() const { return *m_window.graphPage().scene(); }

    GraphDocument& document() const { return *m_window.session().document(); }

    NodeItem* firstNodeOfType(const QString& opType) const {
        for (NodeItem* node : scene().nodeItems()) {
            if (node->content().title == opType) {
                return node;
            }
        }
        return nullptr;
    }

    QTemporaryDir m_dir;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(InspectorTest, SelectedOpShowsAttributesShapesAndWeightStatistics) {
    NodeItem* conv = firstNodeOfType(QStringLiteral("Conv"));
    ASSERT_NE(conv, nullptr);
    scene().clearSelection();
    conv->setSelected(true);
    const InspectorPanel& inspector = m_window.inspector();
    EXPECT_TRUE(m_window.inspectorDock().isVisible());
    EXPECT_EQ(inspector.title(), QStringLiteral("Conv ") + conv->content().fullName);
    EXPECT_FALSE(
        inspector.value(QStringLiteral("Attributes"), QStringLiteral("kernel_shape")).isEmpty());
    const graph::Graph& graph = document().graph();
    const graph::Node& node = graph.node(conv->node());
    const graph::Value& weight = graph.value(node.inputs.at(1));
    ASSERT_TRUE(weight.isInitializer());
    EXPECT_EQ(inspector.value(QStringLiteral("Inputs"),
                              QStringLiteral("1 ") + QString::fromStdString(weight.name)),
              QStringLiteral("float ") + QString::fromStdString(weight.shape.toString()));
    const auto stats = report::tensorStatistics(*weight.initializer);
    ASSERT_TRUE(stats.ok());
    const QString shown =
        inspector.value(QStringLiteral("Weights"), QString::fromStdString(weight.name));
    EXPECT_TRUE(shown.contains(QStringLiteral("min %1").arg(stats->min, 0, 'g', 4)))
        << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("std %1").arg(stats->stddev, 0, 'g', 4)));
    EXPECT_EQ(inspector.rows(QStringLiteral("Outputs")).size(), 1);
    EXPECT_FALSE(inspector.value(QStringLiteral("Op"), QStringLiteral("Parameters")).isEmpty());
}

TEST_F(InspectorTest, SelectedBadgeShowsTheQuantizerAndItsComboChoosesThroughUndo) {
    quantization::QuantizationSettings npu;
    npu.hw = "npu";
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), npu));
    const auto& state = *document().quantization();
    int id = -1;
    int fourBitIndex = -1;
    for (const auto& [point, candidates] : state.proposal.setup.quantizationPoints) {
        for (size_t i = 0; i < candidates.possibleConfigs.size() && id < 0; ++i) {
            if (candidates.possibleConfigs[i].numBits == 4 &&
                state.setup.quantizationPoints.contains(point)) {
                id = point;
                fourBitIndex = static_cast<int>(i);
            }
        }
    }
    ASSERT_GE(id, 0);
    scene().selectQuantizers({id});
    const InspectorPanel& inspector = m_window.inspector();
    EXPECT_EQ(inspector.shownQuantizer(), id);
    const auto& point = state.setup.quantizationPoints.at(id);
    EXPECT_EQ(inspector.value(QStringLiteral("Quantizer"), QStringLiteral("Insertion point")),
              QString::fromStdString(point.insertionPoint.toString()));
    EXPECT_EQ(inspector.value(QStringLiteral("Quantizer"), QStringLiteral("State")),
              QStringLiteral("active"));
    EXPECT_EQ(inspector.rows(QStringLiteral("Directly quantized ops")).size(),
              static_cast<qsizetype>(point.directlyQuantizedOperatorNodeNames.size()));
    QComboBox& combo = inspector.configCombo();
    ASSERT_TRUE(combo.isEnabled());
    EXPECT_EQ(
        combo.count(),
        static_cast<int>(state.proposal.setup.quantizationPoints.at(id).possibleConfigs.size()));
    const int before = document().undoStack().count();
    Q_EMIT combo.activated(fourBitIndex);
    EXPECT_EQ(document().undoStack().count(), before + 1);
    EXPECT_EQ(document().quantization()->choice.at(id).numBits, 4);
    EXPECT_EQ(scene().badge(id)->content().bits, 4);
    EXPECT_EQ(inspector.configCombo().currentIndex(), fourBitIndex);
    document().undoStack().undo();
    EXPECT_NE(document().quantization()->choice.at(id).numBits, 4);
    EXPECT_NE(inspector.configCombo().currentIndex(), fourBitIndex);
}

TEST_F(InspectorTest, TableRowShowsItsQuantizerAndSelectsItsBadge) {
    QTableView& table = m_window.quantizerPanel().view();
    table.setCurrentIndex(table.model()->index(3, QuantizerTableModel::Point));
    const int id = table.model()->index(3, QuantizerTableModel::Id).data().toInt();
    EXPECT_EQ(m_window.inspector().shownQuantizer(), id);
    EXPECT_TRUE(m_window.inspector().title().startsWith(QStringLiteral("Quantizer #%1").arg(id)));
    // Its badge is selected in the graph (the op centred), and the inspector keeps the quantizer.
    ASSERT_EQ(scene().selectedItems().size(), 1);
    EXPECT_EQ(scene().selectedQuantizers(), std::vector<int>{id});
}

TEST_F(InspectorTest, MergedAndRequantizersNameTheirPartner) {
    // NPU with the requantization rule: the branch quantizers merge into their 8-bit parent...
    quantization::QuantizationSettings settings;
    settings.hw = "npu";
    settings.rule = quantization::QuantizerPropagationRule::MergeWithPotentialRequantization;
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), settings));
    InspectorPanel& inspector = m_window.inspector();
    const auto stateOf = [&inspector](int id) {
        inspector.showQuantizer(id);
        return inspector.value(QStringLiteral("Quantizer"), QStringLiteral("State"));
    };
    bool sawMerged = false;
    for (const quantization::QuantizerMark& mark : document().quantizerMarks()) {
        if (mark.status == quantization::QuantizerStatus::Merged) {
            ASSERT_TRUE(mark.linkedTo);
            EXPECT_EQ(stateOf(mark.id), QStringLiteral("merged into #%1").arg(*mark.linkedTo));
            EXPECT_FALSE(inspector.configCombo().isEnabled());
            inspector.showQuantizer(*mark.linkedTo);
            EXPECT_TRUE(inspector.value(QStringLiteral("Quantizer"), QStringLiteral("Linked here"))
                            .contains(QStringLiteral("#%1 (merged)").arg(mark.id)));
            sawMerged = true;
        }
    }
    EXPECT_TRUE(sawMerged);
    // ...and 4 bits on one branch leaves it as a requantizer of the parent.
    quantization::QuantizerConfigChoice choice = document().quantization()->choice;
    ASSERT_TRUE(quantization::applyBitwidthChoice(document().quantization()->proposal.setup,
                                                  "/block1/dw/Clip=4", choice)
                    .ok());
    document().undoStack().push(new ChooseQuantizerConfigCommand(document(), choice));
    bool sawRequantizer = false;
    for (const quantization::QuantizerMark& mark : document().quantizerMarks()) {
        if (mark.status == quantization::QuantizerStatus::Requantizer) {
            ASSERT_TRUE(mark.linkedTo);
            EXPECT_EQ(stateOf(mark.id), QStringLiteral("requantizer of #%1").arg(*mark.linkedTo));
            sawRequantizer = true;
        }
    }
    EXPECT_TRUE(sawRequantizer);
}

TEST_F(InspectorTest, ClickingAChartBarSelectsItsQuantizers) {
    const auto& setup = document().quantization()->setup;
    BitwidthChartCanvas& chart = m_window.chartPanel().canvas();
    for (const bool weights : {false, true}) {
        std::vector<int> expected;
        for (const auto& [id, point] : setup.quantizationPoints) {
            if (point.qconfig.numBits == 8 && point.insertionPoint.isWeight == weights) {
                expected.push_back(id);
            }
        }
        ASSERT_FALSE(expected.empty());
        const std::optional<QPointF> bar = chart.barCenter(8, weights);
        ASSERT_TRUE(bar.has_value());
        QTest::mouseClick(&chart, Qt::LeftButton, {}, bar->toPoint());
        EXPECT_EQ(scene().selectedQuantizers(), expected);
        for (int id : expected) {
            EXPECT_TRUE(scene().badge(id)->isSelected());
        }
        std::vector<int> rows = m_window.quantizerPanel().selectedQuantizers();
        std::sort(rows.begin(), rows.end());
        EXPECT_EQ(rows, expected);
        EXPECT_TRUE(m_window.quantizerDock().isVisible());
    }
}

} // namespace
} // namespace qs::ui

namespace qs::ui {
namespace {

TEST_F(InspectorTest, PerBranchChoiceOffersTheRequantizationRule) {
    quantization::QuantizationSettings npu;
    npu.hw = "npu";
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), npu));
    RuleHintBar& bar = *m_window.graphPage().ruleHint();
    EXPECT_TRUE(bar.isHidden());
    const auto& proposal = document().quantization()->proposal.setup;
    int shared = -1;
    for (const auto& [id, point] : proposal.quantizationPoints) {
        if (!point.insertionPoint.isWeight && point.possibleConfigs.size() > 1 &&
            point.directlyQuantizedOperatorNodeNames.size() > 1) {
            shared = id;
            break;
        }
    }
    ASSERT_GE(shared, 0);
    // Choosing a non-default config for the quantizer above the fork brings the bar up.
    document().undoStack().push(new ChooseQuantizerConfigCommand(
        document(), shared, proposal.quantizationPoints.at(shared).possibleConfigs.at(1)));
    ASSERT_FALSE(bar.isHidden());
    EXPECT_TRUE(bar.text().contains(QStringLiteral("#%1").arg(shared)));
    EXPECT_TRUE(bar.text().contains(QStringLiteral("MERGE_ALL_IN_ONE")));
    // Undo back to the default does not offer again; accepting switches the rule undoably.
    bar.dismiss();
    document().undoStack().undo();
    EXPECT_TRUE(bar.isHidden());
    document().undoStack().redo();
    ASSERT_FALSE(bar.isHidden());
    bar.switchButton().click();
    EXPECT_TRUE(bar.isHidden());
    EXPECT_EQ(document().quantization()->settings.rule,
              quantization::QuantizerPropagationRule::MergeWithPotentialRequantization);
    document().undoStack().undo();
    EXPECT_EQ(document().quantization()->settings.rule,
              quantization::QuantizerPropagationRule::MergeAllInOne);
}

} // namespace
} // namespace qs::ui
