// Calibration in the main window on the offscreen platform: calibrating the demo model with 8
// random samples fills the range, scale, zero point and SQNR columns, the summary line with the
// output metrics, the badge tooltips and the SQNR overlay; a settings change marks the calibration
// stale (columns blank, overlay legend says so) and undo makes it fresh again; the dataset dialog
// refuses missing paths; a bad .npy file and a cancel are reported and store nothing; File ▸
// Export ▸ Quantized ONNX writes a QDQ model that imports again with the original inputs and
// outputs, and refuses clearly while uncalibrated, stale, or when the path cannot be written.

#include "core/onnx/model_io.h"
#include "core/runtime/npy.h"
#include "tests/gui/recording_reporter.h"
#include "tests/gui/test_models.h"
#include "ui/dataset_picker.h"
#include "ui/features/calibration/calibration_controller.h"
#include "ui/features/calibration/calibration_dialog.h"
#include "ui/features/calibration/calibration_state.h"
#include "ui/features/sqnr_overlay/sqnr_overlay.h"
#include "ui/features/sqnr_overlay/sqnr_overlay_feature.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/job_runner.h"
#include "ui/main_window.h"
#include "ui/message_reporter.h"
#include "ui/quantizer_commands.h"
#include "ui/quantizer_panel.h"
#include "ui/session.h"
#include "ui/settings.h"

#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace qs::ui {
namespace {

constexpr int kTimeoutMs = 60000;
const QString kDemoModel = QStringLiteral(QS_SOURCE_DIR "/resources/models/demo_cnn.onnx");

class CalibrationTest : public ::testing::Test {
protected:
    CalibrationTest()
        : m_settings(m_dir.filePath(QStringLiteral("settings.ini")))
        , m_window(m_settings, std::make_unique<test::ErrorRecorder>(m_errors)) {}

    void SetUp() override {
        m_window.openModel(kDemoModel);
        ASSERT_TRUE(QTest::qWaitFor(
            [this] {
                return !m_window.session().isOpening() && m_window.session().document() &&
                       !m_window.graphPage().isLayingOut();
            },
            kTimeoutMs));
        ASSERT_NE(document().quantization(), nullptr);
        ASSERT_TRUE(commands().calibrateAction()->isEnabled());
    }

    GraphDocument& document() const { return *m_window.session().document(); }

    CalibrationController& commands() const { return m_window.feature<CalibrationController>(); }

    SqnrOverlayFeature& sqnr() const { return m_window.feature<SqnrOverlayFeature>(); }

    /// Calibrates with `request` and waits for the job; returns whether it stored a result.
    bool calibrateAndWait(const CalibrationRequest& request) {
        QSignalSpy finished(&commands(), &CalibrationController::calibrationFinished);
        if (!commands().calibrate(request)) {
            return false;
        }
        EXPECT_TRUE(commands().isCalibrating());
        EXPECT_FALSE(commands().calibrateAction()->isEnabled());
        EXPECT_TRUE(finished.wait(kTimeoutMs));
        EXPECT_FALSE(commands().isCalibrating());
        QCoreApplication::processEvents(); // the overlay and tooltips follow queued
        return !finished.isEmpty() && finished.front().front().toBool();
    }

    static CalibrationRequest randomRequest(int64_t samples) {
        CalibrationRequest request;
        request.dataset.randomSamples = samples;
        request.dataset.batchSize = 4;
        return request;
    }

    QVariant cell(int row, int column) const {
        const QuantizerTableModel& model = m_window.quantizerPanel().model();
        return model.data(model.index(row, column), Qt::DisplayRole);
    }

    /// Rows of quantizers that have calibrated parameters (active ones, not merged away).
    std::vector<int> calibratedRows() const {
        std::vector<int> rows;
        const QuantizerTableModel& model = m_window.quantizerPanel().model();
        for (int row = 0; row < model.rowCount(); ++row) {
            if (model.markAt(row).status != quantization::QuantizerStatus::Merged) {
                rows.push_back(row);
            }
        }
        return rows;
    }

    QTemporaryDir m_dir;
    QStringList m_errors;
    Settings m_settings;
    MainWindow m_window;
};

TEST_F(CalibrationTest, RandomSamplesFillTheTableTooltipsAndOverlay) {
    ASSERT_TRUE(calibrateAndWait(randomRequest(8)))
        << m_errors.join(QLatin1Char('\n')).toStdString();
    ASSERT_TRUE(m_errors.isEmpty()) << m_errors.front().toStdString();
    const CalibrationResult* calibration = freshCalibration(document());
    ASSERT_NE(calibration, nullptr);
    EXPECT_EQ(calibration->report.samples, 8);
    EXPECT_TRUE(calibration->dataset.startsWith(QStringLiteral("random 8")))
        << calibration->dataset.toStdString();

    const std::vector<int> rows = calibratedRows();
    ASSERT_FALSE(rows.empty());
    for (int row : rows) {
        const int id = m_window.quantizerPanel().model().markAt(row).id;
        ASSERT_TRUE(calibration->parameters.count(id)) << "quantizer #" << id;
        const QVariant low = cell(row, QuantizerTableModel::Low);
        const QVariant high = cell(row, QuantizerTableModel::High);
        ASSERT_TRUE(low.isValid() && high.isValid()) << "row " << row;
        EXPECT_LT(low.toDouble(), high.toDouble()) << "row " << row;
        EXPECT_FALSE(cell(row, QuantizerTableModel::Scale).toString().isEmpty());
        EXPECT_FALSE(cell(row, QuantizerTableModel::ZeroPoint).toString().isEmpty());
        if (!calibration->parameters.at(id).isPerChannel()) { // one positive scale
            EXPECT_GT(cell(row, QuantizerTableModel::Scale).toDouble(), 0.0) << "row " << row;
        } else { // a channel count
            EXPECT_TRUE(cell(row, QuantizerTableModel::Scale)
                            .toString()
                            .contains(QStringLiteral("channel")));
        }
        EXPECT_TRUE(cell(row, QuantizerTableModel::Sqnr).toString().endsWith(QStringLiteral("dB")))
            << cell(row, QuantizerTableModel::Sqnr).toString().toStdString();
    }
    const QString summary = m_window.quantizerPanel().calibrationSummary();
    EXPECT_TRUE(summary.contains(QStringLiteral("random 8"))) << summary.toStdString();
    EXPECT_TRUE(summary.contains(QStringLiteral("cosine"))) << summary.toStdString();

    // Tooltips carry the parameters whether or not the overlay is on.
    const QuantizerBadgeItem* badge =
        m_window.graphPage().scene()->badge(m_window.quantizerPanel().model().markAt(rows[0]).id);
    ASSERT_NE(badge, nullptr);
    EXPECT_TRUE(badge->toolTip().contains(QStringLiteral("scale")))
        << badge->toolTip().toStdString();
    EXPECT_TRUE(badge->toolTip().contains(QStringLiteral("SQNR")));

    EXPECT_EQ(sqnr().overlay().haloCount(), 0);
    sqnr().overlayAction()->setChecked(true);
    EXPECT_EQ(sqnr().overlay().haloCount(),
              static_cast<int>(calibration->report.quantizers.size()));
    EXPECT_TRUE(sqnr().overlay().legend().isVisibleTo(&m_window));
    EXPECT_TRUE(sqnr().overlay().legend().message().isEmpty());
    sqnr().overlayAction()->setChecked(false);
    EXPECT_EQ(sqnr().overlay().haloCount(), 0);
    EXPECT_FALSE(sqnr().overlay().legend().isVisibleTo(&m_window));
}

TEST_F(CalibrationTest, ASettingsChangeMakesTheCalibrationStaleUntilUndone) {
    ASSERT_TRUE(calibrateAndWait(randomRequest(8)));
    sqnr().overlayAction()->setChecked(true);
    const int halos = sqnr().overlay().haloCount();
    ASSERT_GT(halos, 0);

    quantization::QuantizationSettings mixed = document().quantization()->settings;
    mixed.preset = quantization::QuantizationPreset::Mixed;
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), mixed));
    QCoreApplication::processEvents(); // the overlay follows queued, after the badges
    EXPECT_TRUE(isCalibrationStale(document()));
    EXPECT_EQ(freshCalibration(document()), nullptr);
    for (int row : calibratedRows()) {
        EXPECT_FALSE(cell(row, QuantizerTableModel::Sqnr).isValid()) << "row " << row;
        EXPECT_FALSE(cell(row, QuantizerTableModel::Scale).isValid()) << "row " << row;
    }
    EXPECT_TRUE(m_window.quantizerPanel().calibrationSummary().contains(QStringLiteral("stale")));
    EXPECT_EQ(sqnr().overlay().haloCount(), 0);
    EXPECT_TRUE(sqnr().overlay().legend().message().contains(QStringLiteral("stale")));

    document().undoStack().undo();
    QCoreApplication::processEvents();
    EXPECT_FALSE(isCalibrationStale(document()));
    EXPECT_NE(freshCalibration(document()), nullptr);
    EXPECT_EQ(sqnr().overlay().haloCount(), halos);
    EXPECT_TRUE(cell(calibratedRows().front(), QuantizerTableModel::Sqnr).isValid());
}

TEST_F(CalibrationTest, AChangeDuringTheJobLeavesTheResultStale) {
    QSignalSpy finished(&commands(), &CalibrationController::calibrationFinished);
    ASSERT_TRUE(commands().calibrate(randomRequest(8)));
    quantization::QuantizationSettings mixed = document().quantization()->settings;
    mixed.preset = quantization::QuantizationPreset::Mixed;
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), mixed));
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_TRUE(finished.front().front().toBool());
    ASSERT_NE(calibration(document()), nullptr); // kept, for the setup it was made for
    EXPECT_TRUE(isCalibrationStale(document()));
    document().undoStack().undo(); // back to that setup: fresh
    EXPECT_NE(freshCalibration(document()), nullptr);
}

TEST_F(CalibrationTest, ABadNpyFileIsReportedAndStoresNothing) {
    const QString path = m_dir.filePath(QStringLiteral("bad.npy"));
    QFile file(path);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("not a numpy file");
    file.close();
    CalibrationRequest request;
    request.dataset.npyFiles = {path.toStdString()};
    EXPECT_FALSE(calibrateAndWait(request));
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("bad.npy")))
        << m_errors.front().toStdString();
    EXPECT_EQ(calibration(document()), nullptr);
    EXPECT_TRUE(commands().calibrateAction()->isEnabled());
}

TEST_F(CalibrationTest, CancelStoresNothing) {
    QSignalSpy finished(&commands(), &CalibrationController::calibrationFinished);
    ASSERT_TRUE(commands().calibrate(randomRequest(400)));
    m_window.jobs().cancelAll();
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_FALSE(finished.front().front().toBool());
    EXPECT_TRUE(m_errors.isEmpty()); // a cancel is no error
    EXPECT_EQ(calibration(document()), nullptr);
    EXPECT_TRUE(commands().calibrateAction()->isEnabled());
}

TEST_F(CalibrationTest, ExportWritesAQdqModelThatImportsAgain) {
    const QString path = m_dir.filePath(QStringLiteral("demo.qdq.onnx"));
    EXPECT_FALSE(commands().exportQuantized(path)); // not calibrated
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("not calibrated")))
        << m_errors.front().toStdString();
    EXPECT_FALSE(QFile::exists(path));

    ASSERT_TRUE(calibrateAndWait(randomRequest(8)));
    QSignalSpy finished(&commands(), &CalibrationController::exportFinished);
    ASSERT_TRUE(commands().exportQuantized(path));
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    ASSERT_TRUE(finished.front().front().toBool())
        << finished.front().back().toString().toStdString();
    ASSERT_EQ(m_errors.size(), 1);

    auto exported = onnx::importModel(QFile::encodeName(path).toStdString());
    ASSERT_TRUE(exported.ok()) << exported.error().toString();
    size_t quantizeLinear = 0;
    size_t dequantizeLinear = 0;
    for (const graph::NodeId id : exported->nodeIds()) {
        const graph::Node& node = exported->node(id);
        quantizeLinear += node.opType == "QuantizeLinear" ? 1 : 0;
        dequantizeLinear += node.opType == "DequantizeLinear" ? 1 : 0;
    }
    const CalibrationResult& calibration = *freshCalibration(document());
    EXPECT_GT(quantizeLinear, 0U);
    EXPECT_EQ(dequantizeLinear, calibration.parameters.size()); // one per activation and weight
    const graph::Graph& original = document().graph();
    ASSERT_EQ(exported->outputs().size(), original.outputs().size());
    for (size_t i = 0; i < original.outputs().size(); ++i) {
        EXPECT_EQ(exported->value(exported->outputs()[i]).name,
                  original.value(original.outputs()[i]).name);
    }
}

TEST_F(CalibrationTest, ExportRefusesAStaleCalibrationAndAnUnwritablePath) {
    ASSERT_TRUE(calibrateAndWait(randomRequest(8)));
    QSignalSpy finished(&commands(), &CalibrationController::exportFinished);
    const QString unwritable = m_dir.filePath(QStringLiteral("no/such/folder/model.onnx"));
    ASSERT_TRUE(commands().exportQuantized(unwritable));
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_FALSE(finished.front().front().toBool());
    ASSERT_EQ(m_errors.size(), 1);
    EXPECT_TRUE(m_errors.front().contains(QStringLiteral("folder")))
        << m_errors.front().toStdString();
    EXPECT_TRUE(commands().exportQuantizedAction()->isEnabled());

    quantization::QuantizationSettings mixed = document().quantization()->settings;
    mixed.preset = quantization::QuantizationPreset::Mixed;
    document().undoStack().push(new ChangeQuantizationSettingsCommand(document(), mixed));
    const QString path = m_dir.filePath(QStringLiteral("stale.onnx"));
    EXPECT_FALSE(commands().exportQuantized(path));
    ASSERT_EQ(m_errors.size(), 2);
    EXPECT_TRUE(m_errors.back().contains(QStringLiteral("stale"))) << m_errors.back().toStdString();
    EXPECT_FALSE(QFile::exists(path));
}

TEST(CalibrationWindowTest, ClosingTheWindowDuringACalibrationWaitsAndAppliesNothing) {
    QTemporaryDir dir;
    Settings settings(dir.filePath(QStringLiteral("settings.ini")));
    QStringList errors;
    auto window =
        std::make_unique<MainWindow>(settings, std::make_unique<test::ErrorRecorder>(errors));
    QSignalSpy finished(&window->feature<CalibrationController>(),
                        &CalibrationController::calibrationFinished);
    window->feature<CalibrationController>().calibrateOnOpen(400);
    window->openModel(kDemoModel);
    ASSERT_TRUE(QTest::qWaitFor(
        [&] { return window->feature<CalibrationController>().isCalibrating(); }, kTimeoutMs));
    window.reset(); // cancels and waits for the job; its result is not applied to a dead window
    EXPECT_TRUE(finished.isEmpty());
    EXPECT_TRUE(errors.isEmpty());
}

TEST(CalibrationWindowTest, LabelledDataShowsFloatAndQuantizedAccuracy) {
    // The trained demo model on its labelled held-out split: the summary over the Quantizers
    // table and the status line state both accuracies; bad label ids fail the calibration.
    const QString models = QStringLiteral(QS_SOURCE_DIR "/resources/models/");
    QTemporaryDir dir;
    Settings settings(dir.filePath(QStringLiteral("settings.ini")));
    QStringList errors;
    MainWindow window(settings, std::make_unique<test::ErrorRecorder>(errors));
    window.openModel(models + QStringLiteral("digits_cnn.onnx"));
    ASSERT_TRUE(QTest::qWaitFor(
        [&] { return !window.session().isOpening() && window.session().document(); }, kTimeoutMs));
    CalibrationController& calibration = window.feature<CalibrationController>();
    CalibrationRequest request;
    request.dataset.npyFiles = {(models + QStringLiteral("digits_test_inputs.npy")).toStdString()};
    request.dataset.labelsNpy = (models + QStringLiteral("digits_test_labels.npy")).toStdString();
    request.dataset.maxSamples = 360;
    QSignalSpy finished(&calibration, &CalibrationController::calibrationFinished);
    ASSERT_TRUE(calibration.calibrate(request));
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    ASSERT_TRUE(finished.front().front().toBool())
        << finished.front().at(1).toString().toStdString();
    const QString summary = window.quantizerPanel().calibrationSummary();
    EXPECT_TRUE(summary.contains(QStringLiteral("top-1 accuracy: float 98.33 %, quantized")))
        << summary.toStdString();
    EXPECT_TRUE(summary.contains(QStringLiteral("(360 labelled)"))) << summary.toStdString();

    // The QDQ export of that calibration states the accuracy of what it wrote.
    QSignalSpy exported(&calibration, &CalibrationController::exportFinished);
    ASSERT_TRUE(calibration.exportQuantized(dir.filePath(QStringLiteral("digits.qdq.onnx"))));
    ASSERT_TRUE(exported.wait(kTimeoutMs));
    ASSERT_TRUE(exported.front().front().toBool());
    const QString saved = window.statusBar()->currentMessage();
    EXPECT_TRUE(saved.contains(QStringLiteral("; top-1 accuracy: float 98.33 %, quantized")))
        << saved.toStdString();

    auto labels = runtime::readNpy(request.dataset.labelsNpy);
    ASSERT_TRUE(labels.ok());
    labels->mutableData<int64_t>()[5] = 10;
    const std::string bad = dir.filePath(QStringLiteral("bad.npy")).toStdString();
    ASSERT_TRUE(runtime::writeNpy(*labels, bad).ok());
    request.dataset.labelsNpy = bad;
    finished.clear();
    ASSERT_TRUE(calibration.calibrate(request));
    ASSERT_TRUE(finished.wait(kTimeoutMs));
    EXPECT_FALSE(finished.front().front().toBool());
    ASSERT_EQ(errors.size(), 1);
    EXPECT_TRUE(errors.front().contains(QStringLiteral("label 10 of sample 5")))
        << errors.front().toStdString();
}

TEST(CalibrationDialogTest, AsksForAnExistingPath) {
    QTemporaryDir dir;
    CalibrationDialog dialog;
    DatasetPicker& picker = dialog.picker();
    picker.setKind(DatasetPicker::Kind::ImageFolder);
    auto request = dialog.request();
    ASSERT_FALSE(request.ok());
    EXPECT_EQ(request.error().message(), "choose a folder of images");
    dialog.accept();
    EXPECT_EQ(dialog.result(), QDialog::Rejected);
    EXPECT_EQ(dialog.problem().toStdString(), "choose a folder of images");

    picker.setKind(DatasetPicker::Kind::Npy);
    picker.setPath(dir.filePath(QStringLiteral("missing.npy")));
    request = dialog.request();
    ASSERT_FALSE(request.ok());
    EXPECT_NE(request.error().message().find("missing.npy"), std::string::npos);

    picker.setKind(DatasetPicker::Kind::ImageFolder);
    picker.setPath(dir.path());
    picker.setSamples(50);
    picker.setBatchSize(5);
    request = dialog.request();
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(request->dataset.imagesDir, dir.path().toStdString());
    EXPECT_EQ(request->dataset.maxSamples, 50);
    EXPECT_EQ(request->dataset.batchSize.value_or(0), 5);
    // The range estimator goes into the core workflow's request, as --range-estimator does.
    EXPECT_EQ(request->estimator, quantization::RangeEstimator::Nncf);
    dialog.estimatorBox().setCurrentIndex(
        dialog.estimatorBox().findData(static_cast<int>(quantization::RangeEstimator::MinMax)));
    dialog.setBatchSize(0);
    request = dialog.request();
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(request->estimator, quantization::RangeEstimator::MinMax);
    EXPECT_FALSE(request->dataset.batchSize.has_value()); // Auto: the one batch-size rule

    picker.setKind(DatasetPicker::Kind::Random);
    request = dialog.request();
    ASSERT_TRUE(request.ok());
    EXPECT_EQ(request->dataset.randomSamples, 50);
    EXPECT_TRUE(request->dataset.imagesDir.empty());
}

TEST(DatasetPickerTest, OffersLabelsAndClassFoldersAndRoundTrips) {
    QTemporaryDir dir;
    const QString labels = test::writeFile(dir.path(), QStringLiteral("labels.npy"), "x");
    const QString samples = test::writeFile(dir.path(), QStringLiteral("samples.npy"), "x");
    DatasetPicker picker(
        {.allowNone = true, .defaultSamples = 32, .defaultBatch = 0, .autoBatch = true});
    EXPECT_EQ(picker.kindBox().count(), 5); // none, random, .npy, images, class subfolders
    picker.setKind(DatasetPicker::Kind::None);
    runtime::DatasetRequest source;
    ASSERT_TRUE(picker.applyTo(source).ok());
    EXPECT_TRUE(source.empty());
    EXPECT_FALSE(picker.pathEdit().isEnabled());

    // Labels go with a .npy file or a flat image folder.
    picker.setKind(DatasetPicker::Kind::Npy);
    picker.setPath(samples);
    picker.setLabelsPath(labels);
    EXPECT_TRUE(picker.labelsEdit().isEnabled());
    ASSERT_TRUE(picker.applyTo(source).ok());
    EXPECT_EQ(source.npyFiles, std::vector<std::string>{samples.toStdString()});
    EXPECT_EQ(picker.labelsPath(), labels);
    EXPECT_EQ(source.labelsNpy, labels.toStdString());
    picker.setLabelsPath(dir.filePath(QStringLiteral("no-labels.npy")));
    const Result<void> missing = picker.applyTo(source);
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("no-labels.npy"), std::string::npos);

    // Class subfolders carry their labels in the folder names: no labels file.
    picker.setKind(DatasetPicker::Kind::ClassFolders);
    picker.setPath(dir.path());
    EXPECT_FALSE(picker.labelsEdit().isEnabled());
    ASSERT_TRUE(picker.applyTo(source).ok());
    EXPECT_EQ(source.classesDir, dir.path().toStdString());
    EXPECT_EQ(source.kind(), runtime::DatasetKind::ClassFolders);
    EXPECT_TRUE(source.npyFiles.empty());
    EXPECT_TRUE(source.labelsNpy.empty());
    EXPECT_FALSE(source.batchSize.has_value());
    EXPECT_TRUE(picker.labelsPath().isEmpty());
    EXPECT_EQ(picker.batchSize(), 0);
    EXPECT_EQ(picker.batchBox().text(), QStringLiteral("automatic"));

    DatasetPicker shown({});
    shown.showSource(source);
    EXPECT_EQ(shown.kind(), DatasetPicker::Kind::ClassFolders);
    EXPECT_EQ(shown.path(), dir.path());
}

} // namespace
} // namespace qs::ui
