// HAWQ in the main window on the offscreen platform: a run on the digits model (NPU, random
// samples) fills the Pareto explorer and applies the chosen bits as one undo step (the HW config
// switch included); the ratio re-selects instantly without a job; a click on a point applies it;
// undo restores the setup; a re-run with the same samples reuses the traces.

#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/features/hawq/hawq_controller.h"
#include "ui/features/hawq/hawq_state.h"
#include "ui/features/hawq/pareto_explorer.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QDockWidget>
#include <QSignalSpy>
#include <QSlider>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 120000;
const QString kDigits = QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx");

class HawqTest : public ::testing::Test {
protected:
    HawqTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::ErrorRecorder>(m_errors)) {}

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
