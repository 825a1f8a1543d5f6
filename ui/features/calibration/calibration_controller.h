// CalibrationController: the calibration feature of the main window — Quantize ▸ Calibrate… (the
// dataset dialog, then calibrate() + simulateQuantization() through the JobRunner with progress
// and cancel, the result stored in the open GraphDocument on the GUI thread as its
// CalibrationState) and File ▸ Export ▸ Quantized ONNX… (the QDQ model of the current setup and
// its calibration, written atomically; refused while uncalibrated or stale).
#pragma once

#include "ui/feature.h"
#include "ui/features/calibration/calibration.h"

#include <QPointer>

class QAction;

namespace qs::ui {

class GraphDocument;

/// Calibrate and the QDQ export for the session's document.
class CalibrationController : public Feature {
    Q_OBJECT

public:
    explicit CalibrationController(const FeatureContext& context);

    ~CalibrationController() override;

    QString key() const override;

    void createActions(Actions& actions) override;

    /// Quantize ▸ Calibrate… (enabled while a model with quantizers is open and idle).
    QAction* calibrateAction() const { return m_calibrate; }

    /// File ▸ Export ▸ Quantized ONNX… (enabled while a model with quantizers is open).
    QAction* exportQuantizedAction() const { return m_exportQuantized; }

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

    /// Calibrates the next opened model with `randomSamples` random samples (the GUI's
    /// --calibrate-random).
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

    void showStatus(const QString& message);

    FeatureContext m_context;
    QAction* m_calibrate = nullptr;
    QAction* m_exportQuantized = nullptr;
    QPointer<GraphDocument> m_document;
    CalibrationRequest m_last;
    int64_t m_calibrateOnOpen = 0;
    bool m_running = false;
    bool m_exporting = false;
};

} // namespace qs::ui
