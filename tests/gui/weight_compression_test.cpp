// Weight compression in the window: the Compress Weights dialog's request, a plan applied through
// the JobRunner as one undo step (Weight Compression table and chart, INT4/INT8 badges on the
// ops), data-aware sensitivity on random samples, and File ▸ Export ▸ Weight-Compressed / FP16
// ONNX writing models that re-import and pass the checker, with a clear error on a bad path.

#include "core/graph/graph_builder.h"
#include "core/onnx/model_io.h"
#include "core/runtime/npy.h"
#include "tests/gui/test_models.h"
#include "ui/actions.h"
#include "ui/features/fp16_export/fp16_export_dialog.h"
#include "ui/features/fp16_export/fp16_export_feature.h"
#include "ui/features/weight_compression/compression_plan_state.h"
#include "ui/features/weight_compression/weight_compression_badges.h"
#include "ui/features/weight_compression/weight_compression_controller.h"
#include "ui/features/weight_compression/weight_compression_dialog.h"
#include "ui/features/weight_compression/weight_compression_panel.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/main_window.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAbstractBarSeries>
#include <QAction>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLineEdit>
#include <QMenu>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUndoStack>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 30000;
constexpr int64_t kHidden = 128;

struct Messages {
    QStringList errors;
};

class RecordingReporter final : public MessageReporter {
public:
    explicit RecordingReporter(Messages& messages)
        : m_messages(messages) {}

    void error(const QString& title, const QString& text) override {
        m_messages.errors.push_back(title + QStringLiteral(": ") + text);
    }

    void notice(const QString&, const QString&) override {}

private:
    Messages& m_messages;
};

std::vector<float> ramp(int64_t count, float scale) {
    std::vector<float> values(static_cast<size_t>(count));
    for (size_t i = 0; i < values.size(); ++i) {
        values[i] = scale * (static_cast<float>((i * 7) % 23) - 11.0F) / 11.0F;
    }
    return values;
}

/// x[batch, 4, 128] -> MatMul up -> Relu -> MatMul down -> MatMul head (the last: backup mode).
QString writeMlpModel(const QString& folder) {
    graph::GraphBuilder b(13);
    const auto x = b.input("x", {-1, 4, kHidden});
    const auto upWeights = ramp(kHidden * kHidden, 1.0F);
    const auto downWeights = ramp(kHidden * kHidden, 3.0F);
    const auto headWeights = ramp(kHidden * 16, 0.5F);
    const auto up = b.op("MatMul", "up", {x, b.weight("up.weight", {kHidden, kHidden}, upWeights)});
    const auto relu = b.op("Relu", "act", {up});
    const auto down =
        b.op("MatMul", "down", {relu, b.weight("down.weight", {kHidden, kHidden}, downWeights)});
    b.output(b.op("MatMul", "head", {down, b.weight("head.weight", {kHidden, 16}, headWeights)}));
    QString path = folder + QStringLiteral("/mlp.onnx");
    const auto written = onnx::exportModel(b.take(), path.toStdString());
    EXPECT_TRUE(written.ok()) << written.error().toString();
    return path;
}

class WeightCompressionGuiTest : public ::testing::Test {
protected:
    WeightCompressionGuiTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<RecordingReporter>(m_messages)) {}

    WeightCompressionController& controller() {
        return m_window.feature<WeightCompressionController>();
    }

    Fp16ExportFeature& fp16Export() { return m_window.feature<Fp16ExportFeature>(); }

    void openMlp() { open(writeMlpModel(m_dir.path())); }

    void open(const QString& model) {
        ASSERT_TRUE(test::openAndLayOut(m_window, model, kTimeoutMs));
    }

    bool compressAndWait(const WeightCompressionRequest& request) {
        QSignalSpy finished(&controller(), &WeightCompressionController::compressionFinished);
        controller().compress(request);
        if (!QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs)) {
            return false;
        }
        return finished.front().front().toBool();
    }

    /// Runs `start` (a weight-compressed or an FP16 export) and waits for whichever ends.
    bool exportAndWait(const std::function<void()>& start) {
        QSignalSpy compressed(&controller(), &WeightCompressionController::exportFinished);
        QSignalSpy halved(&fp16Export(), &Fp16ExportFeature::exportFinished);
        start();
        if (!QTest::qWaitFor([&] { return compressed.count() + halved.count() > 0; }, kTimeoutMs)) {
            return false;
        }
        return (compressed.isEmpty() ? halved : compressed).front().front().toBool();
    }

    QString modeOf(const QString& weight) const {
        const QTableWidget& table = m_window.feature<WeightCompressionController>().panel().table();
        for (int row = 0; row < table.rowCount(); ++row) {
            if (table.item(row, WeightCompressionPanel::WeightColumn)->text() == weight) {
                return table.item(row, WeightCompressionPanel::ModeColumn)->text();
            }
        }
        return {};
    }

    QStringList badgeLabels() {
        QStringList labels;
        for (const WeightModeBadgeItem* badge : controller().overlay().badges()) {
            labels.push_back(badge->label());
        }
        labels.sort();
        return labels;
    }

    static WeightCompressionRequest int4Request(double ratio) {
        WeightCompressionRequest request;
        request.options.mode = compression::CompressionMode::Int4Asym;
        request.options.ratio = ratio;
        return request;
    }

    QTemporaryDir m_dir;
    Messages m_messages;
    Settings m_settings;
    MainWindow m_window;
};

TEST(WeightCompressionDialog, RequestRoundTrips) {
    WeightCompressionDialog dialog;
    WeightCompressionRequest request;
    request.options.mode = compression::CompressionMode::Int4Sym;
    request.options.groupSize = 64;
    request.options.ratio = 0.7;
    request.options.groupSizeFallback = compression::GroupSizeFallback::Adjust;
    request.options.backupMode = compression::CompressionMode::Int8Sym;
    request.options.allLayers = true;
    request.options.sensitivity = compression::SensitivityMetric::MeanActivationVariance;
    request.dataset.randomSamples = 12;
    dialog.setRequest(request);
    const WeightCompressionRequest back = dialog.request().value();
    EXPECT_EQ(back.options.mode, compression::CompressionMode::Int4Sym);
    EXPECT_EQ(back.options.groupSize, 64);
    EXPECT_DOUBLE_EQ(back.options.ratio, 0.7);
    EXPECT_EQ(back.options.groupSizeFallback, compression::GroupSizeFallback::Adjust);
    EXPECT_EQ(back.options.backupMode, compression::CompressionMode::Int8Sym);
    EXPECT_TRUE(back.options.allLayers);
    EXPECT_EQ(back.options.sensitivity, compression::SensitivityMetric::MeanActivationVariance);
    EXPECT_EQ(back.dataset.randomSamples, 12);
    EXPECT_TRUE(dialog.picker().samplesBox().isEnabled());
    EXPECT_FALSE(dialog.picker().pathEdit().isEnabled());

    // Without mixing nothing is ranked: no metric, no dataset.
    dialog.ratioBox().setValue(1.0);
    EXPECT_FALSE(dialog.metricBox().isEnabled());
    const WeightCompressionRequest plain = dialog.request().value();
    EXPECT_EQ(plain.options.sensitivity, compression::SensitivityMetric::WeightQuantizationError);
    EXPECT_TRUE(plain.dataset.empty());
}

TEST(Fp16ExportDialog, ParsesBlockedOps) {
    Fp16ExportDialog dialog;
    EXPECT_TRUE(dialog.options().keepIoTypes);
    dialog.keepIoTypesBox().setChecked(false);
    dialog.blockOpsEdit().setText(QStringLiteral(" Softmax, LayerNormalization  Gelu,"));
    const compression::Fp16Options options = dialog.options();
    EXPECT_FALSE(options.keepIoTypes);
    EXPECT_EQ(options.blockedOps,
              (std::vector<std::string>{"Softmax", "LayerNormalization", "Gelu"}));
}

TEST_F(WeightCompressionGuiTest, MenuEntryRunsTheDialog) {
    openMlp();
    QSignalSpy finished(&controller(), &WeightCompressionController::compressionFinished);
    bool sawDialog = false;
    // The modal dialog's event loop runs this: choose int8_sym and accept.
    QTimer::singleShot(0, &m_window, [&] {
        auto* dialog = qobject_cast<WeightCompressionDialog*>(QApplication::activeModalWidget());
        if (dialog == nullptr) {
            return;
        }
        sawDialog = true;
        dialog->modeBox().setCurrentIndex(dialog->modeBox().findText(QStringLiteral("int8_sym")));
        dialog->accept();
    });
    controller().compressAction()->trigger();
    ASSERT_TRUE(sawDialog);
    ASSERT_TRUE(QTest::qWaitFor([&] { return finished.count() > 0; }, kTimeoutMs));
    EXPECT_TRUE(finished.front().front().toBool());
    EXPECT_EQ(modeOf(QStringLiteral("up.weight")), QStringLiteral("int8_sym"));
    EXPECT_EQ(modeOf(QStringLiteral("head.weight")), QStringLiteral("int8_sym"));
    // The File menu holds one Export ▸, shared with calibration's Quantized ONNX, with both
    // entries.
    bool listed = false;
    int exportMenus = 0;
    for (QAction* action : m_window.actions().fileMenu()->actions()) {
        exportMenus += action->menu() != nullptr &&
                       action->menu()->objectName() == QStringLiteral("exportMenu");
        if (action->menu() != nullptr &&
            action->menu()->actions().contains(controller().exportCompressedAction()) &&
            action->menu()->actions().contains(fp16Export().exportAction())) {
            listed = true;
        }
    }
    EXPECT_TRUE(listed);
    EXPECT_EQ(exportMenus, 1);
    EXPECT_TRUE(
        m_window.actions().quantizeMenu()->actions().contains(controller().compressAction()));
}

TEST_F(WeightCompressionGuiTest, ActionsFollowTheDocumentAndThePlan) {
    EXPECT_FALSE(controller().compressAction()->isEnabled());
    EXPECT_FALSE(fp16Export().exportAction()->isEnabled());
    openMlp();
    EXPECT_TRUE(controller().compressAction()->isEnabled());
    EXPECT_TRUE(fp16Export().exportAction()->isEnabled());
    EXPECT_FALSE(controller().exportCompressedAction()->isEnabled());
    ASSERT_TRUE(compressAndWait(int4Request(1.0)));
    EXPECT_TRUE(controller().exportCompressedAction()->isEnabled());
}

TEST_F(WeightCompressionGuiTest, PlanShowsInTableChartAndBadgesAndUndoes) {
    openMlp();
    ASSERT_TRUE(compressAndWait(int4Request(0.6)))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    EXPECT_TRUE(m_messages.errors.isEmpty());
    EXPECT_TRUE(controller().dock()->isVisibleTo(&m_window));
    // up (error smaller, more sensitive) stays int8; down (3x the range) goes int4; head is last.
    EXPECT_EQ(modeOf(QStringLiteral("down.weight")), QStringLiteral("int4_asym"));
    EXPECT_EQ(modeOf(QStringLiteral("up.weight")), QStringLiteral("int8_asym"));
    EXPECT_EQ(modeOf(QStringLiteral("head.weight")), QStringLiteral("int8_asym"));
    EXPECT_EQ(controller().panel().table().rowCount(), 3);

    EXPECT_EQ(badgeLabels(), QStringList({QStringLiteral("INT4"), QStringLiteral("INT8"),
                                          QStringLiteral("INT8")}));
    const GraphTheme& theme = m_window.graphPage().scene()->theme();
    for (const WeightModeBadgeItem* badge : controller().overlay().badges()) {
        EXPECT_EQ(badge->fillColor(),
                  theme.bitwidthColor(badge->label() == QStringLiteral("INT4") ? 4 : 8));
        EXPECT_EQ(badge->scene(), m_window.graphPage().scene());
    }

    // Chart: parameters per mode, int8 first: 128*128 + 128*16 int8, 128*128 int4.
    QChart& chart = controller().panel().chart();
    ASSERT_EQ(chart.series().size(), 1);
    const auto* series = qobject_cast<QAbstractBarSeries*>(chart.series().front());
    ASSERT_NE(series, nullptr);
    ASSERT_EQ(series->barSets().size(), 2);
    QBarSet* int8 = series->barSets()[0];
    QBarSet* int4 = series->barSets()[1];
    EXPECT_EQ(int8->label(), QStringLiteral("int8_asym, per-channel"));
    EXPECT_DOUBLE_EQ(int8->at(0), double(kHidden * kHidden + kHidden * 16));
    EXPECT_DOUBLE_EQ(int8->at(1), 0.0);
    EXPECT_EQ(int4->label(), QStringLiteral("int4_asym, group size 128"));
    EXPECT_DOUBLE_EQ(int4->at(1), double(kHidden * kHidden));
    EXPECT_EQ(int4->color(), GraphTheme::light().bitwidthColor(4));
    EXPECT_EQ(int8->color(), GraphTheme::light().bitwidthColor(8));

    GraphDocument* document = m_window.session().document();
    ASSERT_NE(document, nullptr);
    ASSERT_EQ(document->undoStack().count(), 1);
    document->undoStack().undo();
    EXPECT_EQ(compressionPlan(*document), nullptr);
    EXPECT_EQ(controller().panel().table().rowCount(), 0);
    EXPECT_TRUE(controller().overlay().badges().empty());
    EXPECT_FALSE(controller().exportCompressedAction()->isEnabled());
    document->undoStack().redo();
    EXPECT_EQ(controller().overlay().badges().size(), 3U);
    EXPECT_EQ(modeOf(QStringLiteral("down.weight")), QStringLiteral("int4_asym"));
}

TEST_F(WeightCompressionGuiTest, DataAwareSensitivityOnRandomSamples) {
    openMlp();
    WeightCompressionRequest request = int4Request(0.6);
    request.options.sensitivity = compression::SensitivityMetric::MaxActivationVariance;
    request.dataset.randomSamples = 4;
    ASSERT_TRUE(compressAndWait(request))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    const compression::CompressionPlan* plan = compressionPlan(*m_window.session().document());
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->options.sensitivity, compression::SensitivityMetric::MaxActivationVariance);
    for (const compression::WeightDecision& decision : plan->weights) {
        if (decision.ratioDefining) {
            EXPECT_GT(decision.activationStatistic, 0.0) << decision.valueName;
        }
    }
    // A data-aware metric without a dataset is refused with the reason.
    request.dataset = {};
    EXPECT_FALSE(compressAndWait(request));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("needs a dataset")))
        << m_messages.errors.front().toStdString();
}

TEST_F(WeightCompressionGuiTest, ExportsReimportAndPassTheChecker) {
    openMlp();
    WeightCompressionRequest request;
    request.options.mode = compression::CompressionMode::Int8Asym;
    ASSERT_TRUE(compressAndWait(request));
    const QString compressed = m_dir.filePath(QStringLiteral("mlp_int8.onnx"));
    ASSERT_TRUE(exportAndWait([&] { controller().exportCompressed(compressed); }))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    auto reimported = onnx::importModel(compressed.toStdString());
    ASSERT_TRUE(reimported.ok()) << reimported.error().toString();
    int dequantize = 0;
    for (const graph::NodeId id : reimported.value().nodeIds()) {
        dequantize += reimported.value().node(id).opType == "DequantizeLinear" ? 1 : 0;
    }
    EXPECT_EQ(dequantize, 3);
    const auto checked = onnx::checkModel(reimported.value());
    EXPECT_TRUE(checked.ok()) << checked.error().toString();

    // int4 needs opset 21 (newer than our checker): it re-imports with blocked DequantizeLinear.
    ASSERT_TRUE(compressAndWait(int4Request(1.0)));
    const QString int4 = m_dir.filePath(QStringLiteral("mlp_int4.onnx"));
    ASSERT_TRUE(exportAndWait([&] { controller().exportCompressed(int4); }));
    auto int4Model = onnx::importModel(int4.toStdString());
    ASSERT_TRUE(int4Model.ok()) << int4Model.error().toString();
    EXPECT_EQ(int4Model.value().opsetVersion(), 21);

    const QString fp16 = m_dir.filePath(QStringLiteral("mlp_fp16.onnx"));
    compression::Fp16Options options;
    options.keepIoTypes = true;
    ASSERT_TRUE(exportAndWait([&] { fp16Export().exportFp16(fp16, options); }));
    auto half = onnx::importModel(fp16.toStdString());
    ASSERT_TRUE(half.ok()) << half.error().toString();
    EXPECT_EQ(half.value().value(half.value().inputs().front()).dtype, graph::DataType::Float);
    const auto halfChecked = onnx::checkModel(half.value());
    EXPECT_TRUE(halfChecked.ok()) << halfChecked.error().toString();
    EXPECT_TRUE(m_messages.errors.isEmpty());
}

TEST_F(WeightCompressionGuiTest, ExportOnLabelledDataStatesBothAccuracies) {
    const std::string models = QS_SOURCE_DIR "/resources/models/";
    open(QString::fromStdString(models + "digits_cnn.onnx"));
    WeightCompressionRequest request;
    request.options.mode = compression::CompressionMode::Int8Asym;
    request.dataset.npyFiles = {models + "digits_test_inputs.npy"};
    request.dataset.labelsNpy = models + "digits_test_labels.npy";
    ASSERT_TRUE(compressAndWait(request))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    const QString path = m_dir.filePath(QStringLiteral("digits_int8.onnx"));
    ASSERT_TRUE(exportAndWait([&] { controller().exportCompressed(path); }))
        << m_messages.errors.join(QLatin1Char('\n')).toStdString();
    // The float figure is the one recorded beside the committed model (digits_cnn.accuracy.json).
    const QString message = m_window.statusBar()->currentMessage();
    EXPECT_TRUE(message.contains(QStringLiteral("top-1 accuracy: float 98.33 %, compressed ")))
        << message.toStdString();
    EXPECT_TRUE(message.contains(QStringLiteral("(360 labelled)"))) << message.toStdString();

    // Labels that do not fit the output are the CLI's error, and nothing is claimed written.
    const QString badLabels = m_dir.filePath(QStringLiteral("labels.npy"));
    const std::vector<int64_t> ids(360, 12);
    ASSERT_TRUE(
        runtime::writeNpy(runtime::Tensor::fromVector<int64_t>({360}, ids), badLabels.toStdString())
            .ok());
    request.dataset.labelsNpy = badLabels.toStdString();
    ASSERT_TRUE(compressAndWait(request));
    EXPECT_FALSE(exportAndWait([&] { controller().exportCompressed(path); }));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("12")))
        << m_messages.errors.front().toStdString();
}

TEST_F(WeightCompressionGuiTest, UnwritablePathIsAClearError) {
    openMlp();
    ASSERT_TRUE(compressAndWait(int4Request(1.0)));
    const QString bad = m_dir.filePath(QStringLiteral("missing-folder/out.onnx"));
    EXPECT_FALSE(exportAndWait([&] { controller().exportCompressed(bad); }));
    ASSERT_EQ(m_messages.errors.size(), 1);
    EXPECT_TRUE(m_messages.errors.front().contains(QStringLiteral("missing-folder")))
        << m_messages.errors.front().toStdString();
    EXPECT_FALSE(QFile::exists(bad));
    EXPECT_FALSE(exportAndWait([&] { fp16Export().exportFp16(bad, {}); }));
    EXPECT_EQ(m_messages.errors.size(), 2);
}

} // namespace
} // namespace qs::ui
