// The pruning feature in the main window on the offscreen platform, on the trained demo model
// (digits_cnn: two pruning sections, /se/fc1 -> /se/fc2 and /head/head.0 -> /fc, and ops that
// are not prunable for every reason core names): Compress ▸ Prune… through the JobRunner (LFH
// scores from the document's shared Hessian service) fills the Pruning dock (table, gauge,
// sorted channel scores) and the graph (entry labels and bars, section tints, "not prunable"
// marks with their reason); an edit in the dock re-runs only the greedy as one undo step and
// undo restores the earlier masks; a cancel leaves nothing; the pruning is saved in the session
// and comes back with it; the pruned export re-imports and runs, and an unwritable path is a
// clear error; Continue with Pruned Model makes the pruned graph the document (calibrated and
// exported as QDQ, saved in the session and reopened as the pruned model), Back to Dense Model
// returns to the file's graph.

#include "core/onnx/model_io.h"
#include "core/runtime/batching.h"
#include "core/runtime/executor.h"
#include "core/session/pruning_masks_section.h"
#include "tests/gui/recording_reporter.h"
#include "ui/actions.h"
#include "ui/dataset_picker.h"
#include "ui/features/calibration/calibration.h"
#include "ui/features/calibration/calibration_controller.h"
#include "ui/features/compare/compare_feature.h"
#include "ui/features/hessian/hessian_cache.h"
#include "ui/features/hessian/hessian_state.h"
#include "ui/features/pruning/pruning_controller.h"
#include "ui/features/pruning/pruning_dialog.h"
#include "ui/features/pruning/pruning_overlay.h"
#include "ui/features/pruning/pruning_panel.h"
#include "ui/features/pruning/pruning_state.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/inspector_panel.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/quantizer_commands.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QMenu>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 120000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx");
const QString kSeEntry = QStringLiteral("/se/fc1/Conv");
const QString kHeadEntry = QStringLiteral("/head/head.0/Conv");

/// The demo model reaches 80 % of its dense weights with SIMD 4 (SIMD 32 cannot go below 150 %
/// of 50 %: its sections are small).
pruning::PruningRequest lfhRequest(int64_t samples, int iterations) {
    pruning::PruningRequest request;
    request.target = {true, 0.8};
    request.simd = 4;
    request.importance = pruning::ImportanceMetric::Lfh;
    request.samples = samples;
    request.iterations = iterations;
    request.dataset.randomSamples = samples;
    return request;
}

pruning::PruningRequest l2Request() {
    pruning::PruningRequest request = lfhRequest(1, 1);
    request.importance = pruning::ImportanceMetric::L2;
    request.dataset = {};
    return request;
}

class PruningGuiTest : public ::testing::Test {
protected:
    PruningGuiTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::ErrorRecorder>(m_errors)) {}

    void SetUp() override { openAndWait(kDemoModel); }

    void openAndWait(const QString& path) {
        m_window.openModel(path);
        ASSERT_TRUE(QTest::qWaitFor(
            [this] {
                return !m_window.session().isOpening() && m_window.session().document() &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs));
        ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    }

    GraphDocument& document() const { return *m_window.session().document(); }

    PruningController& pruning() const { return m_window.feature<PruningController>(); }

    PruningPanel& panel() const { return pruning().panel(); }

    const PruningResult& result() const {
        const PruningResult* found = pruningResult(document());
        EXPECT_NE(found, nullptr);
        return *found;
    }

    int sectionOf(const QString& entry) const {
        const auto& names = result().run->analysis.entryNames;
        const auto it = std::find(names.begin(), names.end(), entry.toStdString());
        return it == names.end() ? -1 : static_cast<int>(it - names.begin());
    }

    int64_t kept(const QString& entry) const {
        return result().outcome->kept[static_cast<size_t>(sectionOf(entry))];
    }

    void pruneAndWait(const pruning::PruningRequest& request) {
        QSignalSpy finished(&pruning(), &PruningController::pruneFinished);
        ASSERT_TRUE(pruning().prune(request));
        EXPECT_FALSE(pruning().pruneAction()->isEnabled()); // one pruning job at a time
        ASSERT_TRUE(finished.wait(kTimeoutMs));
        ASSERT_TRUE(finished.front().front().toBool())
            << finished.front().at(1).toString().toStdString();
        EXPECT_TRUE(pruning().pruneAction()->isEnabled());
        ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    }

    QTemporaryDir m_dir;
    QStringList m_errors;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(PruningGuiTest, PruneFillsTheDockAndTheGraph) {
    EXPECT_TRUE(pruning().pruneAction()->isEnabled());
    EXPECT_FALSE(pruning().exportAction()->isEnabled()); // nothing to export yet
    EXPECT_TRUE(m_window.actions().compressMenu()->actions().contains(pruning().pruneAction()));
    const int undoBefore = document().undoStack().count();
    pruneAndWait(lfhRequest(4, 5));
    EXPECT_EQ(document().undoStack().count(), undoBefore + 1); // one undo step
    EXPECT_TRUE(pruning().exportAction()->isEnabled());

    // The workflow's result: two sections, LFH scores from the document's Hessian service.
    const PruningRun& run = *result().run;
    ASSERT_EQ(run.sections(), 2);
    EXPECT_GE(sectionOf(kSeEntry), 0);
    EXPECT_GE(sectionOf(kHeadEntry), 0);
    EXPECT_EQ(run.analysis.metric, pruning::ImportanceMetric::Lfh);
    EXPECT_EQ(run.analysis.samples, 4);
    ASSERT_EQ(run.analysis.hessian.size(), 2U);
    EXPECT_EQ(run.analysis.hessian[static_cast<size_t>(sectionOf(kHeadEntry))].size(), 64U);
    EXPECT_EQ(hessianCache(document())->fetches(), 1);
    EXPECT_GT(hessianCache(document())->stats().sweeps, 0);
    const pruning::PruningOutcome& outcome = *result().outcome;
    EXPECT_LE(outcome.prunedBytes, outcome.targetBytes);
    EXPECT_EQ(outcome.targetBytes, static_cast<int64_t>(std::floor(0.8 * outcome.denseBytes)));
    EXPECT_TRUE(outcome.pruned.nodeIds().empty()); // the greedy only: export builds the graph

    // The dock: a row per section, the gauge at the pruned bytes, the selected entry's scores.
    EXPECT_EQ(panel().table().rowCount(), 2);
    const int head = sectionOf(kHeadEntry);
    EXPECT_EQ(panel().table().item(head, PruningPanel::EntryColumn)->text(), kHeadEntry);
    EXPECT_EQ(panel().table().item(head, PruningPanel::ChannelsColumn)->text(),
              QStringLiteral("%1 / 64").arg(kept(kHeadEntry)));
    EXPECT_EQ(panel().keptBox(head)->value(), kept(kHeadEntry));
    EXPECT_EQ(panel().constraintBox(head)->currentIndex(), 0); // free
    EXPECT_EQ(panel().gauge().pruned(), outcome.prunedBytes);
    EXPECT_EQ(panel().gauge().fillColor(), QColor(46, 125, 50)); // within the target
    EXPECT_TRUE(panel().summary().contains(QStringLiteral("lfh (4 samples)")))
        << panel().summary().toStdString();
    panel().table().setCurrentCell(head, PruningPanel::ExitColumn);
    ASSERT_EQ(panel().chart().bars().size(), 64U);
    for (size_t i = 1; i < panel().chart().bars().size(); ++i) {
        EXPECT_GE(panel().chart().bars()[i - 1].score, panel().chart().bars()[i].score);
    }
    const auto keptBars =
        std::count_if(panel().chart().bars().begin(), panel().chart().bars().end(),
                      [](const ChannelScoreChart::Bar& b) { return b.kept; });
    EXPECT_EQ(keptBars, kept(kHeadEntry));
    EXPECT_TRUE(panel().chart().bars().front().kept); // the greedy keeps a prefix of the order
    EXPECT_FALSE(panel().chart().bars().back().kept);
    // Selecting the row selected the entry on the graph; the Inspector shows its pruning.
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
            const QList<QGraphicsItem*> selected = m_window.graphPage().scene()->selectedItems();
            return selected.size() == 1 &&
                   static_cast<NodeItem*>(selected.front())->content().fullName == kHeadEntry;
        },
        kTimeoutMs));
    EXPECT_EQ(
        m_window.inspector().value(QStringLiteral("Pruning"), QStringLiteral("Output channels")),
        QStringLiteral("64 → %1").arg(kept(kHeadEntry)));

    // The graph: the entry's label and bar, tints on every member, marks on the others.
    const PruningOverlay& overlay = pruning().overlay();
    const auto* label = overlay.item<PruningEntryItem>(kHeadEntry);
    ASSERT_NE(label, nullptr);
    EXPECT_EQ(label->label(), QStringLiteral("64 → %1").arg(kept(kHeadEntry)));
    EXPECT_DOUBLE_EQ(label->keptFraction(), static_cast<double>(kept(kHeadEntry)) / 64.0);
    EXPECT_EQ(overlay.count(PruningEntryItem::Type), 2);
    const auto* entryTint = overlay.item<PruningTintItem>(kHeadEntry);
    const auto* exitTint = overlay.item<PruningTintItem>(QStringLiteral("/fc/Gemm"));
    ASSERT_NE(entryTint, nullptr);
    ASSERT_NE(exitTint, nullptr);
    EXPECT_EQ(entryTint->fill(), exitTint->fill()); // members share the section's tint
    EXPECT_NE(entryTint->fill(), overlay.item<PruningTintItem>(kSeEntry)->fill());
    size_t members = 0;
    for (const pruning::PruningSection& section : run.analysis.detection.sections) {
        members += 2 + section.intermediates.size();
    }
    EXPECT_EQ(overlay.count(PruningTintItem::Type), static_cast<int>(members));
    const auto* add = overlay.item<NotPrunableItem>(QStringLiteral("/block1/Add"));
    ASSERT_NE(add, nullptr);
    EXPECT_TRUE(add->reason().contains(QStringLiteral("residual Add")))
        << add->reason().toStdString();
    const auto* concat = overlay.item<NotPrunableItem>(QStringLiteral("/mix/Concat"));
    ASSERT_NE(concat, nullptr);
    EXPECT_TRUE(concat->reason().contains(QStringLiteral("Concat")));
    const auto* depthwise = overlay.item<NotPrunableItem>(QStringLiteral("/block2/dw/dw.0/Conv"));
    ASSERT_NE(depthwise, nullptr);
    EXPECT_TRUE(depthwise->reason().contains(QStringLiteral("depthwise")));
    EXPECT_EQ(overlay.count(NotPrunableItem::Type), static_cast<int>(run.notPrunable.size()));
    // The op's own tooltip carries the reason too.
    for (const NodeItem* node : m_window.graphPage().scene()->nodeItems()) {
        if (node->content().fullName == QStringLiteral("/block1/Add")) {
            EXPECT_TRUE(node->toolTip().contains(QStringLiteral("Not prunable: residual Add")))
                << node->toolTip().toStdString();
        }
    }
    // View ▸ Pruning Overlay hides and shows them.
    pruning().overlayAction()->setChecked(false);
    EXPECT_EQ(overlay.count(PruningTintItem::Type), 0);
    EXPECT_EQ(overlay.count(NotPrunableItem::Type), 0);
    pruning().overlayAction()->setChecked(true);
    EXPECT_EQ(overlay.count(PruningEntryItem::Type), 2);
}

TEST_F(PruningGuiTest, AnEditRerunsTheGreedyAndUndoRestoresIt) {
    pruneAndWait(l2Request());
    const int head = sectionOf(kHeadEntry);
    const int se = sectionOf(kSeEntry);
    const std::vector<std::vector<uint8_t>> masks = result().outcome->info.masks;
    const PruningRun* run = result().run.get();
    const int64_t headKept = kept(kHeadEntry);
    ASSERT_GE(headKept, 8); // SIMD 4: room for a smaller kept count
    const int steps = document().undoStack().count();

    // A kept count typed in the dock: the greedy re-runs with it fixed, on the same analysis.
    panel().keptBox(head)->setValue(static_cast<int>(headKept - 4));
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return document().undoStack().count() == steps + 1; }, kTimeoutMs));
    EXPECT_EQ(kept(kHeadEntry), headKept - 4);
    EXPECT_EQ(result().run.get(), run); // only the greedy ran
    EXPECT_EQ(result().constraint(head).kind, pruning::EntryConstraint::Kind::Keep);
    EXPECT_EQ(panel().constraintBox(head)->currentIndex(), 2); // keep
    EXPECT_LE(result().outcome->prunedBytes, result().outcome->targetBytes);
    EXPECT_EQ(pruning().overlay().item<PruningEntryItem>(kHeadEntry)->label(),
              QStringLiteral("64 → %1").arg(headKept - 4));
    const int64_t seKept = kept(kSeEntry); // the memory freed went to the other section

    // Locking the small SE section through its constraint box.
    panel().constraintBox(se)->setCurrentIndex(1);
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return document().undoStack().count() == steps + 2; }, kTimeoutMs));
    EXPECT_EQ(kept(kSeEntry), 8);
    EXPECT_EQ(result().constraint(se).kind, pruning::EntryConstraint::Kind::Lock);
    EXPECT_FALSE(panel().keptBox(se)->isEnabled());

    // A target the constraints cannot meet: an error naming the minimum, nothing changes.
    EXPECT_FALSE(pruning().setTarget({true, 0.5}));
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("minimum")))
        << m_errors.front().toStdString();
    m_errors.clear();
    EXPECT_EQ(document().undoStack().count(), steps + 2);
    // A higher target in the dock: more channels come back.
    panel().targetBox().setValue(95.0);
    ASSERT_TRUE(
        QTest::qWaitFor([&] { return document().undoStack().count() == steps + 3; }, kTimeoutMs));
    EXPECT_EQ(result().target.value, 0.95);
    EXPECT_LE(result().outcome->prunedBytes, result().outcome->targetBytes);

    // Undo three times: the first masks again, with free constraints and the first target.
    document().undoStack().undo();
    EXPECT_EQ(result().target.value, 0.8);
    document().undoStack().undo();
    EXPECT_EQ(result().constraint(se).kind, pruning::EntryConstraint::Kind::Free);
    EXPECT_EQ(kept(kSeEntry), seKept);
    EXPECT_EQ(kept(kHeadEntry), headKept - 4);
    document().undoStack().undo();
    EXPECT_EQ(result().outcome->info.masks, masks);
    EXPECT_EQ(kept(kHeadEntry), headKept);
    EXPECT_EQ(panel().keptBox(head)->value(), headKept);
    EXPECT_EQ(panel().constraintBox(head)->currentIndex(), 0);
    EXPECT_EQ(pruning().overlay().item<PruningEntryItem>(kHeadEntry)->label(),
              QStringLiteral("64 → %1").arg(headKept));
    // And the Prune step itself: no pruning at all.
    document().undoStack().undo();
    EXPECT_EQ(pruningResult(document()), nullptr);
    EXPECT_EQ(pruning().overlay().count(PruningTintItem::Type), 0);
    EXPECT_EQ(panel().table().rowCount(), 0);
    document().undoStack().redo();
    EXPECT_EQ(result().outcome->info.masks, masks);
    EXPECT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
}

TEST_F(PruningGuiTest, CancelLeavesNothing) {
    QSignalSpy finished(&pruning(), &PruningController::pruneFinished);
    const int steps = document().undoStack().count();
    pruning::PruningRequest request = lfhRequest(64, 100000);
    request.earlyStop = false;
    ASSERT_TRUE(pruning().prune(request));
    ASSERT_TRUE(QTest::qWaitFor([&] { return m_window.jobs().isBusy(); }, kTimeoutMs));
    QTest::qWait(200);
    m_window.jobs().cancelAll();
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_FALSE(finished.front().front().toBool());
    EXPECT_TRUE(m_errors.isEmpty()); // a cancel is no error
    EXPECT_EQ(pruningResult(document()), nullptr);
    EXPECT_EQ(document().undoStack().count(), steps);
    EXPECT_EQ(pruning().overlay().count(PruningTintItem::Type), 0);
    EXPECT_EQ(panel().table().rowCount(), 0);
    EXPECT_TRUE(pruning().pruneAction()->isEnabled());
    EXPECT_FALSE(pruning().exportAction()->isEnabled());
}

TEST_F(PruningGuiTest, ThePruningIsSavedInTheSessionAndComesBack) {
    pruneAndWait(lfhRequest(3, 5));
    ASSERT_TRUE(
        pruning().setConstraint(sectionOf(kHeadEntry), {pruning::EntryConstraint::Kind::Keep, 4}));
    const pruning::PruningOutcome saved = *result().outcome;
    const std::vector<std::vector<double>> hessian = result().run->analysis.hessian;

    const QString path = m_dir.filePath(QStringLiteral("pruned.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path));
    openAndWait(kDemoModel); // a fresh document: no pruning
    EXPECT_EQ(pruningResult(document()), nullptr);
    EXPECT_EQ(panel().table().rowCount(), 0);
    openAndWait(path);
    const PruningResult* restored = pruningResult(document());
    ASSERT_NE(restored, nullptr);
    EXPECT_EQ(restored->outcome->info.masks, saved.info.masks);
    EXPECT_EQ(restored->outcome->kept, saved.kept);
    EXPECT_EQ(restored->outcome->constraints, saved.constraints);
    EXPECT_EQ(restored->outcome->prunedBytes, saved.prunedBytes);
    EXPECT_EQ(restored->target.value, 0.8);
    EXPECT_EQ(restored->run->analysis.metric, pruning::ImportanceMetric::Lfh);
    EXPECT_EQ(restored->run->analysis.hessian, hessian); // from the saved H_c
    EXPECT_EQ(hessianCache(document())->fetches(), 0);   // no Hessian recomputed
    // The dock, the overlay and the export work on the restored pruning as on a fresh one.
    EXPECT_EQ(panel().table().rowCount(), 2);
    EXPECT_EQ(panel().keptBox(sectionOf(kHeadEntry))->value(), 4);
    EXPECT_EQ(panel().constraintBox(sectionOf(kHeadEntry))->currentIndex(), 2);
    ASSERT_NE(pruning().overlay().item<PruningEntryItem>(kHeadEntry), nullptr);
    EXPECT_EQ(pruning().overlay().item<PruningEntryItem>(kHeadEntry)->label(),
              QStringLiteral("64 → 4"));
    EXPECT_TRUE(pruning().exportAction()->isEnabled());
    ASSERT_TRUE(pruning().setConstraint(sectionOf(kHeadEntry), {}));
    EXPECT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();

    // A session whose pruning section is damaged opens, with an error naming the field.
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    QByteArray text = file.readAll();
    file.close();
    text.replace("\"constraint\"", "\"constrained\"");
    const QString damaged = m_dir.filePath(QStringLiteral("damaged.qscope"));
    QFile out(damaged);
    ASSERT_TRUE(out.open(QIODevice::WriteOnly));
    out.write(text);
    out.close();
    m_window.openModel(damaged);
    ASSERT_TRUE(QTest::qWaitFor(
        [this] { return !m_window.session().isOpening() && !m_window.graphPage().isLayingOut(); },
        kTimeoutMs));
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("\"constraint\"")))
        << m_errors.front().toStdString();
    EXPECT_EQ(pruningResult(document()), nullptr);
}

TEST_F(PruningGuiTest, TheExportReimportsAndRuns) {
    pruneAndWait(l2Request());
    const int64_t headKept = kept(kHeadEntry);
    QSignalSpy exported(&pruning(), &PruningController::exportFinished);
    const QString path = m_dir.filePath(QStringLiteral("pruned.onnx"));
    pruning().exportPruned(path);
    ASSERT_TRUE(exported.wait(kTimeoutMs));
    ASSERT_TRUE(exported.front().front().toBool())
        << m_errors.join(QLatin1Char('\n')).toStdString();
    auto pruned = onnx::importModel(path.toStdString());
    ASSERT_TRUE(pruned.ok()) << pruned.error().toString();
    // The head conv lost its pruned output channels; the model still runs, same output shape.
    const auto head = pruned->findNode(kHeadEntry.toStdString());
    ASSERT_TRUE(head.has_value());
    const graph::Value& weight = pruned->value(pruned->node(*head).inputs[1]);
    ASSERT_TRUE(weight.isInitializer());
    EXPECT_EQ(weight.initializer->dims().front(), headKept);
    auto executor = runtime::Executor::create(*pruned);
    ASSERT_TRUE(executor.ok()) << executor.error().toString();
    const graph::Value& input = pruned->value(pruned->runtimeInputs()[0]);
    const runtime::Tensor x = runtime::randomNormal(*runtime::concreteInputShape(input, 2), 7);
    auto outputs = executor->run(std::span(&x, 1));
    ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
    ASSERT_EQ(outputs->size(), 1U);
    EXPECT_EQ(outputs->front().shape(), (runtime::Shape{2, 10}));
    // The same model as the CLI's workflow (runPruning, what `prune` writes) gives.
    NullProgress progress;
    auto cli = pruning::runPruning(document().graph(), l2Request(), progress);
    ASSERT_TRUE(cli.ok()) << cli.error().toString();
    auto reference = runtime::Executor::create(cli->pruned);
    ASSERT_TRUE(reference.ok()) << reference.error().toString();
    auto expected = reference->run(std::span(&x, 1));
    ASSERT_TRUE(expected.ok()) << expected.error().toString();
    ASSERT_EQ(expected->front().numElements(), outputs->front().numElements());
    for (int64_t i = 0; i < outputs->front().numElements(); ++i) {
        EXPECT_TRUE(std::isfinite(outputs->front().data<float>()[i]));
        EXPECT_EQ(outputs->front().data<float>()[i], expected->front().data<float>()[i]);
    }

    // An unwritable path: a clear error, nothing written.
    exported.clear();
    const QString bad = m_dir.filePath(QStringLiteral("missing-folder/pruned.onnx"));
    pruning().exportPruned(bad);
    ASSERT_TRUE(exported.wait(kTimeoutMs));
    EXPECT_FALSE(exported.front().front().toBool());
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("missing-folder")))
        << m_errors.front().toStdString();
    EXPECT_FALSE(QFile::exists(bad));
}

/// Output channels of node `name`'s weight in `graph` (through a weight DequantizeLinear).
int64_t outputChannels(const graph::Graph& graph, const std::string& name) {
    const auto node = graph.findNode(name);
    if (!node) {
        return -1;
    }
    graph::ValueId weight = graph.node(*node).inputs[1];
    if (const auto producer = graph.value(weight).producer; producer.valid()) {
        weight = graph.node(producer).inputs[0]; // DequantizeLinear(w, scale, zero point)
    }
    const graph::Value& value = graph.value(weight);
    return value.isInitializer() ? value.initializer->dims().front() : -1;
}

TEST_F(PruningGuiTest, ThePrunedModelContinuesThroughQuantizationInTheSameSession) {
    pruneAndWait(l2Request());
    const int64_t headKept = kept(kHeadEntry);
    ASSERT_LT(headKept, 64);
    EXPECT_TRUE(pruning().applyAction()->isEnabled());
    EXPECT_FALSE(pruning().revertAction()->isEnabled());
    const std::vector<std::vector<uint8_t>> masks = result().outcome->info.masks;
    const QString sessionPath = m_dir.filePath(QStringLiteral("continued.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(sessionPath));
    const auto waitForDocument = [this](const GraphDocument* before) {
        return QTest::qWaitFor(
            [this, before] {
                return !m_window.session().isOpening() && m_window.session().document() != before &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs);
    };

    const GraphDocument* dense = &document();
    ASSERT_TRUE(pruning().continueWithPruned());
    ASSERT_TRUE(waitForDocument(dense));
    ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(document().isDerived());
    EXPECT_EQ(document().filePath(), kDemoModel); // the same model file and session
    EXPECT_EQ(m_window.session().sessionPath(), sessionPath);
    EXPECT_TRUE(m_window.windowTitle().contains(QStringLiteral("digits_cnn.onnx (pruned)")))
        << m_window.windowTitle().toStdString();
    EXPECT_TRUE(m_window.isWindowModified()); // the file on disk still holds the dense graph
    EXPECT_EQ(outputChannels(document().graph(), kHeadEntry.toStdString()), headKept);
    EXPECT_EQ(outputChannels(document().sourceGraph(), kHeadEntry.toStdString()), 64);
    ASSERT_NE(document().quantization(), nullptr); // quantizers placed on the pruned graph
    EXPECT_TRUE(result().applied);
    EXPECT_EQ(result().outcome->info.masks, masks);
    // The applied pruning is shown, not edited.
    EXPECT_FALSE(pruning().pruneAction()->isEnabled());
    EXPECT_FALSE(pruning().applyAction()->isEnabled());
    EXPECT_TRUE(pruning().revertAction()->isEnabled());
    EXPECT_FALSE(panel().constraintBox(sectionOf(kHeadEntry))->isEnabled());
    EXPECT_FALSE(panel().targetBox().isEnabled());
    EXPECT_FALSE(pruning().setConstraint(sectionOf(kHeadEntry), {}));
    EXPECT_TRUE(panel().summary().contains(QStringLiteral("applied")))
        << panel().summary().toStdString();
    EXPECT_EQ(pruning().overlay().item<PruningEntryItem>(kHeadEntry)->label(),
              QStringLiteral("64 → %1").arg(headKept));

    // The session saved before is of the dense graph: not laid over the pruned one.
    EXPECT_FALSE(m_window.feature<CompareFeature>().compareWith(sessionPath));
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("pruned model")))
        << m_errors.front().toStdString();
    m_errors.clear();

    // Quantize the pruned model: a choice, a calibration, the QDQ export.
    const auto& state = *document().quantization();
    int chosen = -1;
    for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
        if (point.insertionPoint.isWeight && point.possibleConfigs.size() > 1 &&
            state.setup.quantizationPoints.contains(id)) {
            document().undoStack().push(
                new ChooseQuantizerConfigCommand(document(), id, point.possibleConfigs.back()));
            chosen = id;
            break;
        }
    }
    ASSERT_GE(chosen, 0) << "no weight point with a second candidate";
    const quantization::QuantizerConfig chosenConfig = document().quantization()->choice.at(chosen);
    auto& calibration = m_window.feature<CalibrationController>();
    QSignalSpy calibrated(&calibration, &CalibrationController::calibrationFinished);
    CalibrationRequest calibrate;
    calibrate.dataset.randomSamples = 8;
    calibrate.dataset.batchSize = 4;
    ASSERT_TRUE(calibration.calibrate(calibrate));
    ASSERT_TRUE(calibrated.wait(kTimeoutMs));
    ASSERT_TRUE(calibrated.front().front().toBool());
    QSignalSpy exported(&calibration, &CalibrationController::exportFinished);
    const QString qdqPath = m_dir.filePath(QStringLiteral("pruned.qdq.onnx"));
    ASSERT_TRUE(calibration.exportQuantized(qdqPath));
    ASSERT_TRUE(exported.wait(kTimeoutMs));
    ASSERT_TRUE(exported.front().front().toBool())
        << exported.front().back().toString().toStdString();
    auto qdq = onnx::importModel(QFile::encodeName(qdqPath).toStdString());
    ASSERT_TRUE(qdq.ok()) << qdq.error().toString();
    EXPECT_EQ(outputChannels(*qdq, kHeadEntry.toStdString()), headKept);
    auto executor = runtime::Executor::create(*qdq);
    ASSERT_TRUE(executor.ok()) << executor.error().toString();
    const runtime::Tensor x = runtime::randomNormal(
        *runtime::concreteInputShape(qdq->value(qdq->runtimeInputs()[0]), 2), 3);
    auto outputs = executor->run(std::span(&x, 1));
    ASSERT_TRUE(outputs.ok()) << outputs.error().toString();
    EXPECT_EQ(outputs->front().shape(), (runtime::Shape{2, 10}));

    // Saved and reopened: the session works on the pruned model, with its choice.
    ASSERT_TRUE(m_window.sessions().saveSessionTo(sessionPath));
    EXPECT_FALSE(m_window.isWindowModified());
    openAndWait(kDemoModel);
    EXPECT_FALSE(document().isDerived());
    openAndWait(sessionPath);
    EXPECT_TRUE(document().isDerived());
    EXPECT_EQ(outputChannels(document().graph(), kHeadEntry.toStdString()), headKept);
    ASSERT_NE(document().quantization(), nullptr);
    EXPECT_EQ(document().quantization()->choice.at(chosen), chosenConfig);
    EXPECT_TRUE(result().applied);
    EXPECT_EQ(result().outcome->info.masks, masks);

    // Back to the dense model: the file's graph, the pruning editable again.
    const GraphDocument* pruned = &document();
    ASSERT_TRUE(pruning().backToDense());
    ASSERT_TRUE(waitForDocument(pruned));
    ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_FALSE(document().isDerived());
    EXPECT_EQ(outputChannels(document().graph(), kHeadEntry.toStdString()), 64);
    EXPECT_FALSE(result().applied);
    EXPECT_EQ(result().outcome->info.masks, masks);
    EXPECT_TRUE(pruning().pruneAction()->isEnabled());
    EXPECT_TRUE(pruning().applyAction()->isEnabled());
    EXPECT_TRUE(panel().constraintBox(sectionOf(kHeadEntry))->isEnabled());
    // The saved session now works on the pruned model: not laid over the dense graph either.
    EXPECT_FALSE(m_window.feature<CompareFeature>().compareWith(sessionPath));
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("works on the pruned model")))
        << m_errors.front().toStdString();
    m_errors.clear();
    EXPECT_TRUE(pruning().setTarget({true, 0.9}));
    EXPECT_FALSE(pruning().backToDense()); // nothing applied
    EXPECT_EQ(m_errors.size(), 1);
}

TEST_F(PruningGuiTest, AnExportOnLabelledDataStatesBothAccuracies) {
    pruning::PruningRequest request = l2Request();
    const std::string models = QS_SOURCE_DIR "/resources/models/";
    request.dataset.npyFiles = {models + "digits_test_inputs.npy"};
    request.dataset.labelsNpy = models + "digits_test_labels.npy";
    pruneAndWait(request);
    QSignalSpy exported(&pruning(), &PruningController::exportFinished);
    pruning().exportPruned(m_dir.filePath(QStringLiteral("pruned.onnx")));
    ASSERT_TRUE(exported.wait(kTimeoutMs));
    ASSERT_TRUE(exported.front().front().toBool())
        << m_errors.join(QLatin1Char('\n')).toStdString();
    // The float figure is the one recorded beside the committed model.
    const QString message = m_window.statusBar()->currentMessage();
    EXPECT_TRUE(message.contains(QStringLiteral("; top-1 accuracy: float 98.33 %, pruned ")))
        << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("(360 labelled)"))) << message.toStdString();
}

TEST_F(PruningGuiTest, TheDialogChecksItsFields) {
    PruningDialog dialog;
    dialog.setDenseBytes(52688);
    dialog.percentSlider().setValue(70);
    EXPECT_DOUBLE_EQ(dialog.percentBox().value(), 70.0);
    dialog.percentBox().setValue(62.5);
    EXPECT_EQ(dialog.percentSlider().value(), 63);
    // LFH with fewer random samples than it scores: refused, naming both.
    dialog.importanceBox().setCurrentIndex(0);
    dialog.samplesBox().setValue(16);
    dialog.picker().setKind(DatasetPicker::Kind::Random);
    dialog.picker().setSamples(8);
    dialog.accept();
    EXPECT_TRUE(dialog.problem().contains(QStringLiteral("16"))) << dialog.problem().toStdString();
    EXPECT_NE(dialog.result(), QDialog::Accepted);
    dialog.picker().setKind(DatasetPicker::Kind::Npy);
    dialog.picker().setPath(m_dir.filePath(QStringLiteral("missing.npy")));
    EXPECT_FALSE(dialog.request().ok());
    // l2 needs no dataset; bytes as the target.
    dialog.importanceBox().setCurrentIndex(1);
    dialog.targetKindBox().setCurrentIndex(1);
    dialog.bytesBox().setValue(40000);
    dialog.simdBox().setValue(4);
    auto request = dialog.request();
    ASSERT_TRUE(request.ok()) << request.error().toString();
    EXPECT_EQ(request->importance, pruning::ImportanceMetric::L2);
    EXPECT_FALSE(request->target.fraction);
    EXPECT_EQ(request->target.bytes(52688), 40000);
    EXPECT_EQ(request->simd, 4);
    // What the dialog gives is what the controller runs.
    dialog.setRequest(lfhRequest(4, 5));
    auto back = dialog.request();
    ASSERT_TRUE(back.ok()) << back.error().toString();
    EXPECT_EQ(back->importance, pruning::ImportanceMetric::Lfh);
    EXPECT_EQ(back->samples, 4);
    EXPECT_EQ(back->iterations, 5);
    EXPECT_DOUBLE_EQ(back->target.value, 0.8);
    EXPECT_EQ(back->dataset.randomSamples, 4);
}

} // namespace
} // namespace qs::ui
