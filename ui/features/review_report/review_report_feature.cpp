#include "ui/features/review_report/review_report_feature.h"

#include "core/session/review_source.h"
#include "ui/actions.h"
#include "ui/features/calibration/calibration_state.h"
#include "ui/features/review_report/review_report_writer.h"
#include "ui/graph_document.h"
#include "ui/graph_page.h"
#include "ui/graph_scene.h"
#include "ui/message_reporter.h"
#include "ui/session.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QMainWindow>
#include <QStatusBar>

namespace qs::ui {

ReviewReportFeature::ReviewReportFeature(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context) {
    connect(&context.session, &Session::documentChanged, this, [this](GraphDocument* document) {
        m_document = document;
        syncAction();
    });
}

QString ReviewReportFeature::key() const {
    return QStringLiteral("review_report");
}

void ReviewReportFeature::createActions(Actions& actions) {
    m_export = actions.addFeatureAction(
        key(), FeatureMenu::Export,
        {QStringLiteral("review_report.export"), tr("&Review Report…"),
         tr("Write one HTML page with the graph, bit widths, quantizers and results, for review")});
    connect(m_export, &QAction::triggered, this, &ReviewReportFeature::showExportDialog);
    syncAction();
}

void ReviewReportFeature::syncAction() {
    if (m_export != nullptr) {
        m_export->setEnabled(!m_document.isNull() && m_document->quantization() != nullptr);
    }
}

Result<report::ReviewReport> ReviewReportFeature::reportOf(const GraphDocument& document) {
    const quantization::QuantizationState* state = document.quantization();
    if (state == nullptr) {
        return Error(Errc::InvalidArgument, "the open model has no quantizers");
    }
    report::ReviewInputs inputs;
    inputs.modelPath = document.filePath().toStdString();
    inputs.source = "the GUI's document";
    inputs.settings = state->settings;
    inputs.setup = state->setup;
    inputs.proposal = &state->proposal.setup;
    inputs.finalizedFromProposal = true;
    quantization::CalibrationOutcome outcome;
    if (const CalibrationResult* calibrated = freshCalibration(document)) {
        outcome.setup = state->setup;
        outcome.parameters = calibrated->parameters;
        outcome.simulation = calibrated->report;
        outcome.dataset = calibrated->dataset.toStdString();
        outcome.samples = calibrated->report.samples;
        inputs.calibration = &outcome;
    }
    // What the document's features hold now, else what its session was opened with.
    std::map<std::string, nlohmann::json, std::less<>> sections;
    for (const auto& [key, featureState] : document.states()) {
        if (std::optional<nlohmann::json> section = featureState->sessionSection()) {
            sections.insert_or_assign(key.toStdString(), std::move(*section));
        }
    }
    for (const std::string_view key : {"hawq", "pruning", "compression"}) {
        if (!sections.contains(key)) {
            if (const nlohmann::json* saved = document.savedSection(key)) {
                sections.emplace(std::string(key), *saved);
            }
        }
    }
    QS_TRY(session::addReviewSections(inputs, sections));
    return report::buildReviewReport(document.graph(), inputs);
}

bool ReviewReportFeature::exportReport(const QString& path) {
    const auto fail = [this](const QString& why) {
        m_context.reporter.error(tr("Cannot write the review report"), why);
        return false;
    };
    if (m_document.isNull()) {
        return fail(tr("No model is open."));
    }
    Result<report::ReviewReport> review = reportOf(*m_document);
    if (!review.ok()) {
        return fail(QString::fromStdString(review.error().toString()));
    }
    review->expandedGroups = m_context.page.expandedGroupKeys(); // the page as the user sees it
    NullProgress progress;
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const Result<void> written = writeReviewReport(
        m_document->graph(), *review, m_context.page.scene()->theme(),
        {.htmlPath = path.toStdString(),
         .csvDir = {},
         .expandAll = false,
         // The page's scene as laid out, unless a layout is under way.
         .scene = m_context.page.isLayingOut() ? nullptr : m_context.page.scene()},
        progress);
    QApplication::restoreOverrideCursor();
    if (!written.ok()) {
        return fail(QString::fromStdString(written.error().toString()));
    }
    m_context.window.statusBar()->showMessage(tr("Wrote the review report %1").arg(path), 5000);
    return true;
}

void ReviewReportFeature::showExportDialog() {
    const QString path = QFileDialog::getSaveFileName(&m_context.window, tr("Export Review Report"),
                                                      {}, tr("HTML pages (*.html)"));
    if (!path.isEmpty()) {
        exportReport(path);
    }
}

} // namespace qs::ui
