// HAWQ in the main window on the offscreen platform: a run on the digits model (NPU, random
// samples) fills the Pareto explorer and applies the chosen bits as one undo step (the HW config
// switch included); the ratio re-selects instantly without a job; a click on a point applies it;
// undo restores the setup; a re-run with the same samples reuses the traces; hovering a point (or
// dragging the slider) previews its bits on the graph badges without touching the undo stack; a
// saved session brings the explorer back with its chosen point and no HAWQ job, and a section
// saved for another model comes back stale.

#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/autosave.h"
#include "ui/features/hawq/hawq_controller.h"
#include "ui/features/hawq/hawq_state.h"
#include "ui/features/hawq/pareto_explorer.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/session_controller.h"
#include "ui/settings.h"

#include <QApplication>
#include <QDockWidget>
#include <QFile>
#include <QMouseEvent>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 120000;
const QString kDigits = QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx");

class HawqTest : public ::testing::Test {
protected:
    HawqTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::ErrorRecorder>(m_errors)) {
        m_window.sessions().autosaver().setDirectory(m_dir.filePath(QStringLiteral("autosave")));
    }

    ~HawqTest() override { m_window.sessions().autosaver().discard(); }

    /// Opens `path` (a model or a session) and waits for the document and its layout.
    void openAndWait(const QString& path) {
        m_window.openModel(path);
        ASSERT_TRUE(QTest::qWaitFor(
            [this] {
                return !m_window.session().isOpening() && m_window.session().document() &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs));
    }

    void SetUp() override {
        m_window.openModel(kDigits);
        ASSERT_TRUE(QTest::qWaitFor(
            [this] {
                return !m_window.session().isOpening() && m_window.session().document() &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs));
        ASSERT_NE(document().quantization(), nullptr);
        ASSERT_TRUE(hawq().hawqAction()->isEnabled());
    }

    GraphDocument& document() const { return *m_window.session().document(); }

    HawqController& hawq() const { return m_window.feature<HawqController>(); }

    mixed_precision::HawqRequest request() const {
        mixed_precision::HawqRequest request;
        request.settings.hw = "npu";
        request.compressionRatio = 1.4;
        request.dataset.randomSamples = 4;
        request.samples = 4;
        request.iterations = 10;
        return request;
    }

    void runAndWait() {
        QSignalSpy finished(&hawq(), &HawqController::hawqFinished);
        ASSERT_TRUE(hawq().run(request()));
        ASSERT_TRUE(finished.wait(kTimeoutMs));
        ASSERT_TRUE(finished.front().at(0).toBool())
            << finished.front().at(1).toString().toStdString();
    }

    /// The weight bits of the document's setup, in the HAWQ problem's layer order.
    std::vector<int> documentWeightBits() const {
        const HawqState* state = document().state<HawqState>(kHawqKey);
        std::vector<int> bits;
        for (const auto& layer : state->outcome->analysis.problem.layers) {
            bits.push_back(document()
                               .quantization()
                               ->setup.quantizationPoints.at(layer.weightQp)
                               .qconfig.numBits);
        }
        return bits;
    }

    /// Layer l's badge previews, nullopt where a badge shows no preview; badges must exist.
    std::vector<std::optional<int>> previewedWeightBits() const {
        const HawqState* state = document().state<HawqState>(kHawqKey);
        std::vector<std::optional<int>> bits;
        for (const auto& layer : state->outcome->analysis.problem.layers) {
            const QuantizerBadgeItem* badge = m_window.graphPage().scene()->badge(layer.weightQp);
            EXPECT_NE(badge, nullptr) << layer.node;
            bits.push_back(badge == nullptr ? std::nullopt : badge->previewBits());
        }
        return bits;
    }

    /// The bit widths the weight badges show as their content (the setup's).
    std::vector<int> badgeWeightBits() const {
        const HawqState* state = document().state<HawqState>(kHawqKey);
        std::vector<int> bits;
        for (const auto& layer : state->outcome->analysis.problem.layers) {
            const QuantizerBadgeItem* badge = m_window.graphPage().scene()->badge(layer.weightQp);
            bits.push_back(badge == nullptr ? -1 : badge->content().bits);
        }
        return bits;
    }

    /// A mouse move over `widget` (QTest::mouseMove needs a window under the cursor).
    static void moveMouse(QWidget& widget, QPointF at) {
        QMouseEvent move(QEvent::MouseMove, at, widget.mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                         Qt::NoModifier);
        QApplication::sendEvent(&widget, &move);
    }

    bool anyPreview() const {
        for (const QuantizerBadgeItem* badge : m_window.graphPage().scene()->badgeItems()) {
            if (badge->previewBits()) {
                return true;
            }
        }
        return false;
    }

    QTemporaryDir m_dir;
    QStringList m_errors;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(HawqTest, RunFillsTheExplorerAndAppliesAsOneUndoStep) {
    const int undoBefore = document().undoStack().count();
    const std::string hwBefore = document().quantization()->settings.hw;
    ASSERT_NE(hwBefore, "npu");
    runAndWait();
    const HawqState* state = document().state<HawqState>(kHawqKey);
    ASSERT_NE(state, nullptr);
    ASSERT_TRUE(state->outcome);
    const auto& analysis = state->outcome->analysis;
    EXPECT_EQ(hawq().explorer().selected(), state->outcome->chosen);
    EXPECT_GE(analysis.candidates[state->selected].ratio, 1.4);
    EXPECT_EQ(document().quantization()->settings.hw, "npu");
    EXPECT_EQ(documentWeightBits(), analysis.candidates[state->selected].weightBits);
    EXPECT_EQ(document().undoStack().count(), undoBefore + 1); // settings + choices, one step
    EXPECT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    document().undoStack().undo();
    EXPECT_EQ(document().quantization()->settings.hw, hwBefore);
}

TEST_F(HawqTest, RatioReselectsInstantlyAndAClickApplies) {
    runAndWait();
    const HawqState* state = document().state<HawqState>(kHawqKey);
    const auto& analysis = state->outcome->analysis;
    ParetoExplorer& explorer = hawq().explorer();
    int jobs = 0;
    QObject::connect(&m_window.jobs(), &JobRunner::jobStarted, [&jobs] { ++jobs; });
    // The highest ratio selects the most compressed front point, with no job.
    double highest = 0.0;
    for (const size_t i : analysis.pareto) {
        highest = std::max(highest, analysis.candidates[i].ratio);
    }
    ASSERT_TRUE(explorer.setTargetRatio(highest));
    EXPECT_EQ(jobs, 0);
    const size_t reselected = explorer.selected();
    EXPECT_DOUBLE_EQ(analysis.candidates[reselected].ratio, highest);
    EXPECT_FALSE(explorer.setTargetRatio(highest * 10.0)); // out of range: NNCF's message shown
    // A click on the point applies it as one undo step.
    const int undoBefore = document().undoStack().count();
    explorer.resize(700, 400);
    explorer.show();
    QTest::qWait(50);
    const QPointF at = explorer.plot().pointOf(reselected);
    QTest::mouseClick(&explorer.plot(), Qt::LeftButton, {}, at.toPoint());
    EXPECT_EQ(document().undoStack().count(), undoBefore + 1);
    EXPECT_EQ(state->selected, explorer.plot().candidateAt(at).value());
    EXPECT_EQ(documentWeightBits(), analysis.candidates[state->selected].weightBits);
    document().undoStack().undo();
    EXPECT_EQ(documentWeightBits(), analysis.candidates[state->outcome->chosen].weightBits);
}

TEST_F(HawqTest, HoverAndSliderDragPreviewBitsOnTheBadgesWithoutAnUndoStep) {
    runAndWait();
    const HawqState* state = document().state<HawqState>(kHawqKey);
    const auto& analysis = state->outcome->analysis;
    ParetoExplorer& explorer = hawq().explorer();
    explorer.resize(700, 400);
    explorer.show();
    QTest::qWait(50);
    const std::vector<int> applied = documentWeightBits();
    ASSERT_EQ(badgeWeightBits(), applied);
    const int undoBefore = document().undoStack().count();
    // A point whose bits differ from the applied ones, hovered with the mouse.
    std::optional<size_t> other;
    for (size_t i = 0; i < analysis.candidates.size() && !other; ++i) {
        const QPointF at = explorer.plot().pointOf(i);
        const std::optional<size_t> picked = explorer.plot().candidateAt(at);
        if (picked && analysis.candidates[*picked].weightBits != applied) {
            other = picked;
        }
    }
    ASSERT_TRUE(other.has_value());
    moveMouse(explorer.plot(), explorer.plot().pointOf(*other));
    std::vector<std::optional<int>> expected(analysis.candidates[*other].weightBits.begin(),
                                             analysis.candidates[*other].weightBits.end());
    EXPECT_EQ(previewedWeightBits(), expected);
    // Only a preview: the badges' content, the setup and the undo stack stay.
    EXPECT_EQ(badgeWeightBits(), applied);
    EXPECT_EQ(documentWeightBits(), applied);
    EXPECT_EQ(document().undoStack().count(), undoBefore);
    // The hover ends (off the points, or out of the plot): every badge is itself again.
    moveMouse(explorer.plot(), QPointF(2, 2));
    EXPECT_FALSE(anyPreview());
    moveMouse(explorer.plot(), explorer.plot().pointOf(*other));
    EXPECT_TRUE(anyPreview());
    QEvent leave(QEvent::Leave);
    QApplication::sendEvent(&explorer.plot(), &leave);
    EXPECT_FALSE(anyPreview());
    EXPECT_EQ(document().undoStack().count(), undoBefore);

    // Dragging the slider previews the re-selected point; the release applies it (one step) and
    // ends the preview.
    QSlider& slider = explorer.slider();
    slider.setSliderDown(true);
    slider.setValue(slider.value() == slider.maximum() ? slider.minimum() : slider.maximum());
    const size_t dragged = explorer.selected();
    std::vector<std::optional<int>> draggedBits(analysis.candidates[dragged].weightBits.begin(),
                                                analysis.candidates[dragged].weightBits.end());
    EXPECT_EQ(previewedWeightBits(), draggedBits);
    EXPECT_EQ(document().undoStack().count(), undoBefore);
    slider.setSliderDown(false);
    EXPECT_FALSE(anyPreview());
    EXPECT_EQ(document().undoStack().count(), undoBefore + 1);
    EXPECT_EQ(documentWeightBits(), analysis.candidates[dragged].weightBits);
    EXPECT_EQ(badgeWeightBits(), analysis.candidates[dragged].weightBits);
    EXPECT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
}

TEST_F(HawqTest, SessionRestoresTheExplorerAndItsPointWithoutRecomputing) {
    runAndWait();
    const auto original = document().state<HawqState>(kHawqKey)->outcome;
    const auto& analysis = original->analysis;
    // Another point of the front than the run's choice, applied.
    size_t picked = original->chosen;
    for (const size_t i : analysis.pareto) {
        if (analysis.candidates[i].weightBits != analysis.candidates[original->chosen].weightBits) {
            picked = i;
            break;
        }
    }
    ASSERT_NE(picked, original->chosen);
    ASSERT_TRUE(hawq().applyCandidate(picked));
    const std::vector<int> applied = documentWeightBits();
    const QString path = m_dir.filePath(QStringLiteral("hawq.qscope"));
    ASSERT_TRUE(m_window.sessions().saveSessionTo(path))
        << m_errors.join(QLatin1Char('\n')).toStdString();

    // Another model, then the session: the explorer is back, no HAWQ job ran.
    openAndWait(test::writeConvReluModel(m_dir.path()));
    EXPECT_EQ(document().state<HawqState>(kHawqKey), nullptr);
    EXPECT_EQ(hawq().explorer().plot().candidateAt({0, 0}), std::nullopt);
    QStringList jobs;
    QObject::connect(&m_window.jobs(), &JobRunner::jobStarted,
                     [&jobs](const QString& title) { jobs << title; });
    openAndWait(path);
    ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    for (const QString& title : jobs) {
        EXPECT_FALSE(title.startsWith(QStringLiteral("HAWQ"))) << title.toStdString();
    }
    const HawqState* state = document().state<HawqState>(kHawqKey);
    ASSERT_NE(state, nullptr);
    ASSERT_TRUE(state->outcome);
    EXPECT_FALSE(state->stale);
    EXPECT_FALSE(hawq().explorer().isStale());
    const auto& restored = state->outcome->analysis;
    EXPECT_EQ(restored.candidates, analysis.candidates);
    EXPECT_EQ(restored.pareto, analysis.pareto);
    EXPECT_EQ(restored.traceOrder, analysis.traceOrder);
    EXPECT_EQ(restored.avgTraces, analysis.avgTraces);
    EXPECT_EQ(restored.perturbations, analysis.perturbations);
    EXPECT_EQ(state->outcome->chosen, original->chosen);
    EXPECT_EQ(state->selected, picked);
    EXPECT_EQ(hawq().explorer().selected(), picked);
    EXPECT_EQ(documentWeightBits(), applied); // the quantization section's choices
    EXPECT_EQ(document().quantization()->settings.hw, "npu");
    // The restored explorer re-selects and applies as after a run.
    const int undoBefore = document().undoStack().count();
    ASSERT_TRUE(hawq().applyCandidate(original->chosen));
    EXPECT_EQ(document().undoStack().count(), undoBefore + 1);
    EXPECT_EQ(documentWeightBits(), analysis.candidates[original->chosen].weightBits);

    // A section saved for another version of the model comes back stale and cannot be applied.
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    nlohmann::json json = nlohmann::json::parse(file.readAll().toStdString());
    file.close();
    json["sections"]["hawq"]["model_hash"] = "fnv1a64:0000000000000000";
    ASSERT_TRUE(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(QByteArray::fromStdString(json.dump()));
    file.close();
    openAndWait(test::writeConvReluModel(m_dir.path()));
    openAndWait(path);
    ASSERT_TRUE(m_errors.isEmpty()) << m_errors.join(QLatin1Char('\n')).toStdString();
    const HawqState* stale = document().state<HawqState>(kHawqKey);
    ASSERT_NE(stale, nullptr);
    EXPECT_TRUE(stale->stale);
    EXPECT_TRUE(hawq().explorer().isStale());
    EXPECT_FALSE(hawq().applyCandidate(original->chosen));
    EXPECT_EQ(m_errors.size(), 1);
    m_errors.clear();
}

TEST_F(HawqTest, ReRunWithTheSameSamplesReusesTheTraces) {
    runAndWait();
    const std::vector<double> first =
        document().state<HawqState>(kHawqKey)->outcome->analysis.avgTraces;
    const auto firstOutcome = document().state<HawqState>(kHawqKey)->outcome;
    runAndWait();
    const auto second = document().state<HawqState>(kHawqKey)->outcome;
    EXPECT_NE(second, firstOutcome);
    EXPECT_EQ(second->analysis.avgTraces, first);
    EXPECT_LT(second->timings.tracesSeconds, firstOutcome->timings.tracesSeconds);
}

} // namespace
} // namespace qs::ui
