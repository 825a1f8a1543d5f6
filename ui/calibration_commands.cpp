#include "ui/calibration_commands.h"

#include "ui/calibration_dialog.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/job_runner.h"
#include "ui/message_reporter.h"
#include "ui/session.h"
#include "ui/sqnr_overlay.h"

#include <QAction>
#include <QStatusBar>

#include <memory>
#include <utility>

namespace qs::ui {

namespace {
constexpr int kStatusMessageMs = 8000;
} // namespace

CalibrationCommands::CalibrationCommands(Session& session, JobRunner& jobs, GraphPage& page,
                                         MessageReporter& reporter, QStatusBar& statusBar,
                                         QObject* parent)
    : QObject(parent)
    , m_session(session)
    , m_jobs(jobs)
    , m_reporter(reporter)
    , m_statusBar(statusBar)
    , m_sqnrOverlay(new SqnrOverlay(page, this))
    , m_calibrate(new QAction(tr("&Calibrate…"), this))
    , m_overlay(new QAction(tr("&SQNR Overlay"), this)) {
    m_calibrate->setStatusTip(tr("Collect activation statistics over a dataset, compute scales "
                                 "and zero points, and measure the quantization error"));
    m_calibrate->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    m_overlay->setStatusTip(
        tr("Colour quantizer badges by SQNR, from red (noisy) to green (faithful)"));
    m_overlay->setCheckable(true);
    connect(m_calibrate, &QAction::triggered, this, &CalibrationCommands::showDialog);
    connect(m_overlay, &QAction::toggled, m_sqnrOverlay, &SqnrOverlay::setEnabled);
    connect(&m_session, &Session::documentChanged, this, &CalibrationCommands::onDocumentChanged);
    updateActions();
}

CalibrationCommands::~CalibrationCommands() = default;

void CalibrationCommands::onDocumentChanged(GraphDocument* document) {
    if (m_document != nullptr) {
        disconnect(m_document, nullptr, this, nullptr);
    }
    m_document = document;
    m_sqnrOverlay->setDocument(document);
    connect(document, &GraphDocument::quantizationChanged, this,
            &CalibrationCommands::updateActions);
    updateActions();
    if (const int64_t samples = std::exchange(m_calibrateOnOpen, 0); samples > 0) {
        CalibrationRequest request;
        request.source.randomSamples = samples;
        if (calibrate(request)) {
            m_overlay->setChecked(true);
        }
    }
}

void CalibrationCommands::updateActions() {
    m_calibrate->setEnabled(!m_running && m_document != nullptr &&
                            m_document->quantization() != nullptr);
}

void CalibrationCommands::calibrateOnOpen(int64_t randomSamples) {
    m_calibrateOnOpen = randomSamples;
}

void CalibrationCommands::showDialog() {
    CalibrationDialog dialog(m_statusBar.window());
    if (dialog.exec() == QDialog::Accepted) {
        auto request = dialog.request();
        if (request.ok()) {
            calibrate(*request);
        }
    }
}

bool CalibrationCommands::calibrate(const CalibrationRequest& request) {
    GraphDocument* document = m_document.data();
    if (m_running || document == nullptr || document->quantization() == nullptr) {
        m_reporter.error(tr("Cannot calibrate"), m_running
                                                     ? tr("A calibration is already running.")
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
    m_jobs.start<CalibrationResult>(
        tr("Calibrating %1").arg(document->fileName()),
        [model, setup, request](Progress& progress) {
            return runCalibration(*model, *setup, request, progress);
        },
        [this, target = QPointer<GraphDocument>(document)](Result<CalibrationResult> result) {
            m_running = false;
            updateActions();
            if (!result.ok()) {
                const bool cancelled = result.error().code() == Errc::Cancelled;
                const QString message = QString::fromStdString(result.error().toString());
                if (cancelled) {
                    m_statusBar.showMessage(tr("Calibration cancelled"), kStatusMessageMs);
                } else {
                    m_reporter.error(tr("Calibration failed"), message);
                }
                Q_EMIT calibrationFinished(false, message);
                return;
            }
            if (target.isNull()) {
                Q_EMIT calibrationFinished(false, tr("The model was closed"));
                return;
            }
            const QString metrics = outputMetricsText(result->report);
            target->setCalibration(std::move(result).value());
            m_statusBar.showMessage(tr("Calibrated: %1").arg(metrics), kStatusMessageMs);
            Q_EMIT calibrationFinished(true, {});
        });
    return true;
}

} // namespace qs::ui
