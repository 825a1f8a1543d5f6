// Quantize ▸ Compare With… on the demo model: a setup whose /fc/Gemm weight is 4-bit rings exactly
// that badge and names the change in its tooltip and the legend; choosing the same 4 bits in the
// document makes the two sides equal (no ring); the model's QDQ export compares equal to the
// document it was exported from; a file of another model is an error dialog and the comparison
// shown before stays; Clear Comparison removes rings and legend.

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/quantization/calibration_workflow.h"
#include "core/quantization/qdq_export.h"
#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/features/compare/compare_feature.h"
#include "ui/features/compare/compare_overlay.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAction>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <fstream>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 60000;

class CompareGuiTest : public ::testing::Test {
protected:
    CompareGuiTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::RecordingReporter>(m_messages)) {}

    CompareFeature& feature() { return m_window.feature<CompareFeature>(); }

    void openDemo() {
        ASSERT_TRUE(test::openAndLayOut(
            m_window, QStringLiteral(QS_SOURCE_DIR "/resources/models/digits_cnn.onnx"),
            kTimeoutMs));
        ASSERT_TRUE(document().setQuantizationSettings({.hw = "npu"}).ok()); // 4 bits offered
        QTest::qWait(50);
    }

    GraphDocument& document() { return *m_window.session().document(); }

    /// The choice that puts the /fc/Gemm weight at 4 bits in `state`.
    static quantization::QuantizerConfigChoice
    fourBitGemm(const quantization::QuantizationState& state) {
        for (const auto& [id, point] : state.proposal.setup.quantizationPoints) {
            if (point.insertionPoint.isWeight &&
                point.insertionPoint.targetNodeName == "/fc/Gemm") {
                return quantization::configsWithBitwidth(state, {id}, 4);
            }
        }
        return {};
    }

    /// A setup JSON of the model with the /fc/Gemm weight at 4 bits.
    QString fourBitSetup() {
        auto state = quantization::computeQuantization(document().graph(), {.hw = "npu"});
        EXPECT_TRUE(state.ok());
        EXPECT_TRUE(quantization::chooseConfigs(*state, fourBitGemm(*state)).ok());
        const QString path = m_dir.filePath(QStringLiteral("gemm4.json"));
        std::ofstream(path.toStdString()) << state->setup.toJson().dump(2);
        return path;
    }

    /// The ring of the /fc/Gemm weight badge, or nullptr; its badge's tooltip in `tip`.
    const CompareHaloItem* gemmRing(QString* tip = nullptr) {
        for (const quantization::QuantizerMark& mark : document().quantizerMarks()) {
            if (mark.point.isWeight && mark.point.targetNodeName == "/fc/Gemm") {
                QuantizerBadgeItem* badge = m_window.graphPage().scene()->badge(mark.id);
                if (badge == nullptr) {
                    return nullptr;
                }
                if (tip != nullptr) {
                    *tip = badge->toolTip();
                }
                for (const QGraphicsItem* child : badge->childItems()) {
                    if (child->type() == CompareHaloItem::Type) {
                        return static_cast<const CompareHaloItem*>(child);
                    }
                }
            }
        }
        return nullptr;
    }

    QTemporaryDir m_dir;
    Settings m_settings;
    test::Messages m_messages;
    MainWindow m_window;
};

TEST_F(CompareGuiTest, ASetupWithOneFourBitWeightRingsThatBadge) {
    EXPECT_FALSE(feature().compareAction()->isEnabled());
    openDemo();
    EXPECT_TRUE(feature().compareAction()->isEnabled());
    EXPECT_FALSE(feature().clearAction()->isEnabled());
    ASSERT_TRUE(feature().compareWith(fourBitSetup()))
        << m_messages.errors.join(u'\n').toStdString();
    CompareOverlay& overlay = feature().overlay();
    ASSERT_EQ(overlay.changes().size(), 1U);
    EXPECT_EQ(overlay.changes().begin()->first, "/fc/Gemm[W]");
    EXPECT_EQ(overlay.changes().begin()->second.change, "bit width");
    EXPECT_EQ(overlay.haloCount(), 1);
    QString tip;
    const CompareHaloItem* ring = gemmRing(&tip);
    ASSERT_NE(ring, nullptr);
    EXPECT_FALSE(ring->removed());
    EXPECT_TRUE(tip.contains(QStringLiteral("gemm4.json: bit width — 4-bit"))) << tip.toStdString();
    EXPECT_TRUE(overlay.legend().isVisibleTo(m_window.graphPage().view()));
    EXPECT_TRUE(overlay.legend().text().contains(QStringLiteral("1 changed")))
        << overlay.legend().text().toStdString();
    EXPECT_TRUE(feature().clearAction()->isEnabled());

    // The same 4 bits chosen here: the sides agree, the ring goes and the tooltip is as before.
    ASSERT_TRUE(document().chooseQuantizerConfigs(fourBitGemm(*document().quantization())).ok());
    ASSERT_TRUE(QTest::qWaitFor([&] { return overlay.changes().empty(); }, kTimeoutMs));
    ASSERT_TRUE(QTest::qWaitFor([&] { return overlay.haloCount() == 0; }, kTimeoutMs));
    gemmRing(&tip);
    EXPECT_FALSE(tip.contains(QStringLiteral("gemm4.json"))) << tip.toStdString();

    feature().clearAction()->trigger();
    EXPECT_FALSE(overlay.isActive());
    EXPECT_FALSE(overlay.legend().isVisibleTo(m_window.graphPage().view()));
    EXPECT_FALSE(feature().clearAction()->isEnabled());
    EXPECT_TRUE(m_messages.errors.isEmpty());
}

TEST_F(CompareGuiTest, TheQdqExportOfTheDocumentComparesEqual) {
    openDemo();
    const quantization::QuantizationState& state = *document().quantization();
    NullProgress progress;
    runtime::DatasetRequest data;
    data.randomSamples = 4;
    auto calibrated =
        quantization::runCalibration(document().graph(), state.setup, {.dataset = data}, progress);
    ASSERT_TRUE(calibrated.ok()) << calibrated.error().toString();
    const QString path = m_dir.filePath(QStringLiteral("digits_qdq.onnx"));
    ASSERT_TRUE(quantization::exportQdqModel(document().graph(), calibrated->setup,
                                             calibrated->parameters, path.toStdString())
                    .ok());
    ASSERT_TRUE(feature().compareWith(path)) << m_messages.errors.join(u'\n').toStdString();
    EXPECT_TRUE(feature().overlay().changes().empty());
    EXPECT_EQ(feature().overlay().haloCount(), 0);
    EXPECT_TRUE(feature().overlay().legend().text().contains(QStringLiteral("0 changed")));
}

TEST_F(CompareGuiTest, AFileOfAnotherModelIsAnErrorAndTheComparisonStays) {
    openDemo();
    ASSERT_TRUE(feature().compareWith(fourBitSetup()));
    graph::GraphBuilder b(13, 8);
    b.output(b.op("Relu", "other", {b.input("x", {1, 4})}), graph::DataType::Float, {1, 4});
    const QString other = m_dir.filePath(QStringLiteral("other.onnx"));
    ASSERT_TRUE(onnx::exportModel(b.take(), other.toStdString()).ok());
    EXPECT_FALSE(feature().compareWith(other));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("not an export of this model")))
        << m_messages.errors.front().toStdString();
    EXPECT_FALSE(feature().compareWith(m_dir.filePath(QStringLiteral("missing.json"))));
    EXPECT_EQ(m_messages.errors.size(), 2);
    EXPECT_EQ(feature().overlay().changes().size(), 1U);
    EXPECT_EQ(feature().overlay().haloCount(), 1);
}

} // namespace
} // namespace qs::ui
