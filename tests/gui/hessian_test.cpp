// The Hessian feature in the main window on the offscreen platform, on the trained demo model
// (digits_cnn): Quantize ▸ Compute Hessian Scores… through the JobRunner stores per-channel scores
// of every Conv/Gemm; the Sensitivity dock lists them sorted with a log axis and a click on a bar
// selects the op in the graph; the overlay frames every scored op and shows its legend; the
// Inspector shows the score and the per-channel bars; the document's HessianCache answers a second
// request (a HAWQ or pruning dialog's) without new sweeps; a cancel stores nothing; the scores are
// saved in the session and come back with it; a rewritten dataset file marks them stale; the
// dialog refuses a missing file.

#include "core/runtime/npy.h"
#include "tests/gui/recording_reporter.h"
#include "ui/dataset_picker.h"
#include "ui/features/hessian/hessian_cache.h"
#include "ui/features/hessian/hessian_controller.h"
#include "ui/features/hessian/hessian_dialog.h"
#include "ui/features/hessian/hessian_state.h"
#include "ui/features/hessian/sensitivity_overlay.h"
#include "ui/features/hessian/sensitivity_panel.h"
#include "ui/graph_document.h"
#include "ui/graph_items.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/inspector_panel.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 120000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx");
const QString kCalibInputs =
    QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_calib_inputs.npy");

HessianJobRequest randomRequest(int64_t samples, int iterations) {
    HessianJobRequest request;
    request.dataset.randomSamples = samples;
    request.samples = samples;
    request.batch = samples;
    request.iterations = iterations;
    return request;
}

class HessianGuiTest : public ::testing::Test {
protected:
    HessianGuiTest()
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

    HessianController& hessian() const { return m_window.feature<HessianController>(); }

    void computeAndWait(const HessianJobRequest& request) {
        QSignalSpy finished(&hessian(), &HessianController::computeFinished);
        ASSERT_TRUE(hessian().compute(request));
        EXPECT_FALSE(hessian().computeAction()->isEnabled()); // one computation at a time
        ASSERT_TRUE(finished.wait(kTimeoutMs));
        ASSERT_TRUE(finished.front().front().toBool())
            << finished.front().at(1).toString().toStdString();
        EXPECT_TRUE(hessian().computeAction()->isEnabled());
    }

    QTemporaryDir m_dir;
    QStringList m_errors;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(HessianGuiTest, ScoresFillTheDockTheOverlayAndTheInspector) {
    EXPECT_TRUE(hessian().computeAction()->isEnabled());
    EXPECT_EQ(sensitivity(document()), nullptr);
    hessian().overlayAction()->setChecked(true);
    EXPECT_FALSE(hessian().overlay().legend().message().isEmpty()); // "no Hessian scores yet"
    EXPECT_EQ(hessian().overlay().haloCount(), 0);

    computeAndWait(randomRequest(4, 5));
    const SensitivityResult* result = sensitivity(document());
    ASSERT_NE(result, nullptr);
    EXPECT_FALSE(isSensitivityStale(document(), *result));
    EXPECT_EQ(result->scores.granularity, hessian::HessianScoresGranularity::PerOutputChannel);
    EXPECT_EQ(result->scores.sampleIndices.size(), 4U);
    EXPECT_EQ(result->scores.iterations, 5);
    // Every Conv and Gemm of the demo model is scored but the head, whose output is the graph's
    // (its Jacobian is the identity; the service says so in a note).
    const graph::Graph& graph = document().graph();
    size_t convsAndGemms = 0;
    for (const graph::NodeId id : graph.nodeIds()) {
        const graph::Node& node = graph.node(id);
        const bool output = std::find(graph.outputs().begin(), graph.outputs().end(),
                                      node.outputs[0]) != graph.outputs().end();
        convsAndGemms += (node.opType == "Conv" || node.opType == "Gemm") && !output ? 1 : 0;
    }
    EXPECT_EQ(result->scores.targets.size(), convsAndGemms);

    // The dock: one bar per target, largest first, and the summary names the dataset.
    const SensitivityChart& chart = hessian().panel().chart();
    ASSERT_EQ(chart.bars().size(), result->scores.targets.size());
    for (size_t i = 1; i < chart.bars().size(); ++i) {
        EXPECT_GE(chart.bars()[i - 1].score, chart.bars()[i].score);
    }
    EXPECT_GT(chart.bars().back().score, 0.0);
    EXPECT_TRUE(hessian().panel().summary().contains(QStringLiteral("random 4")))
        << hessian().panel().summary().toStdString();

    // The overlay: a frame on every scored op (all are drawn in this small model), a legend.
    QTest::qWait(0); // the overlay follows the state change queued
    ASSERT_TRUE(QTest::qWaitFor(
        [&] { return hessian().overlay().haloCount() == static_cast<int>(chart.bars().size()); },
        kTimeoutMs));
    EXPECT_TRUE(hessian().overlay().legend().message().isEmpty());
    const SensitivityHaloItem* top = hessian().overlay().halo(chart.bars().front().node);
    const SensitivityHaloItem* bottom = hessian().overlay().halo(chart.bars().back().node);
    ASSERT_NE(top, nullptr);
    ASSERT_NE(bottom, nullptr);
    EXPECT_EQ(top->color(), sensitivityColor(1.0));
    EXPECT_EQ(bottom->color(), sensitivityColor(0.0));
    EXPECT_NE(sensitivityColor(0.0), sensitivityColor(1.0));
    hessian().overlayAction()->setChecked(false);
    EXPECT_EQ(hessian().overlay().haloCount(), 0);

    // A click on the top bar selects its op in the graph, and the Inspector shows its score.
    const QString node = chart.bars().front().node;
    QTest::mouseClick(&hessian().panel().chart(), Qt::LeftButton, {}, chart.rowRect(0).center());
    ASSERT_TRUE(QTest::qWaitFor(
        [&] {
            const QList<QGraphicsItem*> selected = m_window.graphPage().scene()->selectedItems();
            return selected.size() == 1 && selected.front()->type() == NodeItem::Type &&
                   static_cast<NodeItem*>(selected.front())->content().fullName == node;
        },
        kTimeoutMs));
    const QString score = m_window.inspector().value(QStringLiteral("Sensitivity (Hessian)"),
                                                     QStringLiteral("Score"));
    ASSERT_FALSE(score.isNull()) << m_window.inspector().title().toStdString();
    EXPECT_NEAR(score.toDouble(), chart.bars().front().score, 1e-3 * chart.bars().front().score);
    const hessian::HessianTargetScores* target = result->target(node.toStdString());
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(m_window.inspector()
                  .value(QStringLiteral("Sensitivity (Hessian)"), QStringLiteral("Channels"))
                  .toULongLong(),
              target->mean().size());
}

TEST_F(HessianGuiTest, TheDocumentCacheServesLaterRequestsWithoutNewSweeps) {
    computeAndWait(randomRequest(4, 5));
    const std::shared_ptr<HessianCache> cache = hessianCache(document());
    const hessian::HessianServiceStats first = cache->stats();
    EXPECT_GT(first.sweeps, 0);
    // The same request again (the user recomputes) and a consumer asking for two of the targets
    // (as HAWQ's dialog would) are answered from the cache.
    computeAndWait(randomRequest(4, 5));
    hessian::HessianScoresRequest subset = randomRequest(4, 5).scoresRequest();
    const SensitivityResult* result = sensitivity(document());
    ASSERT_NE(result, nullptr);
    ASSERT_GE(result->scores.targets.size(), 2U);
    subset.targetNodes = {result->scores.targets[1].node, result->scores.targets[0].node};
    NullProgress progress;
    auto reused = cache->fetch(document().graph(), randomRequest(4, 5).dataset, subset, progress);
    ASSERT_TRUE(reused.ok()) << reused.error().toString();
    EXPECT_EQ(cache->stats().sweeps, first.sweeps);
    EXPECT_EQ(reused->targets[0].perSample, result->scores.targets[1].perSample);
    // Two more samples: only those are computed.
    computeAndWait(randomRequest(6, 5));
    EXPECT_EQ(cache->stats().samplesComputed, first.samplesComputed + 2);
    EXPECT_EQ(cache->fetches(), 4);
}

TEST_F(HessianGuiTest, CancelStoresNothing) {
    QSignalSpy finished(&hessian(), &HessianController::computeFinished);
    ASSERT_TRUE(hessian().compute(randomRequest(64, 100000)));
    ASSERT_TRUE(QTest::qWaitFor([&] { return m_window.jobs().isBusy(); }, kTimeoutMs));
    QTest::qWait(200);
    m_window.jobs().cancelAll();
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_FALSE(finished.front().front().toBool());
    EXPECT_TRUE(m_errors.isEmpty()); // a cancel is no error
    EXPECT_EQ(sensitivity(document()), nullptr);
    EXPECT_TRUE(hessian().computeAction()->isEnabled());
}

TEST_F(HessianGuiTest, ScoresAreSavedInTheSessionAndTurnStaleWithTheirDataset) {
    const QString npy = m_dir.filePath(QStringLiteral("calib.npy"));
    ASSERT_TRUE(QFile::copy(kCalibInputs, npy));
    HessianJobRequest request = randomRequest(3, 5);
    request.dataset = {};
    request.dataset.npyFiles = {npy.toStdString()};
    request.dataset.maxSamples = 3;
    computeAndWait(request);
    const SensitivityResult saved = *sensitivity(document());

    const QString path = m_dir.filePath(QStringLiteral("scores.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path));
    openAndWait(kDemoModel); // a fresh document without scores
    EXPECT_EQ(sensitivity(document()), nullptr);
    openAndWait(path);
    const SensitivityResult* restored = sensitivity(document());
    ASSERT_NE(restored, nullptr);
    EXPECT_FALSE(isSensitivityStale(document(), *restored));
    EXPECT_EQ(restored->dataset, saved.dataset);
    ASSERT_EQ(restored->scores.targets.size(), saved.scores.targets.size());
    EXPECT_EQ(restored->scores.targets[0].perSample, saved.scores.targets[0].perSample);
    EXPECT_EQ(hessian().panel().chart().bars().size(), saved.scores.targets.size());

    // The dataset file changes: the scores are stale, the dock and the legend say so.
    auto rows = runtime::readNpy(npy.toStdString());
    ASSERT_TRUE(rows.ok());
    QFile::remove(npy);
    ASSERT_TRUE(runtime::writeNpy(*rows, std::filesystem::path(npy.toStdString())).ok());
    std::filesystem::last_write_time(npy.toStdString(),
                                     std::filesystem::last_write_time(npy.toStdString()) +
                                         std::chrono::seconds(5));
    EXPECT_TRUE(isSensitivityStale(document(), *restored));
    hessian().panel().refresh();
    EXPECT_TRUE(hessian().panel().summary().startsWith(QStringLiteral("Stale")));
    hessian().overlayAction()->setChecked(true);
    EXPECT_TRUE(hessian().overlay().legend().message().contains(QStringLiteral("stale")));
    EXPECT_EQ(hessian().overlay().haloCount(), 0);
}

TEST_F(HessianGuiTest, DialogRefusesAMissingFile) {
    HessianDialog dialog;
    dialog.picker().setKind(DatasetPicker::Kind::Npy);
    dialog.picker().setPath(m_dir.filePath(QStringLiteral("missing.npy")));
    dialog.accept();
    EXPECT_FALSE(dialog.problem().isEmpty());
    EXPECT_NE(dialog.result(), QDialog::Accepted);
    dialog.picker().setKind(DatasetPicker::Kind::Random);
    dialog.picker().setSamples(5);
    dialog.iterationsBox().setValue(7);
    auto request = dialog.request();
    ASSERT_TRUE(request.ok()) << request.error().toString();
    EXPECT_EQ(request->dataset.randomSamples, 5);
    EXPECT_EQ(request->scoresRequest().iterations, 7);
    EXPECT_EQ(request->scoresRequest().samples, 5);
}

} // namespace
} // namespace qs::ui
