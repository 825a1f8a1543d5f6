#include "ui/features/fp16_export/fp16_export_feature.h"

#include "ui/actions.h"
#include "ui/features/fp16_export/fp16_export_dialog.h"
#include "ui/graph_document.h"
#include "ui/message_reporter.h"
#include "ui/model_export_job.h"
#include "ui/session.h"

#include <QAction>
#include <QFileDialog>
#include <QMainWindow>

namespace qs::ui {

Fp16ExportFeature::Fp16ExportFeature(const FeatureContext& context)
    : Feature(&context.window)
    , m_context(context)
    , m_job(new ModelExportJob(context.window, context.jobs, context.reporter, this)) {
    connect(&context.session, &Session::documentChanged, this, [this](GraphDocument* document) {
        m_document = document;
        syncActions();
    });
    connect(m_job, &ModelExportJob::runningChanged, this, &Fp16ExportFeature::syncActions);
    connect(m_job, &ModelExportJob::finished, this, &Fp16ExportFeature::exportFinished);
}

Fp16ExportFeature::~Fp16ExportFeature() = default;

QString Fp16ExportFeature::key() const {
    return QStringLiteral("fp16_export");
}

void Fp16ExportFeature::createActions(Actions& actions) {
    m_export =
        actions.addFeatureAction(key(), FeatureMenu::Export,
                                 {QStringLiteral("fp16_export.export"), tr("&FP16 ONNX…"),
                                  tr("Write the model with float16 weights and computation")});
    connect(m_export, &QAction::triggered, this, &Fp16ExportFeature::showExportDialog);
    syncActions();
}

void Fp16ExportFeature::syncActions() {
    if (m_export != nullptr) {
        m_export->setEnabled(!m_document.isNull() && !m_job->isRunning());
    }
}

void Fp16ExportFeature::exportFp16(const QString& path, const compression::Fp16Options& options) {
    if (m_document.isNull()) {
        m_context.reporter.error(tr("Cannot export"), tr("No model is open."));
        Q_EMIT exportFinished(false, path);
        return;
    }
    m_job->start(m_document->graph(), path,
                 [options](graph::Graph& graph, Progress&) -> Result<QString> {
                     QS_ASSIGN_OR_RETURN(const compression::Fp16Report report,
                                         compression::convertToFloat16(graph, options));
                     return QObject::tr("%1 initializers in float16, %2 Casts, %3 clamped")
                         .arg(report.convertedInitializers)
                         .arg(report.castsInserted)
                         .arg(report.clampedElements);
                 });
}

void Fp16ExportFeature::showExportDialog() {
    Fp16ExportDialog options(&m_context.window);
    if (options.exec() != QDialog::Accepted) {
        return;
    }
    const QString path = QFileDialog::getSaveFileName(&m_context.window, tr("Export FP16 ONNX"), {},
                                                      tr("ONNX models (*.onnx)"));
    if (!path.isEmpty()) {
        exportFp16(path, options.options());
    }
}

} // namespace qs::ui
