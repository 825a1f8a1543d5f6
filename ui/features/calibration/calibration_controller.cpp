#include "ui/features/calibration/calibration_controller.h"

#include "core/quantization/qdq_export.h"
#include "core/report/calibration_report.h"
#include "ui/accuracy_text.h"
#include "ui/actions.h"
#include "ui/features/calibration/calibration_dialog.h"
#include "ui/features/calibration/calibration_state.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/session.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QStatusBar>

#include <filesystem>
#include <memory>
#include <utility>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 8000;
} // namespace

CalibrationController::CalibrationController(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context) {
    connect(&m_context.session, &Session::documentChanged, this,
            &CalibrationController::onDocumentChanged);
}

CalibrationController::~CalibrationController() = default;

QString CalibrationController::key() const {
    return kCalibrationKey;
}

void CalibrationController::createActions(Actions& actions) {
    m_calibrate = actions.addFeatureAction(
        key(), FeatureMenu::Quantize,
        {QStringLiteral("calibration.calibrate"), tr("&Calibrate…"),
         tr("Collect activation statistics over a dataset, compute scales and zero points, and "
            "measure the quantization error"),
         QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K)});
    m_exportQuantized = actions.addFeatureAction(
        key(), FeatureMenu::Export,
        {QStringLiteral("calibration.exportQuantized"), tr("&Quantized ONNX…"),
         tr("Write the calibrated QDQ model (QuantizeLinear / DequantizeLinear at every "
            "quantizer) as ONNX")});
    connect(m_calibrate, &QAction::triggered, this, &CalibrationController::showDialog);
    connect(m_exportQuantized, &QAction::triggered, this, &CalibrationController::showExportDialog);
    updateActions();
}

void CalibrationController::onDocumentChanged(GraphDocument* document) {
    if (m_document != nullptr) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    connect(document, &GraphDocument::quantizationChanged, this,
            &CalibrationController::updateActions);
    updateActions();
    if (const int64_t samples = std::exchange(m_calibrateOnOpen, 0); samples > 0) {
        CalibrationRequest request;
        request.dataset.randomSamples = samples;
        calibrate(request);
    }
}

void CalibrationController::showStatus(const QString& message) {
    m_context.window.statusBar()->showMessage(message, kStatusMessageMs);
}

void CalibrationController::updateActions() {
    if (m_calibrate == nullptr) {
        return; // before createActions()
    }
    const bool quantized = m_document != nullptr && m_document->quantization() != nullptr;
    m_calibrate->setEnabled(!m_running && quantized);
    m_exportQuantized->setEnabled(!m_exporting && quantized);
}

void CalibrationController::calibrateOnOpen(int64_t randomSamples) {
    m_calibrateOnOpen = randomSamples;
}

void CalibrationController::showDialog() {
    CalibrationDialog dialog(&m_context.window);
    dialog.setRequest(m_last);
    if (dialog.exec() == QDialog::Accepted) {
        auto request = dialog.request();
        if (request.ok()) {
            m_last = *request;
            calibrate(*request);
        }
    }
}

bool CalibrationController::calibrate(const CalibrationRequest& request) {
    GraphDocument* document = m_document.data();
    if (m_running || document == nullptr || document->quantization() == nullptr) {
        m_context.reporter.error(tr("Cannot calibrate"),
                                 m_running ? tr("A calibration is already running.")
                                           : tr("Open a model with quantizers first."));
        return false;
    }
    // The job works on copies: the user may edit the setup or close the model meanwhile, and the
    // fingerprint then shows the result as stale.
    auto model = std::make_shared<const graph::Graph>(document->graph());
    auto setup = std::make_shared<const quantization::SingleConfigQuantizerSetup>(
        document->quantization()->setup);
    m_running = true;
    updateActions();
    m_context.jobs.start<CalibrationResult>(
        tr("Calibrating %1").arg(document->fileName()),
        [model, setup, request](Progress& progress) {
            return ui::runCalibration(*model, *setup, request, progress);
        },
        [this, target = QPointer<GraphDocument>(document)](Result<CalibrationResult> result) {
            m_running = false;
            updateActions();
            if (!result.ok()) {
                const bool cancelled = result.error().code() == Errc::Cancelled;
                const QString message = QString::fromStdString(result.error().toString());
                if (cancelled) {
                    showStatus(tr("Calibration cancelled"));
                } else {
                    m_context.reporter.error(tr("Calibration failed"), message);
                }
                Q_EMIT calibrationFinished(false, message);
                return;
            }
            if (target.isNull()) {
                Q_EMIT calibrationFinished(false, tr("The model was closed"));
                return;
            }
            const QString metrics = outputMetricsText(result->report);
            storeCalibration(*target, std::move(result).value());
            showStatus(tr("Calibrated: %1").arg(metrics));
            Q_EMIT calibrationFinished(true, {});
        });
    return true;
}

void CalibrationController::showExportDialog() {
    if (m_document == nullptr) {
        return;
    }
    const QFileInfo model(m_document->filePath());
    const QString suggested =
        model.dir().filePath(model.completeBaseName() + QStringLiteral(".qdq.onnx"));
    const QString path = QFileDialog::getSaveFileName(
        &m_context.window, tr("Export Quantized ONNX"), suggested, tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportQuantized(path);
    }
}

bool CalibrationController::exportQuantized(const QString& path) {
    GraphDocument* document = m_document.data();
    const CalibrationResult* calibration =
        document == nullptr ? nullptr : freshCalibration(*document);
    if (m_exporting || calibration == nullptr || document->quantization() == nullptr) {
        const QString why =
            m_exporting           ? tr("An export is already running.")
            : document == nullptr ? tr("Open a model first.")
            : isCalibrationStale(*document)
                ? tr("The calibration is stale: the quantizer setup changed since it ran. "
                     "Recalibrate (Quantize ▸ Calibrate…) before exporting.")
                : tr("The model is not calibrated yet: run Quantize ▸ Calibrate… first, so "
                     "every quantizer has a scale and zero point.");
        m_context.reporter.error(tr("Cannot export the quantized model"), why);
        return false;
    }
    auto model = std::make_shared<const graph::Graph>(document->graph());
    auto setup = std::make_shared<const quantization::SingleConfigQuantizerSetup>(
        document->quantization()->setup);
    auto parameters =
        std::make_shared<const quantization::QuantizerParametersMap>(calibration->parameters);
    const std::filesystem::path file(QFile::encodeName(path).toStdString());
    // The calibration simulated exactly this setup and these parameters: its accuracy on labelled
    // data is the exported model's.
    QString accuracy;
    if (auto compared = report::simulationAccuracy(calibration->report);
        compared.ok() && compared->has_value()) {
        accuracy = QStringLiteral("; ") + accuracySummary(**compared, tr("quantized"));
    }
    m_exporting = true;
    updateActions();
    m_context.jobs.start<quantization::QdqExportSummary>(
        tr("Exporting %1").arg(QFileInfo(path).fileName()),
        [model, setup, parameters, file](Progress& progress) {
            progress.report(0.0, "Inserting QuantizeLinear/DequantizeLinear");
            return quantization::exportQdqModel(*model, *setup, *parameters, file);
        },
        [this, path, accuracy](Result<quantization::QdqExportSummary> written) {
            m_exporting = false;
            updateActions();
            if (!written.ok()) {
                const QString message = QString::fromStdString(written.error().toString());
                m_context.reporter.error(tr("Cannot export the quantized model"), message);
                Q_EMIT exportFinished(false, message);
                return;
            }
            showStatus(tr("Saved %1: %2 activation pair(s), %3 weight dequantizer(s), opset %4")
                           .arg(QDir::toNativeSeparators(path))
                           .arg(written->activationPairs)
                           .arg(written->weightDequantizers)
                           .arg(written->opset) +
                       accuracy);
            Q_EMIT exportFinished(true, {});
        });
    return true;
}

} // namespace qs::ui
