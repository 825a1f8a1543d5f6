// CalibrationCommands: the calibration entries of the main window — Quantize ▸ Calibrate… (the
// dataset dialog, then calibrate() + simulateQuantization() through the JobRunner with progress
// and cancel, the result stored in the open GraphDocument on the GUI thread), View ▸ SQNR Overlay
// (the colour overlay of the graph page) and File ▸ Export ▸ Quantized ONNX… (the QDQ model of the
// current setup and its calibration, written atomically; refused while uncalibrated or stale).
// The window only creates it and adds its actions to the menus.
#pragma once

#include "ui/features/calibration/calibration.h"

#include <QObject>
#include <QPointer>

class QAction;
class QStatusBar;

namespace qs::ui {

class GraphDocument;
class GraphPage;
class JobRunner;
class MessageReporter;
class Session;
class SqnrOverlay;

/// Calibrate and the SQNR overlay for the session's document.
class CalibrationCommands : public QObject {
    Q_OBJECT

public:
    CalibrationCommands(Session& session, JobRunner& jobs, GraphPage& page,
                        MessageReporter& reporter, QStatusBar& statusBar,
                        QObject* parent = nullptr);

    ~CalibrationCommands() override;

    /// Quantize ▸ Calibrate… (enabled while a model with quantizers is open and idle).
    QAction* calibrateAction() const { return m_calibrate; }

    /// View ▸ SQNR Overlay (checkable).
    QAction* overlayAction() const { return m_overlay; }

    /// File ▸ Export ▸ Quantized ONNX… (enabled while a model with quantizers is open).
    QAction* exportQuantizedAction() const { return m_exportQuantized; }

    SqnrOverlay& overlay() const { return *m_sqnrOverlay; }

    /// Writes the QDQ model of the open document's setup and fresh calibration to `path` in the
    /// background; false (with a message) when there is no fresh calibration.
    bool exportQuantized(const QString& path);

    /// True while an export job runs.
    bool isExporting() const { return m_exporting; }

    /// Calibrates the open document with `request` in the background; false (with a message)
    /// when there is nothing to calibrate or a calibration already runs.
    bool calibrate(const CalibrationRequest& request);

    /// True while a calibration job runs.
    bool isCalibrating() const { return m_running; }

    /// Calibrates the next opened model with `randomSamples` random samples and turns the
    /// overlay on (the GUI's --calibrate-random).
    void calibrateOnOpen(int64_t randomSamples);

Q_SIGNALS:
    /// A calibration job ended: stored (`ok`) or failed / cancelled (`message` says why).
    void calibrationFinished(bool ok, const QString& message);

    /// An export job ended: written (`ok`) or failed (`message` says why).
    void exportFinished(bool ok, const QString& message);

private:
    void showDialog();

    void showExportDialog();

    void updateActions();

    void onDocumentChanged(GraphDocument* document);

    Session& m_session;
    JobRunner& m_jobs;
    MessageReporter& m_reporter;
    QStatusBar& m_statusBar;
    SqnrOverlay* m_sqnrOverlay;
    QAction* m_calibrate;
    QAction* m_overlay;
    QAction* m_exportQuantized;
    QPointer<GraphDocument> m_document;
    int64_t m_calibrateOnOpen = 0;
    bool m_running = false;
    bool m_exporting = false;
};

} // namespace qs::ui
