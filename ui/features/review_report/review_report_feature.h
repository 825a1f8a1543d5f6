// ReviewReportFeature: File ▸ Export ▸ Review Report… — writes the review report of the open
// document (core/report/review_report.h: its setup and proposal, its fresh calibration if any,
// and the HAWQ, pruning and weight-compression results it holds or was opened with) to an HTML
// file, atomically, with the scene's colours; a failure is an error dialog.
#pragma once

#include "core/report/review_report.h"
#include "ui/feature.h"

#include <QPointer>

class QAction;

namespace qs::ui {

class GraphDocument;

/// The review report export.
class ReviewReportFeature : public Feature {
    Q_OBJECT

public:
    explicit ReviewReportFeature(const FeatureContext& context);

    QString key() const override;

    void createActions(Actions& actions) override;

    /// File ▸ Export ▸ Review Report… (enabled while a model with quantizers is open).
    QAction* exportAction() const { return m_export; }

    /// The report of `document` as the export writes it.
    static Result<report::ReviewReport> reportOf(const GraphDocument& document);

    /// Writes the open document's report to `path`; false (after an error dialog) on failure.
    bool exportReport(const QString& path);

    /// Asks for a path, then exports.
    void showExportDialog();

private:
    void syncAction();

    FeatureContext m_context;
    QAction* m_export = nullptr;
    QPointer<GraphDocument> m_document;
};

} // namespace qs::ui
