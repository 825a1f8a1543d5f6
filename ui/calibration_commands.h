// CalibrationCommands: the calibration entries of the main window — Quantize ▸ Calibrate… (the
// dataset dialog, then calibrate() + simulateQuantization() through the JobRunner with progress
// and cancel, the result stored in the open GraphDocument on the GUI thread) and View ▸ SQNR
// Overlay (the colour overlay of the graph page). The window only creates it and adds its actions
// to the menus.
#pragma once

#include "ui/calibration.h"

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

    SqnrOverlay& overlay() const { return *m_sqnrOverlay; }

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

private:
    void showDialog();

    void updateActions();

    void onDocumentChanged(GraphDocument* document);

    Session& m_session;
    JobRunner& m_jobs;
    MessageReporter& m_reporter;
    QStatusBar& m_statusBar;
    SqnrOverlay* m_sqnrOverlay;
    QAction* m_calibrate;
    QAction* m_overlay;
    QPointer<GraphDocument> m_document;
    int64_t m_calibrateOnOpen = 0;
    bool m_running = false;
};

} // namespace qs::ui
